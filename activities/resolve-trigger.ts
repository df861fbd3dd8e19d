/**
 * The resolveTrigger activity: turns a `trigger` step into the input of the chained run through
 * the same TriggerService as a trigger call (the trigger must belong to the run's organization,
 * its workflow must be published, the inputs must fit its input schema; large inputs travel by
 * reference), after checking the chain is not deeper than configured. The run itself is started
 * by the workflow as a child. A refusal is a value (the step fails with the reason).
 */
import { Context } from '@temporalio/activity';
import type { RunInput } from '../src/common/run-types';
import type { TriggerRefusal, TriggerResolution } from '../src/runs/trigger-types';

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

/** A refusal as the failed step reports it. */
function stepError(triggerId: string, refusal: TriggerRefusal): string {
  switch (refusal.code) {
    case 'UNKNOWN_TRIGGER': return `no trigger ${triggerId} in this organization`;
    case 'NOT_PUBLISHED':
    case 'DISABLED': return refusal.message;
    case 'INVALID_INPUTS':
    case 'INVALID_INPUT_SCHEMA': return `trigger ${triggerId}: ${refusal.message}`;
  }
}

export function createResolveTrigger(deps: { triggers: TriggerResolution; maxChainDepth: number }) {
  const service = deps.triggers;
  return async function resolveTrigger(request: ResolveTriggerRequest): Promise<ResolveTriggerResult> {
    if (request.chainDepth > deps.maxChainDepth) {
      return { ok: false, error: `the chain of triggered runs would be ${request.chainDepth} deep; the limit is ${deps.maxChainDepth} (FLOWGATE_MAX_CHAIN_DEPTH): is there a cycle?` };
    }
    const target = await service.resolve(request.orgId, request.triggerId);
    if (!target.ok) return { ok: false, error: stepError(request.triggerId, target) };
    const run = await service.prepare(target, {
      inputs: request.inputs, coerce: false, startedBy: request.startedBy,
      // The parent's run ID and this activity's ID name the blob, so a retry overwrites its own.
      inputsBlobName: `chain-${request.parentRunId}-${Context.current().info.activityId}`,
      chain: { parentRunId: request.parentRunId, chainDepth: request.chainDepth },
    });
    if (!run.ok) return { ok: false, error: stepError(request.triggerId, run) };
    return { ok: true, input: run.input };
  };
}
