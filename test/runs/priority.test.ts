/**
 * Fairness keys and priorities on what flowgate starts (src/common/priority.ts): a run carries its
 * organization as Temporal's fairness key and its trigger's priority; a chained run its own
 * trigger's priority, or its parent's when that sets none; an agent invocation its agent's. Read
 * back from Temporal (describe), the same place the matching service reads them.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import type { Priority } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../temporal/worker';
import { recordHistoryPath } from '../support/ci';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';

const ORG = 'org_default';

async function priorityOf(fg: TestFlowgate, workflowId: string): Promise<Priority> {
  const { priority } = await fg.client.workflow.getHandle(workflowId).describe();
  return { fairnessKey: priority?.fairnessKey || undefined, priorityKey: priority?.priorityKey || undefined };
}

describe('fairness keys and priorities of runs and agent invocations', () => {
  let fg: TestFlowgate;
  let llm: FakeLlm;

  before(async () => {
    llm = await startFakeLlm();
    fg = await startTestFlowgate({ FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model' });
  });
  after(async () => {
    await fg?.stop();
    await llm?.close();
  });

  it('refuses a priority outside 1..5 on a trigger and on an agent, and shows the one set', async () => {
    const p = await publishWorkflow(fg, { name: 'plain', steps: [{ name: 'T', type: 'template', template: 'x' }] });
    for (const priority of [0, 6, 2.5, 'high']) {
      const refused = await fg.admin<{ error: { code: string; message: string } }>('POST', '/api/v1/triggers', { workflowId: p.workflowId, priority });
      assert.equal(refused.status, 400, JSON.stringify(priority));
      assert.match(JSON.stringify(refused.body), /priority/);
      const agent = await fg.admin('POST', '/api/v1/agents', { name: 'a', instructions: 'x', priority });
      assert.equal(agent.status, 400, JSON.stringify(priority));
    }
    const made = await fg.admin<{ id: string; priority: number | null }>('POST', '/api/v1/triggers', { workflowId: p.workflowId, priority: 2 });
    assert.equal(made.status, 201);
    assert.equal(made.body.priority, 2);
    const read = await fg.admin<{ priority: number | null }>('GET', `/api/v1/triggers/${made.body.id}`);
    assert.equal(read.body.priority, 2);
    const plain = await fg.admin<{ priority: number | null }>('GET', `/api/v1/triggers/${p.triggerId}`);
    assert.equal(plain.body.priority, null, 'a trigger made without one (an existing body) has none');
  });

  it('starts a run with its organization as fairness key and its trigger\'s priority; chained runs take theirs or inherit', async function () {
    this.timeout(60_000);
    const low = await publishWorkflow(fg, { name: 'low', steps: [{ name: 'T', type: 'template', template: 'low' }] }, { priority: 4 });
    const plain = await publishWorkflow(fg, { name: 'plain', steps: [{ name: 'T', type: 'template', template: 'plain' }] });
    const parent = await publishWorkflow(fg, {
      name: 'parent',
      steps: [
        { name: 'Low', type: 'trigger', triggerId: low.triggerId },
        { name: 'Plain', type: 'trigger', triggerId: plain.triggerId },
      ],
    }, { priority: 2 });
    const response = await trigger(fg, parent, {}, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { id: string; status: string; results: { result: { result: string } }[] };
    assert.equal(body.status, 'COMPLETE');
    const [lowRun, plainRun] = body.results.map((r) => (JSON.parse(r.result.result) as { runId: string }).runId);
    assert.deepEqual(await priorityOf(fg, body.id), { fairnessKey: ORG, priorityKey: 2 });
    assert.deepEqual(await priorityOf(fg, lowRun!), { fairnessKey: ORG, priorityKey: 4 });
    assert.deepEqual(await priorityOf(fg, plainRun!), { fairnessKey: ORG, priorityKey: 2 }, 'inherited from the parent');

    // Level 7 names the chained run's own priority in the start command, and only there.
    const history = await fg.client.workflow.getHandle(body.id).fetchHistory();
    const starts = (history.events ?? []).filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)
      .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes!.priority?.priorityKey || undefined);
    assert.deepEqual(starts, [4, undefined]);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle(), dataConverter: fg.dataConverter }, history, body.id);
    // FLOWGATE_RECORD_HISTORY=<file>: keep the run (committed as test/workflows/histories/run-automation-priority-engine-7.json)
    const recordTo = recordHistoryPath();
    if (recordTo) await writeFile(recordTo, `${historyToJSON(history)}\n`, { flag: 'wx' });

    const direct = await trigger(fg, plain, {}, { 'x-api-wait': 'true' });
    assert.deepEqual(await priorityOf(fg, direct.headers.get('X-Pf-Run-Id')!), { fairnessKey: ORG, priorityKey: undefined });
  });

  it('starts an agent invocation with its organization as fairness key and the agent\'s priority; an update changes or clears it', async () => {
    const created = await fg.admin<{ id: string; priority: number | null }>('POST', '/api/v1/agents', { name: 'urgent', instructions: 'Answer.', priority: 1 });
    assert.equal(created.status, 201);
    assert.equal(created.body.priority, 1);
    llm.script.push({ content: 'done' });
    const invoked = await fg.admin<{ invocationId: string; status: string }>('POST', `/api/v1/agents/${created.body.id}/invoke`, { message: 'go' });
    assert.equal(invoked.body.status, 'COMPLETE', JSON.stringify(invoked.body));
    assert.deepEqual(await priorityOf(fg, invoked.body.invocationId), { fairnessKey: ORG, priorityKey: 1 });

    const cleared = await fg.admin<{ priority: number | null; name: string }>('PATCH', `/api/v1/agents/${created.body.id}`, { priority: null });
    assert.equal(cleared.body.priority, null);
    const renamed = await fg.admin<{ priority: number | null }>('PATCH', `/api/v1/agents/${created.body.id}`, { priority: 3 });
    assert.equal(renamed.body.priority, 3);
    const kept = await fg.admin<{ priority: number | null }>('PATCH', `/api/v1/agents/${created.body.id}`, { name: 'still urgent' });
    assert.equal(kept.body.priority, 3, 'a patch without priority keeps it');
  });
});
