/**
 * Burst shaping of a trigger's calls (issue 51): `debounce` and `batch`. The shapes the gateway,
 * the entity workflow (workflows/shape-trigger-events.ts) and its activity share. Pure: workflow
 * code imports it.
 *
 * One entity workflow per (trigger, key), workflow ID `shape:<triggerId>:<key digest>`, is fed by
 * signal-with-start: a call answered 202 is in that workflow's history before the answer, so no
 * crash loses it. The workflow starts the trigger's run with the collected events in arrival order
 * (ShapedRunInputs) through the same trigger service as a call, so the trigger's concurrency
 * limit, the organization's limit and its fairness key apply to that run as to any other.
 */

/** Debounce: a run once no event came for `quietSeconds`, or `maxWaitSeconds` after the window's first event. */
export interface DebounceConfig {
  /** a JSONata expression over `{inputs, headers}`; each value is a window of its own. Unset: one window per trigger */
  key?: string;
  quietSeconds: number;
  maxWaitSeconds: number;
  /** `all`: the run gets every event of the window; `last`: only the newest */
  collect: 'all' | 'last';
}

/** Batch: a run per `size` events, or `maxWaitSeconds` after the batch's first event with fewer. */
export interface BatchConfig {
  key?: string;
  size: number;
  maxWaitSeconds: number;
}

/** A trigger's shaping: at most one of the two. */
export type TriggerShaping = { debounce: DebounceConfig } | { batch: BatchConfig };

/** One call, as the entity workflow keeps it and the run receives it. */
export interface ShapedEvent {
  /** the provider's delivery ID, else the call's Idempotency-Key, else one the gateway drew: a repeat within a window counts once */
  id: string;
  /** when the gateway accepted it (ISO 8601) */
  receivedAt: string;
  /** the call's inputs as an unshaped run would have received them ('' when it had none) */
  inputs: Record<string, unknown> | '';
}

/** The input of a run a shaped trigger starts: the events in the order they arrived. */
export interface ShapedRunInputs {
  events: ShapedEvent[];
  shaping: { mode: 'debounce' | 'batch'; key: string; count: number };
}

/** The entity workflow's input (and its continue-as-new state). */
export interface ShapeInput {
  orgId: string;
  triggerId: string;
  /** the value of the key expression ('' without one) */
  key: string;
  shaping: TriggerShaping;
  /** events carried over a continue-as-new, oldest first */
  pending?: ShapedEvent[];
  /** runs started by earlier executions of this entity (numbers the next run's idempotency key) */
  started?: number;
}

/** The `shapeEvent` signal: one call for the window. */
export type ShapeSignal = ShapedEvent;

/** Query `shapeState`: what the entity holds now. */
export interface ShapeState {
  pending: number;
  started: number;
  /** the last runs started (their run IDs), newest last, at most 20 */
  runs: string[];
  /** the last refusals of a collected run (the trigger was disabled, deleted, or its input schema refuses the events) */
  refused: string[];
}

/** Inputs of one event larger than this (as JSON) are refused on a shaped trigger: a window's events travel in Temporal payloads. */
export const SHAPED_EVENT_MAX_BYTES = 64 * 1024;
/** A window holding this many bytes of events starts its run before its time (the run's input stays under Temporal's payload limit). */
export const SHAPED_WINDOW_MAX_BYTES = 1024 * 1024;
/** A debounce window collecting `all` holds at most this many events; the next one opens a new window. */
export const SHAPED_WINDOW_MAX_EVENTS = 1000;

/** The workflow ID of the entity of trigger `triggerId` and key digest `keyDigest`. */
export function shapeWorkflowId(triggerId: string, keyDigest: string): string {
  return `shape:${triggerId}:${keyDigest}`;
}

export function shapingMode(shaping: TriggerShaping): 'debounce' | 'batch' {
  return 'debounce' in shaping ? 'debounce' : 'batch';
}

export function shapingKeyExpression(shaping: TriggerShaping): string | undefined {
  return 'debounce' in shaping ? shaping.debounce.key : shaping.batch.key;
}

/** The size a shaped event counts for against SHAPED_WINDOW_MAX_BYTES. */
export function shapedEventBytes(event: ShapedEvent): number {
  return JSON.stringify(event).length;
}

/**
 * When the current window closes (ms since the epoch, workflow time), given when its first and
 * its last event arrived; `full` when it must close now.
 */
export function windowDeadline(shaping: TriggerShaping, firstAt: number, lastAt: number, count: number): number | 'full' {
  if ('batch' in shaping) {
    if (count >= shaping.batch.size) return 'full';
    return firstAt + shaping.batch.maxWaitSeconds * 1000;
  }
  const { quietSeconds, maxWaitSeconds } = shaping.debounce;
  return Math.min(lastAt + quietSeconds * 1000, firstAt + maxWaitSeconds * 1000);
}
