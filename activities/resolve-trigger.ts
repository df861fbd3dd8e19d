/**
 * The resolveTrigger activity: turns a `trigger` step into the input of the chained run — the
 * trigger must belong to the run's organization, its workflow must be published, the inputs must
 * fit its input schema, and the chain must not be deeper than configured. Large inputs travel by
 * reference, as for a trigger call. A refusal is a value (the step fails with the reason).
 */
import { Context } from '@temporalio/activity';
import type { BlobStore } from '../src/blob-store';
import type { RunInput } from '../src/common/run-types';
import type { Registry } from '../src/registry';
import { checkInputs } from '../src/runs/input-schema';
import { inputsForRun, runInputFor } from '../src/runs/run-input';

export interface ResolveTriggerRequest {
  orgId: string;
  triggerId: string;
  inputs: Record<string, unknown>;
  parentRunId: string;
  /** the depth the chained run would have */
  chainDepth: number;
  startedBy: string;
}

export type ResolveTriggerResult = { ok: true; input: Omit<RunInput, 'runId'> } | { ok: false; error: string };

export function createResolveTrigger(deps: { registry: Registry; blobs: BlobStore; maxChainDepth: number }) {
  return async function resolveTrigger(request: ResolveTriggerRequest): Promise<ResolveTriggerResult> {
    if (request.chainDepth > deps.maxChainDepth) {
      return { ok: false, error: `the chain of triggered runs would be ${request.chainDepth} deep; the limit is ${deps.maxChainDepth} (FLOWGATE_MAX_CHAIN_DEPTH): is there a cycle?` };
    }
    const trigger = await deps.registry.triggers.get(request.triggerId);
    // Another organization's trigger is reported exactly like a missing one.
    if (!trigger || trigger.orgId !== request.orgId) return { ok: false, error: `no trigger ${request.triggerId} in this organization` };
    const version = await deps.registry.workflows.getLatestVersion(trigger.workflowId);
    if (!version) return { ok: false, error: `the workflow of trigger ${request.triggerId} has no published version` };
    const problem = checkInputs({ cacheKey: `${version.workflowId}@${version.version}`, schema: version.definition.inputSchema, coerce: false }, request.inputs);
    if (problem) return { ok: false, error: `trigger ${request.triggerId}: ${problem.message}` };
    // The parent's run ID and this activity's ID name the blob, so a retry overwrites its own.
    const { inputs } = await inputsForRun(deps.blobs, request.orgId, request.inputs, `chain-${request.parentRunId}-${Context.current().info.activityId}`);
    return {
      ok: true,
      input: runInputFor({
        orgId: request.orgId, version, triggerId: trigger.id, startedBy: request.startedBy, inputs,
        parentRunId: request.parentRunId, chainDepth: request.chainDepth,
      }),
    };
  };
}
