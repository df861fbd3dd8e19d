import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../temporal/worker';
import { recordHistoryPath } from '../support/ci';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { startFakeSearch, type FakeSearch } from '../tools/support';
import { clearHistory } from '../support/histories';

type History = temporal.api.history.v1.IHistory;

/** The summaries of a history's activities, timers and child workflows, in order. */
function summaries(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const payload = e.userMetadata?.summary;
    if (!payload) return [];
    return [defaultPayloadConverter.fromPayload<string>(payload)];
  });
}

/** The run's current details, as the Web UI reads them (the SDK's built-in metadata query). */
async function currentDetails(fg: TestFlowgate, workflowId: string): Promise<string> {
  const metadata = await fg.client.workflow.getHandle(workflowId).query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return metadata.currentDetails ?? '';
}

/**
 * Level 6: what the Temporal Web UI shows of a run. The run's workflow carries a summary (name,
 * version, what started it) and details; each activity, timer and child workflow a summary
 * naming its step; a paused run's current details say what it waits for.
 */
describe('runs as the Temporal Web UI shows them (user metadata, engine level 6)', () => {
  let fg: TestFlowgate;
  let llm: FakeLlm;
  let search: FakeSearch;

  before(async () => {
    llm = await startFakeLlm();
    search = await startFakeSearch();
    fg = await startTestFlowgate({ FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model', FLOWGATE_SEARCH_URL: search.url });
  });
  after(async () => {
    await fg?.stop();
    await llm?.close();
    await search?.close();
  });

  it('labels the run, its steps (nested ones too), its timers, its agent step\'s child workflow and what a pause waits for', async function () {
    this.timeout(120_000);
    const agent = await fg.admin<{ id: string }>('POST', '/api/v1/agents', {
      name: 'summariser', instructions: 'Search, then summarise.', servers: [{ name: 'web-search', allTools: true }],
    });
    assert.equal(agent.status, 201);
    llm.script.push(
      { toolCalls: [{ name: 'web-search_search', arguments: { query: 'durable execution' } }] },
      { content: 'Durable execution survives crashes.' },
    );
    const p = await publishWorkflow(fg, {
      name: 'ui-metadata', timeoutSeconds: 3600,
      steps: [
        { name: 'Shout', type: 'code', source: 'return inputs.name.toUpperCase()' },
        { name: 'Each', type: 'forEach', items: 'inputs.items', steps: [
          { name: 'Pause', type: 'delay', duration: '100ms' },
          { name: 'Double', type: 'code', source: 'return item * 2' },
        ] },
        { name: 'Sign-off', type: 'approval', approvers: ['ops@example.com'], message: 'Ship {{inputs.name}}?', timeout: '10m' },
        { name: 'Ask', type: 'agent', agentId: agent.body.id, message: 'Summarise {{inputs.name}}' },
      ],
    });
    const runId = (await trigger(fg, p, { name: 'flowgate', items: [1, 2] })).headers.get('X-Pf-Run-Id') ?? '';
    assert.ok(runId);
    const handle = fg.client.workflow.getHandle(runId);

    const described = await handle.describe();
    assert.equal(await described.staticSummary(), `ui-metadata v1 · trigger ${p.triggerId}`);
    const details = await described.staticDetails() ?? '';
    assert.match(details, /\*\*ui-metadata\*\* version 1/);
    assert.match(details, /time limit 1h/);
    assert.match(details, /^- 3 · Sign-off \(approval\)$/m);

    await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED' && (s as { waitingOn?: { kind: string } }).waitingOn?.kind === 'approval', 60_000);
    assert.match(await currentDetails(fg, runId), /^Paused: step 3 · Sign-off waits for approval by ops@example\.com \(0 of 1 approvals\) until \S+: Ship flowgate\?$/);
    const decided = await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/approval`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'approve', approver: 'ops@example.com' }),
    });
    assert.equal(decided.status, 200, await decided.text());
    const final = await pollStatus(fg, p, runId, undefined, 60_000);
    assert.equal(final.status, 'COMPLETE', JSON.stringify(final));
    assert.equal(await currentDetails(fg, runId), '', 'no longer waiting');

    const history = await clearHistory(fg, handle);
    const labels = summaries(history);
    assert.equal(labels[0], `ui-metadata v1 · trigger ${p.triggerId}`, 'the started event carries the run\'s summary');
    for (const expected of [
      'time limit 1h',
      '1 · Shout (code)',
      '2.1.1 · Pause: delay 100ms', '2.1.1 · Pause: record', '2.1.2 · Double (code)', '2.2.1 · Pause: delay 100ms', '2.2.2 · Double (code)', '2 · Each: record',
      '3 · Sign-off: approval by ops@example.com (1 needed) within 10m', '3 · Sign-off: record',
      `agent ${agent.body.id} · 4 · Ask (agent) of run ${runId}`, '4 · Ask: record',
    ]) assert.ok(labels.includes(expected), `${expected} in ${JSON.stringify(labels)}`);

    const child = fg.client.workflow.getHandle(`${runId}-agent-4`);
    const childDescribed = await child.describe();
    assert.equal(await childDescribed.staticSummary(), `agent ${agent.body.id} · 4 · Ask (agent) of run ${runId}`);
    // the agent's message (rendered from the run's inputs) stays out of the metadata the Web UI shows to every operator
    const childDetails = await childDescribed.staticDetails() ?? '';
    assert.match(childDetails, /^Agent \*\*/);
    assert.doesNotMatch(childDetails, /Summarise flowgate/);
    assert.deepEqual(summaries(await clearHistory(fg, child)), [
      `agent ${agent.body.id} · 4 · Ask (agent) of run ${runId}`,
      `agent ${agent.body.id}: prepare`,
      'agent summariser: model call 1',
      'agent summariser: turn 1 tool web-search_search (web-search/search)',
      'agent summariser: model call 2',
      'agent summariser: save the answer',
    ]);

    const bundle = await workflowBundle();
    await Worker.runReplayHistory({ workflowBundle: bundle }, history, runId);
    await Worker.runReplayHistory({ workflowBundle: bundle }, await clearHistory(fg, child), `${runId}-agent-4`);
    // FLOWGATE_RECORD_HISTORY=<file>: keep the run (committed as histories/run-automation-ui-metadata-engine-6.json)
    const recordTo = recordHistoryPath();
    if (recordTo) await writeFile(recordTo, `${historyToJSON(history)}\n`, { flag: 'wx' });
  });
});
