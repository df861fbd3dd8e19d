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
 *
 * A hold on new runs (a paused workflow or trigger) likewise: a run started with `hold` in its input
 * by a gateway of today while a worker from before the hold ran it (that worker ignored the field
 * and ran its steps) replays on today's code as it ran, because the wait is gated by
 * `patched('operator-hold')`. The saved history with a hold written into its start input stands for
 * it. Without the guard the replay would wait before step 1 where the history schedules its first
 * activity (a nondeterminism error); that failure was not yet checked by hand. The recorded history of a held run released on
 * today's code is run-automation-operator-hold.json (replay-every-type.test.ts).
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

/** The saved history with `fields` added to the run's start input. */
async function withStartInput(fields: Json): Promise<{ workflowId: string; history: ReturnType<typeof historyFromJSON> }> {
  const json = JSON.parse(await readFile(HISTORY, 'utf8')) as { events: Json[] };
  const started = json.events[0]?.workflowExecutionStartedEventAttributes as { workflowId?: string; input: { payloads: { data: string }[] } };
  const payload = started.input.payloads[0]!;
  const input = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')) as Json;
  payload.data = Buffer.from(JSON.stringify({ ...input, ...fields })).toString('base64');
  return { workflowId: started.workflowId || 'run-automation-v1', history: historyFromJSON(json) };
}

describe('an operator\'s pause and histories from before it', () => {
  it('a run started with a hold on a worker from before holds replays as it ran: the wait is not applied without its patch marker', async () => {
    const { workflowId, history } = await withStartInput({ hold: { scope: 'workflow', by: 'admin', at: '2026-01-01T00:00:00.000Z' } });
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId);
  });

  it('a run sent a pause before the pause existed replays as it ran: the hold is not applied without its patch marker', async () => {
    const { workflowId, history } = await withSignalAfterFirstStep('operatorPauseRecorded', { paused: true, by: 'operator', reason: 'before the patch' });
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId);
  });
});
