import assert from 'node:assert/strict';
import http from 'node:http';
import { stateQuery } from '../../src/common/workflow-contracts';
import { temporalAddress } from '../setup/root-hooks';
import { eventually } from '../support/eventually';
import { publishWorkflow, startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm';
import { listenOnLoopback } from '../support/loopback';
import { startMain, type Child } from '../support/processes';
import { startFakeSearch, type FakeSearch } from '../tools/support';

describe('an agent invocation survives a worker killed with SIGKILL', () => {
  let gateway: TestFlowgate;
  let worker: Child | undefined;
  let llm: FakeLlm;
  let search: FakeSearch;
  let env: Record<string, string>;

  before(async () => {
    llm = await startFakeLlm();
    search = await startFakeSearch();
    env = { FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model', FLOWGATE_SEARCH_URL: search.url };
    gateway = await startTestFlowgate(env, { worker: false });
  });
  after(async () => {
    worker?.process.kill('SIGKILL');
    await gateway?.stop();
    await llm?.close();
    await search?.close();
  });

  const startWorker = async (): Promise<Child> => {
    const child = startMain({
      ...env, FLOWGATE_ROLE: 'worker', TEMPORAL_ADDRESS: temporalAddress(), FLOWGATE_TASK_QUEUE: gateway.taskQueue,
      FLOWGATE_DATA_DIR: gateway.dataDir, FLOWGATE_ADMIN_TOKEN: gateway.adminToken, FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
    });
    await child.waitForLine(/worker polling task queue/);
    return child;
  };

  it('finishes once a worker is back, and each model call and tool call reached its server exactly once', async function () {
    this.timeout(180_000);
    // The workflow tool waits on a durable timer, then calls this server: the kill falls between the
    // search call (done) and the workflow's HTTP call (not yet made), with no activity in flight.
    let workflowCalls = 0;
    const upstream = await listenOnLoopback(http.createServer((_req, res) => {
      workflowCalls++;
      res.end('booked');
    }));
    try {
      const wf = await publishWorkflow(gateway, {
        name: 'book', steps: [{ name: 'Wait', type: 'delay', duration: '6s' }, { name: 'Book', type: 'http', url: `${upstream.url}/book` }],
      });
      const agent = await gateway.admin<{ id: string }>('POST', '/api/v1/agents', {
        name: 'booker', instructions: 'Search, then book.', servers: [{ name: 'web-search', allTools: true }], workflows: [{ triggerId: wf.triggerId, toolName: 'book' }],
      });
      assert.equal(agent.status, 201, JSON.stringify(agent.body));
      llm.script.push(
        { toolCalls: [{ name: 'web-search_search', arguments: { query: 'hotels' } }] },
        { toolCalls: [{ name: 'book', arguments: { inputs: {} } }] },
        { content: 'Booked.' },
      );
      worker = await startWorker();
      const handle = await gateway.admin<{ invocationId: string; status: string }>('POST', `/api/v1/agents/${agent.body.id}/invoke`, { message: 'Book a hotel.', waitSeconds: 0 });
      assert.equal(handle.status, 202);

      const deadline = Date.now() + 30_000;
      while (llm.requests.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(llm.requests.length, 2);
      // the kill must fall while the child run waits in its delay: wait until its state says so
      await eventually(async () => {
        for await (const run of gateway.client.workflow.list({ query: `FlowgateAutomationId = '${wf.workflowId}'` })) {
          const state = await gateway.client.workflow.getHandle(run.workflowId).query(stateQuery);
          return state.waitingOn?.kind === 'timer' ? true : undefined;
        }
        return undefined;
      }, 'the workflow tool\'s child run waiting in its delay');
      assert.equal(workflowCalls, 0);
      worker.process.kill('SIGKILL');
      await worker.exited;
      worker = await startWorker();

      let view: { status: string; response?: string } = { status: 'RUNNING' };
      const finish = Date.now() + 120_000;
      while (view.status === 'RUNNING' && Date.now() < finish) {
        view = (await gateway.admin<typeof view>('GET', `/api/v1/agents/invocations/${handle.body.invocationId}`)).body;
        if (view.status === 'RUNNING') await new Promise((resolve) => setTimeout(resolve, 500));
      }
      assert.equal(view.status, 'COMPLETE', JSON.stringify(view));
      assert.equal(view.response, 'Booked.');
      assert.equal(llm.requests.length, 3, 'each model call once');
      assert.equal(search.requests.filter((u) => u.searchParams.get('q') === 'hotels').length, 1, 'the search tool once');
      assert.equal(workflowCalls, 1, 'the workflow tool once');
    } finally {
      await upstream.close();
    }
  });
});
