import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import { writeFile } from 'node:fs/promises';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { ENGINE_LEVEL, type RunInput } from '../../src/common/run-types';
import { workflowBundle } from '../../temporal/worker';
import { recordHistoryPath } from '../support/ci';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { clearHistory } from '../support/histories';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { EventType } = temporal.api.enums.v1;

const eventNames = (events: HistoryEvent[]): string[] => events.map((e) => EventType[e.eventType ?? 0] ?? String(e.eventType));

function startedInput(events: HistoryEvent[]): RunInput {
  const payload = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  assert.ok(payload, 'the history starts with the run input');
  return defaultPayloadConverter.fromPayload<RunInput>(payload);
}

/**
 * Runs carry the workflow code level their starter knew (RunInput.engine), so the revisions up to
 * it apply without patch markers: no marker event and no TemporalChangeVersion upsert (one more
 * history event and visibility write per run). Runs without a level still take patched().
 */
describe('engine level: revisions without patch markers', () => {
  let fg: TestFlowgate;

  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  it('a new run records no patch marker and no search attribute upsert, runs its template step locally, and replays', async () => {
    const published = await publishWorkflow(fg, { name: 'engine-level', timeoutSeconds: 600, steps: [{ name: 'Hello', type: 'template', template: 'Hello {{inputs.name}}' }] });
    const response = await trigger(fg, published, { name: 'level' }, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200, await response.clone().text());
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.ok(runId);
    const handle = fg.client.workflow.getHandle(runId);
    const history = await clearHistory(fg, handle);
    const events = history.events ?? [];
    const names = eventNames(events);

    assert.equal(startedInput(events).engine, ENGINE_LEVEL);
    const markers = events.map((e) => e.markerRecordedEventAttributes?.markerName).filter((m) => m !== undefined);
    assert.deepEqual(markers, ['core_local_activity'], names.join(' '));
    assert.ok(!names.includes('EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES'), names.join(' '));
    // level 2: the template step ran as a local activity, so the run took one workflow task (its
    // time-limit timer was started and cancelled within it, so neither reached the server)
    assert.equal(names.filter((n) => n === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED').length, 1, names.join(' '));
    assert.ok(!names.includes('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED'), names.join(' '));
    const described = await handle.describe();
    assert.equal(described.searchAttributes.TemporalChangeVersion, undefined);

    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, runId);
    // FLOWGATE_RECORD_HISTORY=<file>: keep it (committed as histories/run-automation-engine-<level>.json)
    const recordTo = recordHistoryPath();
    if (recordTo) await writeFile(recordTo, `${historyToJSON(history)}\n`, { flag: 'wx' });
  });

  it('a run without a level (started before levels existed) still asks patched() and replays', async () => {
    const published = await publishWorkflow(fg, { name: 'engine-none', timeoutSeconds: 600, steps: [{ name: 'Hello', type: 'template', template: 'Hello {{inputs.name}}' }] });
    const response = await trigger(fg, published, { name: 'old' }, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200, await response.clone().text());
    const template = startedInput((await clearHistory(fg, response.headers.get('X-Pf-Run-Id') ?? '')).events ?? []);

    const { engine: _level, ...withoutLevel } = template;
    const oldRunId = randomUUID();
    const summary = await fg.client.workflow.execute('runAutomation', {
      workflowId: oldRunId, taskQueue: fg.taskQueue, args: [{ ...withoutLevel, runId: oldRunId }],
    }) as { status: string };
    assert.equal(summary.status, 'COMPLETE');

    const history = await clearHistory(fg, oldRunId);
    const events = history.events ?? [];
    const markers = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch');
    assert.ok(markers.length >= 1, `a patch marker: ${eventNames(events).join(' ')}`);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, oldRunId);
  });
});
