import assert from 'node:assert/strict';
import { createLogger } from '../../src/observability/logger';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { ToolCallError } from '../../src/tools/server';
import { startFakeCodeAgent, type FakeCodeAgent, type FakeEvent } from '../support/fake-codeagent';
import { startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { callTool, rawPost, rpc, runtimeToken, type RpcAnswer } from './support';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex').toString('base64');
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1').toString('base64');

function structured<T = Record<string, unknown>>(answer: RpcAnswer): T {
  assert.equal(answer.body?.error, undefined, JSON.stringify(answer.body?.error));
  assert.equal(answer.body?.result?.isError, false, JSON.stringify(answer.body?.result));
  return answer.body?.result?.structuredContent as T;
}

function toolError(answer: RpcAnswer): Record<string, unknown> {
  assert.equal(answer.body?.error, undefined, JSON.stringify(answer.body?.error));
  assert.equal(answer.body?.result?.isError, true, JSON.stringify(answer.body?.result));
  return answer.body?.result?.structuredContent as Record<string, unknown>;
}

function refused(answer: RpcAnswer, field: RegExp): void {
  assert.equal(answer.body?.error?.code, -32000, JSON.stringify(answer.body));
  assert.match(answer.body?.error?.message ?? '', field);
}

describe('codeagent server (Cursor Cloud Agents v1)', function () {
  this.timeout(60_000);
  let fake: FakeCodeAgent;
  let fg: TestFlowgate;
  let token: string;
  let pcid: string;
  const logLines: string[] = [];

  const call = (name: string, args: Record<string, unknown> = {}): Promise<RpcAnswer> => callTool(fg, 'codeagent', token, name, { PCID: pcid, ...args });
  const repos = [{ url: 'https://github.com/acme/widgets', startingRef: 'main' }];
  const createAgent = async (text = 'Fix the flaky test', extra: Record<string, unknown> = {}) =>
    structured<{ agent: { id: string; status: string }; run: { id: string; status: string } }>(await call('codeagent_create_agent', { prompt: { text }, repos, ...extra }));
  const waitForRun = async (id: string, runId: string, done = (s: string) => ['FINISHED', 'ERROR', 'CANCELLED', 'EXPIRED'].includes(s)) => {
    for (let i = 0; i < 100; i++) {
      const run = structured<{ status: string }>(await call('codeagent_get_run', { id, runId }));
      if (done(run.status)) return run;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error('the run did not finish');
  };

  before(async () => {
    fake = await startFakeCodeAgent({ runMs: 1500 });
    fg = await startTestFlowgate({}, { log: createLogger('debug', {}, (line) => logLines.push(line)) });
    token = (await runtimeToken(fg)).token;
    const created = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', { application: 'codeagent', name: 'cursor', credentials: { apiKey: fake.apiKey, baseUrl: fake.url } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    pcid = created.body.PCID;
  });
  after(async () => {
    await fg?.stop();
    await fake?.close();
  });

  it('lists seventeen codeagent_ tools, each requiring PCID, with the rules JSON Schema can carry', async () => {
    const listed = await rpc(fg, 'codeagent', token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tools = (listed.body?.result?.tools ?? []) as { name: string; inputSchema: { required: string[]; properties: Record<string, Record<string, unknown>> } }[];
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'codeagent_archive_agent', 'codeagent_cancel_run', 'codeagent_create_agent', 'codeagent_create_run', 'codeagent_create_sub_token', 'codeagent_delete_agent',
      'codeagent_download_artifact', 'codeagent_get_agent', 'codeagent_get_api_key_info', 'codeagent_get_run', 'codeagent_list_agents', 'codeagent_list_artifacts',
      'codeagent_list_models', 'codeagent_list_repositories', 'codeagent_list_runs', 'codeagent_stream_run', 'codeagent_unarchive_agent',
    ]);
    for (const tool of tools) assert.ok(tool.inputSchema.required.includes('PCID'), tool.name);
    const create = tools.find((t) => t.name === 'codeagent_create_agent')?.inputSchema;
    assert.deepEqual(create?.required.sort(), ['PCID', 'prompt', 'repos']);
    const reposSchema = create?.properties.repos as { minItems: number; maxItems: number; items: { anyOf: unknown; properties: Record<string, { format?: string }> } };
    assert.deepEqual([reposSchema.minItems, reposSchema.maxItems], [1, 1]);
    assert.deepEqual(reposSchema.items.anyOf, [{ required: ['url'] }, { required: ['prUrl'] }]);
    assert.equal(reposSchema.items.properties.prUrl?.format, 'uri');
    const prompt = create?.properties.prompt as { required: string[]; properties: { images: { maxItems: number } } };
    assert.deepEqual([prompt.required, prompt.properties.images.maxItems], [['text'], 5]);
    assert.match(JSON.stringify(create?.properties.skipReviewerRequest), /autoCreatePR/);
    assert.match(JSON.stringify(create?.properties.envVars), /CURSOR_/);
    const stream = tools.find((t) => t.name === 'codeagent_stream_run')?.inputSchema;
    assert.deepEqual(stream?.required.sort(), ['PCID', 'id', 'runId']);
    assert.ok(stream?.properties['Last-Event-ID']);
    const sub = tools.find((t) => t.name === 'codeagent_create_sub_token')?.inputSchema;
    assert.deepEqual(sub?.required, ['PCID']);
    assert.equal(sub?.properties.forUserId?.type, 'integer');
    assert.match(String(sub?.properties.forUserEmail?.description), /not together with forUserId/);
  });

  it('creates an agent with Basic auth and the mid-2026 body, then follows its run to FINISHED', async () => {
    const before = fake.requests.length;
    const created = await createAgent('Add a changelog', {
      model: { id: 'composer-2', params: [{ id: 'thinking', value: 'high' }] }, autoCreatePR: true, skipReviewerRequest: true, branchName: 'feat/changelog',
      envVars: { DEPLOY_TOKEN: 'value-that-is-secret-1' }, prompt: { text: 'Add a changelog', images: [{ data: PNG }, { data: GIF, mimeType: 'image/gif' }] },
    });
    assert.match(created.agent.id, /^bc-/);
    assert.equal(created.run.status, 'CREATING');
    const sent = fake.requests[before];
    assert.equal(sent?.headers.authorization, `Basic ${Buffer.from(`${fake.apiKey}:`).toString('base64')}`);
    assert.deepEqual(sent?.body, {
      prompt: { text: 'Add a changelog', images: [{ data: PNG }, { data: GIF, mimeType: 'image/gif' }] }, repos,
      model: { id: 'composer-2', params: [{ id: 'thinking', value: 'high' }] }, autoCreatePR: true, skipReviewerRequest: true, branchName: 'feat/changelog',
      envVars: { DEPLOY_TOKEN: 'value-that-is-secret-1' },
    });
    const agent = structured<{ id: string; status: string; latestRunId: string }>(await call('codeagent_get_agent', { id: created.agent.id }));
    assert.deepEqual([agent.status, agent.latestRunId], ['ACTIVE', created.run.id]);
    const run = await waitForRun(created.agent.id, created.run.id);
    assert.equal(run.status, 'FINISHED');
  });

  it('keeps one active run per agent (agent_busy), pages runs, cancels, and refuses archived agents', async () => {
    const { agent, run } = await createAgent('Refactor the parser');
    const busy = toolError(await call('codeagent_create_run', { id: agent.id, prompt: { text: 'and add tests' } }));
    assert.deepEqual([busy.code, busy.status], ['agent_busy', 409]);
    assert.match(String(busy.error), /already has an active run/);
    await waitForRun(agent.id, run.id);
    const second = structured<{ run: { id: string; status: string } }>(await call('codeagent_create_run', { id: agent.id, prompt: { text: 'and add tests', images: [{ data: PNG }] } }));
    assert.equal(second.run.status, 'CREATING');
    const page1 = structured<{ items: { id: string }[]; nextCursor: string | null }>(await call('codeagent_list_runs', { id: agent.id, limit: 1 }));
    assert.deepEqual(page1.items.map((r) => r.id), [second.run.id]);
    assert.equal(typeof page1.nextCursor, 'string');
    const page2 = structured<{ items: { id: string }[]; nextCursor: string | null }>(await call('codeagent_list_runs', { id: agent.id, limit: 1, cursor: page1.nextCursor }));
    assert.deepEqual([page2.items.map((r) => r.id), page2.nextCursor], [[run.id], null]);

    assert.deepEqual(structured(await call('codeagent_cancel_run', { id: agent.id, runId: second.run.id })), { id: second.run.id });
    assert.equal(structured<{ status: string }>(await call('codeagent_get_run', { id: agent.id, runId: second.run.id })).status, 'CANCELLED');
    const again = toolError(await call('codeagent_cancel_run', { id: agent.id, runId: second.run.id }));
    assert.deepEqual([again.code, again.status], ['run_not_cancellable', 409]);

    assert.deepEqual(structured(await call('codeagent_archive_agent', { id: agent.id })), { id: agent.id });
    assert.deepEqual(structured(await call('codeagent_archive_agent', { id: agent.id })), { id: agent.id }, 'archiving is idempotent');
    const archived = toolError(await call('codeagent_create_run', { id: agent.id, prompt: { text: 'more' } }));
    assert.deepEqual([archived.code, archived.status], ['agent_archived', 409]);
    const visible = structured<{ items: { id: string }[] }>(await call('codeagent_list_agents', { limit: 100 }));
    assert.ok(!visible.items.some((a) => a.id === agent.id), 'archived agents are left out by default');
    const all = structured<{ items: { id: string }[] }>(await call('codeagent_list_agents', { limit: 100, includeArchived: true }));
    assert.ok(all.items.some((a) => a.id === agent.id));
    structured(await call('codeagent_unarchive_agent', { id: agent.id }));
    structured(await call('codeagent_create_run', { id: agent.id, prompt: { text: 'more' } }));

    assert.deepEqual(structured(await call('codeagent_delete_agent', { id: agent.id })), { id: agent.id });
    const gone = toolError(await call('codeagent_get_agent', { id: agent.id }));
    assert.deepEqual([gone.code, gone.status], ['agent_not_found', 404]);
    const noRun = toolError(await call('codeagent_get_run', { id: (await createAgent()).agent.id, runId: 'run-nope' }));
    assert.deepEqual([noRun.code, noRun.status], ['run_not_found', 404]);
  });

  it('pages agents by cursor whether the last page has nextCursor null or none, and filters by pull request', async () => {
    const prUrl = `https://github.com/acme/widgets/pull/${Date.now()}`;
    const onPr = await createAgent('Review the PR', { repos: [{ prUrl }], autoGenerateBranch: false });
    for (const omit of [false, true]) {
      fake.omitLastCursor = omit;
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 50; pages++) {
        const page = structured<{ items: { id: string }[]; nextCursor: string | null }>(await call('codeagent_list_agents', { limit: 2, ...(cursor ? { cursor } : {}) }));
        seen.push(...page.items.map((a) => a.id));
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      const expected = [...fake.agents.values()].filter((a) => a.status !== 'ARCHIVED').map((a) => a.id).reverse();
      assert.deepEqual(seen, expected);
    }
    fake.omitLastCursor = false;
    const filtered = structured<{ items: { id: string }[] }>(await call('codeagent_list_agents', { prUrl }));
    assert.deepEqual(filtered.items.map((a) => a.id), [onPr.agent.id]);
  });

  it('lists artifacts and answers a presigned link, or a signed flowgate link to a stored copy', async () => {
    const { agent, run } = await createAgent('Write a report');
    await waitForRun(agent.id, run.id);
    const listed = structured<{ items: { path: string; sizeBytes: number }[] }>(await call('codeagent_list_artifacts', { id: agent.id }));
    assert.deepEqual(listed.items.map((a) => a.path), ['artifacts/report.md', 'artifacts/logs/run.txt']);
    const presigned = structured<{ url: string; expiresAt: string }>(await call('codeagent_download_artifact', { id: agent.id, path: 'artifacts/report.md' }));
    assert.ok(presigned.url.startsWith(`${fake.url}/s3/`));
    assert.ok(Date.parse(presigned.expiresAt) > Date.now());
    const stored = structured<{ url: string; stored: boolean; size: number }>(await call('codeagent_download_artifact', { id: agent.id, path: 'artifacts/report.md', store: true }));
    assert.ok(stored.url.startsWith(`${fg.url}/files/tools/${DEFAULT_ORG_ID}/codeagent/`), stored.url);
    const file = await fetch(stored.url);
    assert.equal(file.status, 200);
    assert.equal(await file.text(), `# Report for ${run.id}\n`);
    const missing = toolError(await call('codeagent_download_artifact', { id: agent.id, path: 'artifacts/nope.txt' }));
    assert.deepEqual([missing.code, missing.status], ['artifact_not_found', 404]);
  });

  it('answers key info, models in either shape, repositories and sub-tokens', async () => {
    assert.equal(structured<{ apiKeyName: string }>(await call('codeagent_get_api_key_info')).apiKeyName, 'flowgate test key');
    fake.modelsAsObjects = false;
    assert.deepEqual(structured(await call('codeagent_list_models')), { items: [{ id: 'composer-2' }, { id: 'claude-4.5-sonnet' }] });
    fake.modelsAsObjects = true;
    assert.deepEqual(structured<{ items: { id: string }[] }>(await call('codeagent_list_models')).items.map((m) => m.id), ['composer-2', 'claude-4.5-sonnet']);
    assert.equal(structured<{ items: unknown[] }>(await call('codeagent_list_repositories')).items.length, 2);
    const byEmail = structured<{ accessToken: string; userId: number }>(await call('codeagent_create_sub_token', { forUserEmail: 'Dev@Example.test' }));
    assert.match(byEmail.accessToken, /^sub_/);
    assert.equal(structured<{ userId: number }>(await call('codeagent_create_sub_token', { forUserId: 99 })).userId, 99);
    const neither = toolError(await call('codeagent_create_sub_token'));
    assert.deepEqual([neither.code, neither.status], ['validation_error', 400]);
  });

  it('refuses each invalid argument with -32000 naming the field, before anything is sent', async () => {
    const agentId = (await createAgent()).agent.id;
    const before = fake.requests.length;
    const text = { text: 'go' };
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['codeagent_create_agent', { prompt: { text: 'go', images: Array.from({ length: 6 }, () => ({ data: PNG })) }, repos }, /arguments\.prompt\.images: /],
      ['codeagent_create_agent', { prompt: { text: 'go', images: [{ data: 'not base64!' }] }, repos }, /arguments\.prompt\.images\.0\.data: is not valid base64/],
      ['codeagent_create_agent', { prompt: { text: 'go', images: [{ data: Buffer.from('hello world, not an image').toString('base64') }] }, repos }, /arguments\.prompt\.images\.0\.data: is not a png, jpeg, gif or webp image/],
      ['codeagent_create_agent', { prompt: { text: 'go', images: [{ data: PNG, mimeType: 'image/jpeg' }] }, repos }, /arguments\.prompt\.images\.0\.mimeType: /],
      ['codeagent_create_agent', { prompt: { text: '' }, repos }, /arguments\.prompt\.text/],
      ['codeagent_create_agent', { prompt: text, repos: [] }, /arguments\.repos: /],
      ['codeagent_create_agent', { prompt: text, repos: [...repos, ...repos] }, /arguments\.repos: /],
      ['codeagent_create_agent', { prompt: text }, /arguments\.repos: /],
      ['codeagent_create_agent', { prompt: text, repos: [{ startingRef: 'main' }] }, /arguments\.repos\.0\.url: is required unless prUrl is given/],
      ['codeagent_create_agent', { prompt: text, repos: [{ prUrl: 'not a url' }] }, /arguments\.repos\.0\.prUrl/],
      ['codeagent_create_agent', { prompt: text, repos, autoGenerateBranch: true }, /arguments\.autoGenerateBranch: applies only when repos\[0\]\.prUrl is given/],
      ['codeagent_create_agent', { prompt: text, repos, skipReviewerRequest: true }, /arguments\.skipReviewerRequest: applies only when autoCreatePR is true/],
      ['codeagent_create_agent', { prompt: text, repos, autoCreatePR: false, skipReviewerRequest: true }, /arguments\.skipReviewerRequest/],
      ['codeagent_create_agent', { prompt: text, repos, envVars: { '': 'v-secret-a' } }, /arguments\.envVars\.: a variable name must not be empty/],
      ['codeagent_create_agent', { prompt: text, repos, envVars: { CURSOR_TOKEN: 'v-secret-b' } }, /arguments\.envVars\.CURSOR_TOKEN: names starting with CURSOR_ are reserved/],
      ['codeagent_create_agent', { prompt: text, repos, envVars: { ['N'.repeat(1025)]: 'v-secret-c' } }, /arguments\.envVars\.N+: the name is longer than 1024 bytes/],
      ['codeagent_create_agent', { prompt: text, repos, envVars: { EMPTY: '' } }, /arguments\.envVars\.EMPTY: the value must not be empty/],
      ['codeagent_create_agent', { prompt: text, repos, envVars: { BIG: 'é'.repeat(2049) } }, /arguments\.envVars\.BIG: the value is longer than 4096 bytes/],
      ['codeagent_create_agent', { prompt: text, repos, model: { params: [] } }, /arguments\.model\.id/],
      ['codeagent_create_agent', { prompt: text, repos, unknownOption: 1 }, /arguments: .*unknownOption/],
      ['codeagent_create_run', { id: agentId, prompt: { text: 'go', images: [{ data: 'AAAA' }] } }, /arguments\.prompt\.images\.0\.data: is not a png/],
      ['codeagent_create_run', { prompt: text }, /arguments\.id/],
      ['codeagent_create_sub_token', { forUserEmail: 'a@example.test', forUserId: 3 }, /arguments\.forUserId: forUserEmail and forUserId are mutually exclusive/],
      ['codeagent_create_sub_token', { forUserEmail: 'not-an-email' }, /arguments\.forUserEmail/],
      ['codeagent_create_sub_token', { forUserId: 1.5 }, /arguments\.forUserId/],
      ['codeagent_download_artifact', { id: agentId, path: '/opt/cursor/artifacts/report.md' }, /arguments\.path: must be a relative path under artifacts\//],
      ['codeagent_download_artifact', { id: agentId, path: 'report.md' }, /arguments\.path: must be a relative path under artifacts\//],
      ['codeagent_download_artifact', { id: agentId, path: 'artifacts/../secrets.txt' }, /arguments\.path: must not contain \.\./],
      ['codeagent_list_agents', { limit: 101 }, /arguments\.limit/],
      ['codeagent_list_agents', { prUrl: 'nope' }, /arguments\.prUrl/],
      ['codeagent_list_runs', { id: agentId, limit: 0 }, /arguments\.limit/],
      ['codeagent_stream_run', { id: agentId }, /arguments\.runId/],
      ['codeagent_stream_run', { id: agentId, runId: 'run-x', waitSeconds: 600 }, /arguments\.waitSeconds/],
      ['codeagent_get_agent', { id: '../me' }, /arguments\.id/],
    ];
    for (const [tool, args, field] of cases) {
      const answer = await call(tool, args);
      refused(answer, field);
      assert.doesNotMatch(answer.text, /v-secret/, 'an envVars value never comes back');
    }
    const noPcid = await callTool(fg, 'codeagent', token, 'codeagent_list_models', {});
    refused(noPcid, /arguments\.PCID/);
    assert.equal(fake.requests.length, before, 'nothing reached the backend');
  });

  it('takes five 15 MB images over HTTP (a body of about 100 MB) and hands them to the backend unchanged', async function () {
    this.timeout(120_000);
    const images = Array.from({ length: 5 }, (_, i) => {
      const image = Buffer.alloc(15 * 1024 * 1024, i + 1);
      Buffer.from(PNG, 'base64').copy(image);
      return { data: image.toString('base64'), mimeType: 'image/png' };
    });
    const answer = await call('codeagent_create_agent', { prompt: { text: 'Match the mock-ups', images }, repos });
    const created = structured<{ agent: { id: string } }>(answer);
    const sent = fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/agents').at(-1)?.body as { prompt: { images: { data: string; mimeType: string }[] } };
    assert.ok(created.agent.id);
    assert.equal(sent.prompt.images.length, 5);
    sent.prompt.images.forEach((image, i) => {
      assert.equal(image.data.length, images[i]!.data.length, `image ${i}: ${image.data.length} base64 characters`);
      assert.ok(image.data === images[i]!.data, `image ${i} arrived unchanged`);
    });
  });

  it('refuses a body over its limit (about 110 MiB, sized from the tools\' arguments) with 413 from Content-Length, before reading it', async () => {
    const over = rawPost(fg, 'codeagent', token, { declared: 115_118_721, chunks: [], end: false });
    const refused = await over.answer;
    over.request.destroy();
    assert.equal(refused.status, 413);
    assert.equal(refused.body?.error?.message, 'the body is larger than 115118720 bytes (109.8 MiB), the most /codeagent takes');
  });

  it('refuses an image over 15 MB, in process too', async () => {
    const big = Buffer.alloc(15 * 1024 * 1024 + 1);
    Buffer.from(PNG, 'base64').copy(big);
    await assert.rejects(
      fg.tools.call(DEFAULT_ORG_ID, 'codeagent', 'codeagent_create_agent', { PCID: pcid, prompt: { text: 'go', images: [{ data: big.toString('base64') }] }, repos }),
      (error) => error instanceof ToolCallError && error.code === 'INVALID_ARGUMENTS' && /arguments\.prompt\.images\.0\.data: the image is larger than 15728640 bytes/.test(error.message),
    );
    const atLimit = Buffer.alloc(15 * 1024 * 1024);
    Buffer.from(PNG, 'base64').copy(atLimit);
    const ok = await fg.tools.call(DEFAULT_ORG_ID, 'codeagent', 'codeagent_create_agent', { PCID: pcid, prompt: { text: 'go', images: [{ data: atLimit.toString('base64') }] }, repos });
    assert.equal(ok.isError, false);
  });

  it('maps 401, 429 with Retry-After, a slow backend and a down backend, never showing the key', async () => {
    const wrong = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', { application: 'codeagent', credentials: { apiKey: 'key_wrong_0123456789', baseUrl: fake.url } });
    const unauthorized = await callTool(fg, 'codeagent', token, 'codeagent_list_models', { PCID: wrong.body.PCID });
    const error = toolError(unauthorized);
    assert.deepEqual([error.code, error.status], ['unauthorized', 401]);
    assert.match(String(error.error), /API key/);
    assert.doesNotMatch(unauthorized.text, /key_wrong_0123456789/);

    const bearer = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', { application: 'codeagent', credentials: { apiKey: fake.apiKey, baseUrl: fake.url, authScheme: 'bearer' } });
    structured(await callTool(fg, 'codeagent', token, 'codeagent_list_models', { PCID: bearer.body.PCID }));
    assert.equal(fake.requests.at(-1)?.headers.authorization, `Bearer ${fake.apiKey}`);

    fake.rateLimit(1, 17);
    const limited = toolError(await call('codeagent_list_agents'));
    assert.deepEqual([limited.code, limited.status, limited.retryAfter], ['rate_limit_exceeded', 429, 17]);
    assert.match(String(limited.error), /retry after 17 s/);

    fake.delayMs = 5_000;
    try {
      const started = Date.now();
      await assert.rejects(fg.tools.call(DEFAULT_ORG_ID, 'codeagent', 'codeagent_get_api_key_info', { PCID: pcid }, { timeoutMs: 800 }),
        (e) => e instanceof ToolCallError && e.code === 'TIMEOUT');
      assert.ok(Date.now() - started < 3_000, 'a slow backend is a timeout, not a hang');
    } finally {
      fake.delayMs = 0;
    }

    const down = await fg.admin<{ PCID: string }>('POST', '/api/v1/connections', { application: 'codeagent', credentials: { apiKey: fake.apiKey, baseUrl: 'http://127.0.0.1:9' } });
    refused(await callTool(fg, 'codeagent', token, 'codeagent_list_models', { PCID: down.body.PCID }), /unreachable/);
  });

  it('refuses a base URL on the private network unless the instance allows it', async () => {
    const strict = await startTestFlowgate({ FLOWGATE_ALLOW_PRIVATE_NETWORK: 'false' });
    try {
      const strictToken = (await runtimeToken(strict)).token;
      const conn = await strict.admin<{ PCID: string }>('POST', '/api/v1/connections', { application: 'codeagent', credentials: { apiKey: fake.apiKey, baseUrl: fake.url } });
      const before = fake.requests.length;
      refused(await callTool(strict, 'codeagent', strictToken, 'codeagent_list_models', { PCID: conn.body.PCID }), /refused/);
      assert.equal(fake.requests.length, before);
    } finally {
      await strict.stop();
    }
  });

  describe('codeagent_stream_run', () => {
    interface Answer { events: { id?: string; event: string; data: unknown }[]; lastEventId?: string; ended: boolean; status?: string; expired?: boolean; run?: { status: string } }
    const stream = async (id: string, runId: string, extra: Record<string, unknown> = {}) => structured<Answer>(await call('codeagent_stream_run', { id, runId, ...extra }));
    const whole = (events: FakeEvent[]) => events.map((e) => ({ id: e.id, event: e.event, data: e.data }));

    it('reads a run in several calls, each resuming after the last event id, every event exactly once', async () => {
      fake.runMs = 5_000;
      fake.eventCount = 16;
      try {
        const { agent, run } = await createAgent('Long task');
        const answers: Answer[] = [];
        let last: string | undefined;
        for (let i = 0; i < 20; i++) {
          const answer = await stream(agent.id, run.id, { waitSeconds: 1, ...(last ? { 'Last-Event-ID': last } : {}) });
          answers.push(answer);
          last = answer.lastEventId;
          if (answer.ended) break;
        }
        assert.ok(answers.length >= 3, `read in ${answers.length} calls`);
        assert.ok(answers.at(-1)?.ended);
        assert.equal(answers.at(-1)?.status, 'FINISHED');
        assert.ok(answers[0]?.status, 'the leading status event gives the status');
        const joined = answers.flatMap((a) => a.events);
        assert.deepEqual(joined, whole(fake.run(agent.id, run.id)?.events ?? []));
        assert.deepEqual(joined.map((e) => e.event).filter((e) => e === 'done'), ['done']);
        assert.ok(joined.some((e) => e.event === 'assistant' && (e.data as { text: string }).text === 'step 0\nline two'), 'multi-line data is joined');
      } finally {
        fake.runMs = 1500;
        fake.eventCount = 8;
      }
      assert.equal(fake.openStreams(), 0, 'no stream connection is left open');
    });

    it('loses no event when the connection is cut in the middle of an event', async () => {
      const { agent, run } = await createAgent('Cut me');
      await waitForRun(agent.id, run.id);
      fake.cutNextStream(3);
      const answer = await stream(agent.id, run.id, { waitSeconds: 5 });
      assert.ok(answer.ended);
      const events = whole(fake.run(agent.id, run.id)?.events ?? []);
      assert.deepEqual(answer.events, events);
      const connections = fake.requests.filter((r) => r.path.endsWith(`/runs/${run.id}/stream`));
      assert.deepEqual(connections.map((r) => r.headers['last-event-id']), [undefined, events[2]?.id], 'reconnected after the last whole event');

      // resuming from an id answers exactly the events after it
      const second = await createAgent('Cut me again');
      await waitForRun(second.agent.id, second.run.id);
      const all = whole(fake.run(second.agent.id, second.run.id)?.events ?? []);
      const first = await stream(second.agent.id, second.run.id, { 'Last-Event-ID': all[1]?.id });
      assert.deepEqual(first.events, all.slice(2));
    });

    it('answers a timeout, not a hang, when the backend does not open the stream', async () => {
      const { agent, run } = await createAgent('Silent');
      fake.delayMs = 4_000;
      try {
        const started = Date.now();
        refused(await call('codeagent_stream_run', { id: agent.id, runId: run.id, waitSeconds: 1 }), /did not open the stream within 1000 ms/);
        assert.ok(Date.now() - started < 3_000);
      } finally {
        fake.delayMs = 0;
      }
    });

    it('answers invalid_last_event_id for an id of another run, and the final state once the stream expired', async () => {
      const a = await createAgent('A');
      const b = await createAgent('B');
      await waitForRun(a.agent.id, a.run.id);
      await waitForRun(b.agent.id, b.run.id);
      const otherId = fake.run(b.agent.id, b.run.id)?.events[0]?.id;
      const invalid = toolError(await call('codeagent_stream_run', { id: a.agent.id, runId: a.run.id, 'Last-Event-ID': otherId }));
      assert.deepEqual([invalid.code, invalid.status], ['invalid_last_event_id', 400]);
      const target = fake.run(a.agent.id, a.run.id);
      assert.ok(target);
      target.streamExpired = true;
      const expired = await stream(a.agent.id, a.run.id);
      assert.deepEqual([expired.expired, expired.ended, expired.status, expired.run?.status, expired.events], [true, true, 'FINISHED', 'FINISHED', []]);
    });
  });

  // last (mocha runs a describe's own tests before its nested ones): after every call above
  describe('logs', () => {
    it('never logs the API key or an envVars value', () => {
      const text = logLines.join('\n');
      assert.ok(logLines.length > 0);
      assert.doesNotMatch(text, new RegExp(fake.apiKey));
      assert.doesNotMatch(text, /value-that-is-secret|v-secret|key_wrong_0123456789/);
      assert.doesNotMatch(text, new RegExp(Buffer.from(`${fake.apiKey}:`).toString('base64').replace(/[+/=]/g, '.')));
    });
  });
});
