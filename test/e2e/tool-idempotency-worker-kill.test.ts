import assert from 'node:assert/strict';
import { temporalAddress } from '../setup/root-hooks';
import { API_KEY, startFakeCustomerApi, type FakeCustomerApi, type RecordedRequest } from '../support/fake-customer-api';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { startMain, type Child } from '../support/processes';
import { createCustomConnection, createServer, PETSTORE } from '../tools/custom-support';

/**
 * A call to a generated (OpenAPI) server is at least once: when the worker making it is killed
 * with SIGKILL while the customer API holds the request, Temporal runs the activity again on a
 * new worker and the API receives the call a second time. It must be able to tell: both requests
 * carry the same Idempotency-Key. Once for a workflow `tool` step, once for an agent's tool call.
 */
describe('a generated-server call repeated after its worker was killed carries the same Idempotency-Key', () => {
  let gateway: TestFlowgate;
  let worker: Child | undefined;
  let api: FakeCustomerApi;
  let llm: FakeLlm;
  let env: Record<string, string>;
  let pcid: string;
  let serverId: string;

  before(async () => {
    api = await startFakeCustomerApi();
    llm = await startFakeLlm();
    env = { FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model' };
    gateway = await startTestFlowgate(env, { worker: false });
    pcid = await createCustomConnection(gateway, gateway.adminToken, { baseUrl: `${api.url}/api/v3`, auth: { kind: 'api_key', name: 'api_key', value: API_KEY } });
    serverId = (await createServer(gateway, gateway.adminToken, { connection: pcid, document: PETSTORE })).id;
  });
  after(async () => {
    worker?.process.kill('SIGKILL');
    await gateway?.stop();
    await api?.close();
    await llm?.close();
  });

  // the worker shares the gateway's data dir: its registry, blobs and connection key
  const startWorker = async (): Promise<Child> => {
    const child = startMain({
      ...env, FLOWGATE_ROLE: 'worker', TEMPORAL_ADDRESS: temporalAddress(), FLOWGATE_TASK_QUEUE: gateway.taskQueue,
      FLOWGATE_DATA_DIR: gateway.dataDir, FLOWGATE_ADMIN_TOKEN: gateway.adminToken, FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
    });
    await child.waitForLine(/worker polling task queue/, 240_000);
    return child;
  };

  const petPosts = (petId: number): RecordedRequest[] =>
    api.requests.filter((r) => r.method === 'POST' && r.path === '/api/v3/pet' && (r.body as { id?: unknown } | undefined)?.id === petId);

  /** Waits for the held first request, kills the worker, and starts another. */
  async function killWorkerMidCall(petId: number): Promise<void> {
    const deadline = Date.now() + 90_000;
    while (petPosts(petId).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(petPosts(petId).length, 1, 'the call reached the API and is held there');
    worker?.process.kill('SIGKILL');
    await worker?.exited;
    worker = await startWorker();
  }

  it('a workflow tool step: the API sees <runId>:<stepIndex> on both attempts', async function () {
    this.timeout(360_000);
    const petId = 4101;
    const p = await publishWorkflow(gateway, {
      name: 'add-a-pet',
      steps: [{ name: 'Add', type: 'tool', server: serverId, tool: 'addPet', arguments: { PCID: pcid, body: { id: petId, name: 'Held', photoUrls: [] } } }],
    });
    worker = await startWorker();
    api.holdNext = 1;
    const response = await trigger(gateway, p, {});
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.ok(runId, await response.text());
    await killWorkerMidCall(petId);

    const final = await pollStatus(gateway, p, runId, undefined, 180_000);
    assert.equal(final.status, 'COMPLETE', JSON.stringify(final));
    const posts = petPosts(petId);
    assert.equal(posts.length, 2, 'the call was made again after the kill');
    assert.deepEqual(posts.map((r) => r.headers['idempotency-key']), [`${runId}:1`, `${runId}:1`]);
  });

  it('an agent\'s tool call: the API sees <invocationId>:<turn>:<index> on both attempts', async function () {
    this.timeout(360_000);
    const petId = 4102;
    const agent = await gateway.admin<{ id: string }>('POST', '/api/v1/agents', {
      name: 'pet-keeper', instructions: 'Add the pet you are told about.', servers: [{ name: serverId, tools: { addPet: {} } }],
    });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    llm.script.push(
      { toolCalls: [{ name: `${serverId}_addPet`, arguments: { PCID: pcid, body: { id: petId, name: 'Held too', photoUrls: [] } } }] },
      { content: 'Added.' },
    );
    worker ??= await startWorker();
    api.holdNext = 1;
    const handle = await gateway.admin<{ invocationId: string }>('POST', `/api/v1/agents/${agent.body.id}/invoke`, { message: 'Add pet 4102.', waitSeconds: 0 });
    assert.equal(handle.status, 202, JSON.stringify(handle.body));
    await killWorkerMidCall(petId);

    let view: { status: string; response?: string } = { status: 'RUNNING' };
    const deadline = Date.now() + 180_000;
    while (view.status === 'RUNNING' && Date.now() < deadline) {
      view = (await gateway.admin<typeof view>('GET', `/api/v1/agents/invocations/${handle.body.invocationId}`)).body;
      if (view.status === 'RUNNING') await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(view.status, 'COMPLETE', JSON.stringify(view));
    assert.equal(view.response, 'Added.');
    const posts = petPosts(petId);
    assert.equal(posts.length, 2, 'the call was made again after the kill');
    const key = `${handle.body.invocationId}:0:0`;
    assert.deepEqual(posts.map((r) => r.headers['idempotency-key']), [key, key]);
  });
});
