/**
 * Helpers of the MCP Tasks tests (workflow tools, agent_invoke, code-agent tools): the official SDK
 * client on a server path with a runtime token, a task-augmented call that answers its task,
 * polling a task to a state, and a second gateway process (a replica on the same registry, data
 * dir and task queue) that is killed with SIGKILL once the test used it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult, type GetTaskResult } from '@modelcontextprotocol/sdk/types.js';
import { temporalAddress } from '../setup/root-hooks';
import type { TestFlowgate } from '../support/flowgate';
import { startMain } from '../support/processes';

/** The official MCP SDK client over Streamable HTTP on `<url>/tools/<server>`, the token as its bearer; with `elicit`, it answers elicitations. */
export async function connectMcp(url: string, server: string, token: string, elicit?: (request: ElicitRequest) => Promise<ElicitResult>): Promise<Client> {
  const client = new Client({ name: 'flowgate-test', version: '1.0.0' }, elicit ? { capabilities: { elicitation: { form: {} } } } : {});
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/tools/${server}`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** Starts a task-augmented call through the SDK and answers the task it created. */
export async function startTask(client: Client, name: string, args: Record<string, unknown>, task: { ttl?: number } = { ttl: 600_000 }): Promise<GetTaskResult> {
  for await (const message of client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, { task })) {
    if (message.type === 'taskCreated') return { ...message.task };
    if (message.type === 'error') throw message.error;
  }
  throw new Error('the call ended without creating a task');
}

/** tasks/get until `done` says so (or throws after `timeoutMs`). */
export async function pollTask(client: Client, taskId: string, done: (t: GetTaskResult) => boolean, timeoutMs = 30_000): Promise<GetTaskResult> {
  const deadline = Date.now() + timeoutMs;
  let last: GetTaskResult | undefined;
  while (Date.now() < deadline) {
    last = await client.experimental.tasks.getTask(taskId);
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`task ${taskId} did not reach the expected state; last seen ${JSON.stringify(last)}`);
}

/**
 * Runs `use` against a second gateway process of `fg` (FLOWGATE_ROLE=gateway: no worker; same
 * registry, data dir, admin token and task queue), then kills that process with SIGKILL.
 */
export async function withKilledReplica<T>(fg: TestFlowgate, env: Record<string, string>, use: (url: string) => Promise<T>): Promise<T> {
  const child = startMain({
    FLOWGATE_ROLE: 'gateway', PORT: '0', TEMPORAL_ADDRESS: temporalAddress(), FLOWGATE_TASK_QUEUE: fg.taskQueue,
    FLOWGATE_DATA_DIR: fg.dataDir, FLOWGATE_ADMIN_TOKEN: fg.adminToken, FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true', ...env,
  });
  try {
    const [, url] = await child.waitForLine(/gateway listening on (\S+)\n/);
    return await use(url!);
  } finally {
    child.process.kill('SIGKILL');
    await child.exited;
  }
}
