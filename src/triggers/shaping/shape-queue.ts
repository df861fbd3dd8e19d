/**
 * The gateway's side of burst shaping (src/common/shaping.ts): the window key of a call (the
 * trigger's key expression over `{inputs, headers}`), and the call handed to the entity workflow
 * of its (trigger, key) with signal-with-start. Once Temporal has accepted the signal the event is
 * in that workflow's history: the caller may be answered 202, whatever crashes after.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import jsonata from 'jsonata';
import { startPriority } from '../../common/priority';
import {
  SHAPED_EVENT_MAX_BYTES, shapeWorkflowId, shapingKeyExpression, shapingMode, type ShapedEvent, type ShapeInput, type TriggerShaping,
} from '../../common/shaping';
import { shapeEventSignal, WORKFLOW_TYPES, type ShapeTriggerEventsWorkflow } from '../../common/workflow-contracts';
import type { TriggerRecord } from '../../registry';

/** A key expression that does not evaluate: the call is refused (422), nothing is queued. */
export class ShapeKeyError extends Error {}
/** An event larger than SHAPED_EVENT_MAX_BYTES (413). */
export class ShapedEventTooLarge extends Error {}

export interface ShapedCall {
  inputs: Record<string, unknown> | '';
  /** request headers, names in lower case */
  headers: Record<string, string>;
  /** the delivery ID or the call's Idempotency-Key; else the gateway draws one */
  eventId?: string;
}

export interface QueuedEvent {
  mode: 'debounce' | 'batch';
  key: string;
  eventId: string;
  /** the entity's workflow ID */
  entityId: string;
}

const KEY_MAX_CHARS = 200;

/** The window key of a call: '' without an expression; a string value as is, any other value as JSON. */
export async function shapeKey(expression: string | undefined, call: Pick<ShapedCall, 'inputs' | 'headers'>): Promise<string> {
  if (expression === undefined) return '';
  let value: unknown;
  try {
    value = await jsonata(expression, { timeout: 500, stack: 100 }).evaluate({ inputs: call.inputs, headers: call.headers });
  } catch (err) {
    throw new ShapeKeyError(`the trigger's key expression does not evaluate: ${err instanceof Error ? err.message : String(err)}`);
  }
  const text = value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  return text.slice(0, KEY_MAX_CHARS);
}

export class ShapeQueue {
  constructor(private readonly deps: { temporal: Client; taskQueue: string }) {}

  /** Hands the call to its window; resolves once Temporal has it. */
  async enqueue(trigger: TriggerRecord, shaping: TriggerShaping, call: ShapedCall): Promise<QueuedEvent> {
    const key = await shapeKey(shapingKeyExpression(shaping), call);
    const event: ShapedEvent = { id: call.eventId ?? randomUUID(), receivedAt: new Date().toISOString(), inputs: call.inputs };
    if (JSON.stringify(event).length > SHAPED_EVENT_MAX_BYTES) {
      throw new ShapedEventTooLarge(`a call to a debounced or batched trigger carries at most ${SHAPED_EVENT_MAX_BYTES} bytes of inputs (as JSON)`);
    }
    // the task queue is part of the digest: instances sharing a namespace keep their own entities
    const digest = createHash('sha256').update(`${this.deps.taskQueue}\n${key}`).digest('hex').slice(0, 40);
    const entityId = shapeWorkflowId(trigger.id, digest);
    const input: ShapeInput = { orgId: trigger.orgId, triggerId: trigger.id, key, shaping };
    await this.deps.temporal.workflow.signalWithStart<ShapeTriggerEventsWorkflow, [ShapedEvent]>(WORKFLOW_TYPES.shapeTriggerEvents, {
      workflowId: entityId,
      taskQueue: this.deps.taskQueue,
      args: [input],
      signal: shapeEventSignal,
      signalArgs: [event],
      // the organization as fairness key, as its runs have
      priority: startPriority(trigger.orgId, trigger.priority),
      staticSummary: `${shapingMode(shaping)} of trigger ${trigger.id}${key ? ` (key ${key.slice(0, 60)})` : ''}`,
    });
    return { mode: shapingMode(shaping), key, eventId: event.id, entityId };
  }
}
