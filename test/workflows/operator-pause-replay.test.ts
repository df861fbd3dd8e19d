/**
 * An operator's pause is deterministic for existing histories (issue 54; workflows/run/operator-pause.ts).
 * A run that ran before the pause existed and was sent a pause signal meanwhile (it had no handler
 * for it then, so it went on) must replay on today's code as it ran: today's handler takes the
 * signal on replay, and the hold at the next step boundary is gated by `patched('operator-pause')`,
 * which answers false for a history without its marker. The history is a saved one (three activity
 * steps, before engine levels) with the signal written in after its first step, event IDs renumbered
 * as Temporal would have numbered them. The other direction (a run paused and unpaused on today's
 * code replays) is the recorded history run-automation-operator-pause.json, replayed with every
 * saved history (replay-every-type.test.ts). Not vacuous: with the `patched()` guard removed from
 * the hold, this replay fails with "Nondeterminism error: No command scheduled for event
 * ActivityTaskScheduled" (checked by hand when the pause was written).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../temporal/worker';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const HISTORY = path.join(ROOT, 'test', 'workflows', 'histories', 'run-automation-v1.json');

type Json = Record<string, unknown>;

/** Every `eventId` and `…EventId` at or after `from` one higher, in place (an event is inserted at `from`). */
function shiftEventIds(node: unknown, from: number): void {
  if (Array.isArray(node)) {
    for (const item of node) shiftEventIds(item, from);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const object = node as Json;
  for (const [key, value] of Object.entries(object)) {
    if ((key === 'eventId' || key.endsWith('EventId')) && typeof value === 'string' && /^\d+$/.test(value) && Number(value) >= from) {
      object[key] = String(Number(value) + 1);
    } else {
      shiftEventIds(value, from);
    }
  }
}

/** The saved history with a `signalName` signal carrying `payload` inserted right after its first completed activity. */
async function withSignalAfterFirstStep(signalName: string, payload: unknown): Promise<{ workflowId: string; history: ReturnType<typeof historyFromJSON> }> {
  const json = JSON.parse(await readFile(HISTORY, 'utf8')) as { events: Json[] };
  const at = json.events.findIndex((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED');
  assert.ok(at > 0, 'the saved history has a completed activity');
  const after = json.events[at]!;
  const eventId = Number(after.eventId) + 1;
  shiftEventIds(json.events, eventId);
  json.events.splice(at + 1, 0, {
    eventId: String(eventId), eventTime: after.eventTime, eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED', taskId: after.taskId,
    workflowExecutionSignaledEventAttributes: {
      signalName,
      input: { payloads: [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from(JSON.stringify(payload)).toString('base64') }] },
      identity: 'operator',
    },
  });
  const started = json.events[0]?.workflowExecutionStartedEventAttributes as Json | undefined;
  const workflowId = typeof started?.workflowId === 'string' && started.workflowId !== '' ? started.workflowId : 'run-automation-v1';
  return { workflowId, history: historyFromJSON(json) };
}

describe('an operator\'s pause and histories from before it', () => {
  it('a run sent a pause before the pause existed replays as it ran: the hold is not applied without its patch marker', async () => {
    const { workflowId, history } = await withSignalAfterFirstStep('operatorPauseRecorded', { paused: true, by: 'operator', reason: 'before the patch' });
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId);
  });
});
