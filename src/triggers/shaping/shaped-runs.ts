/**
 * Starting the run of a closed window of a debounced or batched trigger (the startShapedRun
 * activity, called by workflows/shape-trigger-events.ts): through the same TriggerService as a
 * trigger call, so the run is pinned to the latest published version, its inputs are checked
 * against the input schema, large inputs travel by reference, and the trigger's and the
 * organization's concurrency limits and fairness key apply. The idempotency key the entity
 * derives makes a retried activity find its run instead of starting another. A refusal (the
 * trigger disabled or deleted since, its inputs refused by a newer version's schema) is a value
 * and is kept with the trigger's deliveries; a failure to reach Temporal throws, and the activity
 * is retried until the run is started.
 */
import { createHash } from 'node:crypto';
import type { ShapedEvent, ShapedRunInputs } from '../../common/shaping';
import type { Logger } from '../../observability/logger';
import type { Registry } from '../../registry';
import type { RunStarts, TriggerService } from '../../runs/trigger-service';

export interface StartShapedRunRequest {
  orgId: string;
  triggerId: string;
  key: string;
  mode: 'debounce' | 'batch';
  events: ShapedEvent[];
  idempotencyKey: string;
}

export type StartShapedRunResult = { ok: true; runId: string } | { ok: false; error: string };

/** What the activity needs: the worker's side of shaped runs. */
export interface ShapedRunStarter {
  start(request: StartShapedRunRequest): Promise<StartShapedRunResult>;
}

/** Who a shaped run is attributed to (no API key started it). */
export function shapedStarter(triggerId: string): string {
  return `shaped:${triggerId}`;
}

export class ShapedRuns implements ShapedRunStarter {
  constructor(private readonly deps: { triggers: TriggerService; runs: RunStarts; registry: Registry; log: Pick<Logger, 'warn'> }) {}

  async start(request: StartShapedRunRequest): Promise<StartShapedRunResult> {
    const { triggers, runs } = this.deps;
    const target = await triggers.resolve(request.orgId, request.triggerId);
    if (!target.ok) return this.refused(request, target.message);
    const inputs: ShapedRunInputs = { events: request.events, shaping: { mode: request.mode, key: request.key, count: request.events.length } };
    const run = await triggers.prepare(target, {
      inputs: { ...inputs }, coerce: false, startedBy: shapedStarter(request.triggerId),
      // named by the window, so that a retried activity overwrites its own stored inputs
      inputsBlobName: `shaped-${createHash('sha256').update(request.idempotencyKey).digest('hex').slice(0, 32)}`,
    });
    if (!run.ok) return this.refused(request, run.message);
    const started = await triggers.start(runs, run, request.idempotencyKey);
    await this.record(request, { outcome: 'verified', reason: `started a run of ${request.events.length} event(s)`, runId: started.runId });
    return { ok: true, runId: started.runId };
  }

  private async refused(request: StartShapedRunRequest, message: string): Promise<StartShapedRunResult> {
    const error = `the run of ${request.events.length} collected event(s) was refused: ${message}`;
    await this.record(request, { outcome: 'refused', reason: error });
    return { ok: false, error };
  }

  /** Kept for the console; a failure to write it is logged (the window's outcome stands). */
  private async record(request: StartShapedRunRequest, delivery: { outcome: 'verified' | 'refused'; reason: string; runId?: string }): Promise<void> {
    await this.deps.registry.triggerWebhooks.recordDelivery(request.orgId, request.triggerId, delivery).catch((error: unknown) => {
      // a trigger deleted since has no deliveries to keep
      this.deps.log.warn('could not record a shaped run\'s outcome with its trigger\'s deliveries', { triggerId: request.triggerId, error });
    });
  }
}
