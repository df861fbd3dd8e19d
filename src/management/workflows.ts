/**
 * Workflow administration, the one sequence behind the management API and the console
 * (docs/console.md "Workflows"): checking a definition, creating a workflow, saving its draft,
 * publishing it (the schedules of its triggers then start the new version) and deleting it with
 * its triggers and their schedules. Runs already started go on.
 */
import type { z } from 'zod';
import { BUILT_IN_STEP_KINDS, WorkflowDefinitionSchema } from '../../activities/steps';
import { definitionSchemas, type DefinitionStepKind, type WorkflowDefinition } from '../common/definition';
import { jsonDepthExceeds, tooDeepMessage } from '../common/json-depth';
import type { Logger } from '../observability/logger';
import { RegistryError, type Registry, type WorkflowRecord, type WorkflowVersion } from '../registry';
import { inputSchemaProblem } from '../runs/input-schema';
import type { ScheduleService } from '../schedules/schedule-service';
import { done, refused, type DefinitionIssue, type Outcome } from './outcome';

export interface WorkflowAdminDeps {
  registry: Registry;
  schedules: ScheduleService;
  log: Pick<Logger, 'warn'>;
  /** step kinds besides the built-ins, which definitions may use (startFlowgate's `stepKinds`) */
  stepKinds?: readonly DefinitionStepKind[];
}

/** The definition schema: the step kinds registered at start are accepted beside the built-in ones. */
export function definitionSchemaOf(deps: { stepKinds?: readonly DefinitionStepKind[] }): z.ZodType<WorkflowDefinition> {
  return deps.stepKinds?.length ? definitionSchemas(BUILT_IN_STEP_KINDS, deps.stepKinds).WorkflowDefinitionSchema : WorkflowDefinitionSchema;
}

/** A definition checked as the API checks it (its schema, its depth, a usable inputSchema), with every problem and its path. */
export function checkDefinition(schema: z.ZodType<WorkflowDefinition>, value: unknown): { ok: true; definition: WorkflowDefinition } | { ok: false; issues: DefinitionIssue[] } {
  const checked = definitionIssues(schema, value);
  return 'issues' in checked ? { ok: false, issues: checked.issues } : { ok: true, definition: checked.definition };
}

export class WorkflowAdmin {
  /** The definition schema: the step kinds registered at start are accepted beside the built-in ones. */
  readonly definitionSchema: z.ZodType<WorkflowDefinition>;

  constructor(private readonly deps: WorkflowAdminDeps) {
    this.definitionSchema = definitionSchemaOf(deps);
  }

  /**
   * A workflow definition, with an `inputSchema` that compiles (so a trigger never meets a broken
   * one); else INVALID_DEFINITION with each problem and its path (`steps.2.url: …; …`).
   */
  check(value: unknown): Outcome<WorkflowDefinition> {
    const issues = definitionIssues(this.definitionSchema, value);
    if ('issues' in issues) {
      return refused('INVALID_DEFINITION', issues.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '), issues.issues);
    }
    return done(issues.definition);
  }

  /** The organization's workflow. */
  async get(orgId: string, workflowId: string): Promise<Outcome<WorkflowRecord>> {
    const workflow = await this.deps.registry.workflows.get(orgId, workflowId);
    return workflow ? done(workflow) : unknownWorkflow(workflowId);
  }

  async create(orgId: string, value: unknown): Promise<Outcome<WorkflowRecord>> {
    const checked = this.check(value);
    if (!checked.ok) return checked;
    return done(await this.deps.registry.workflows.create(orgId, checked.value));
  }

  async updateDraft(orgId: string, workflowId: string, value: unknown): Promise<Outcome<WorkflowRecord>> {
    const checked = this.check(value);
    if (!checked.ok) return checked;
    const workflow = await this.deps.registry.workflows.updateDraft(orgId, workflowId, checked.value);
    return workflow ? done(workflow) : unknownWorkflow(workflowId);
  }

  /** The new version (`sourceCommit`: applied from that commit, definitions/); the schedules of the workflow's triggers are brought to start it (a failure there is retried by the reconciler). */
  async publish(orgId: string, workflowId: string, sourceCommit?: string): Promise<Outcome<WorkflowVersion>> {
    let version: WorkflowVersion | undefined;
    try {
      version = await this.deps.registry.workflows.publish(orgId, workflowId, sourceCommit);
    } catch (err) {
      // a racing publish won
      if (err instanceof RegistryError && err.code === 'CONFLICT') return refused('PUBLISH_CONFLICT', err.message);
      throw err;
    }
    if (!version) return unknownWorkflow(workflowId);
    await this.deps.schedules.convergeWorkflow(orgId, version.workflowId);
    return done(version);
  }

  /** Deletes the workflow with its versions and triggers, and the Temporal schedules of those triggers. */
  async delete(orgId: string, workflowId: string): Promise<Outcome<void>> {
    const scheduled = await this.deps.registry.schedules.list(orgId, workflowId);
    if (!(await this.deps.registry.workflows.delete(orgId, workflowId))) return unknownWorkflow(workflowId);
    for (const schedule of scheduled) await this.deps.schedules.deleteLogged(schedule.triggerId);
    return done(undefined);
  }
}

function unknownWorkflow(workflowId: string) {
  return refused('UNKNOWN_WORKFLOW', `no workflow ${workflowId}`);
}

function definitionIssues(schema: z.ZodType<WorkflowDefinition>, value: unknown): { definition: WorkflowDefinition } | { issues: DefinitionIssue[] } {
  if (jsonDepthExceeds(value)) return { issues: [{ path: [], message: tooDeepMessage() }] };
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) return { issues: parsed.error.issues.map((i) => ({ path: i.path.filter((p) => typeof p !== 'symbol'), message: i.message })) };
  const problem = inputSchemaProblem(parsed.data.inputSchema);
  if (problem) return { issues: [{ path: ['inputSchema'], message: `not a usable JSON Schema: ${problem}` }] };
  return { definition: parsed.data };
}
