/**
 * Publishing a workflow's draft, the one sequence behind the management API's publish and the
 * console's: the registry writes the new version, then the trigger schedules of the workflow are
 * brought to start it (a failure there is retried by the reconciler).
 */
import type { Registry, WorkflowVersion } from '../registry';
import type { ScheduleService } from '../schedules/schedule-service';

export class WorkflowPublishing {
  constructor(private readonly deps: { registry: Registry; schedules: ScheduleService }) {}

  /** The new version; undefined for a workflow the organization does not have. Throws the registry's CONFLICT when a racing publish won. */
  async publish(orgId: string, workflowId: string): Promise<WorkflowVersion | undefined> {
    const version = await this.deps.registry.workflows.publish(orgId, workflowId);
    if (version) await this.deps.schedules.convergeWorkflow(orgId, version.workflowId);
    return version;
  }
}
