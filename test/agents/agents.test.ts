import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineTool, toolServer } from '../../src/tools/define-tool';
import type { ServerSource, ToolServer } from '../../src/tools';
import { publishWorkflow, type TestFlowgate } from '../support/flowgate';
import { lastMessage, startFakeLlm, type FakeLlm } from '../support/fake-llm';
import { callTool, createOrg, rpc, RPC_HEADERS, runtimeToken, startFakeSearch, startToolFlowgate, type FakeSearch } from '../tools/support';

const SERVER = 'agent-management';

/** An organization's own server that records what each call was told (headers, idempotency key). */
function recordingSource(): { source: ServerSource; owner: { orgId?: string }; seen: { forwardHeaders: Record<string, string>; idempotencyKey?: string }[]; serverId: string } {
  const owner: { orgId?: string } = {};
  const seen: { forwardHeaders: Record<string, string>; idempotencyKey?: string }[] = [];
  const serverId = `crm${randomUUID().slice(0, 8)}`;
  const server: ToolServer = toolServer({
    name: serverId, description: 'Acme CRM', embedded: false,
    tools: [defineTool({
      name: 'find_customer', description: 'Find a customer by company name.',
      input: z.object({ company: z.string() }).strict(),
      async handler(args, context) {
        seen.push({ forwardHeaders: { ...context.forwardHeaders }, idempotencyKey: context.idempotencyKey });
        return { company: args.company, tier: 'gold' };
      },
    })],
  });
  return { source: { servers: async (orgId) => (orgId === owner.orgId ? [server] : []) }, owner, seen, serverId };
}

type Structured = Record<string, unknown>;

async function tool(fg: TestFlowgate, token: string, name: string, args: Record<string, unknown>): Promise<{ structured: Structured; isError: boolean; error?: { code: number; message: string } }> {
  const answer = await callTool(fg, SERVER, token, name, args);
  assert.equal(answer.status, 200, answer.text);
  if (answer.body?.error) return { structured: {}, isError: true, error: answer.body.error };
  const result = answer.body?.result ?? {};
  return { structured: (result.structuredContent ?? {}) as Structured, isError: result.isError === true };
}

describe('agents (agent-management server and invokeAgent)', () => {
  let fg: TestFlowgate;
  let llm: FakeLlm;
  let search: FakeSearch;
  let token: string;
  let crm: ReturnType<typeof recordingSource>;

  before(async () => {
    llm = await startFakeLlm();
    search = await startFakeSearch();
    crm = recordingSource();
    fg = await startToolFlowgate({
      FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model', FLOWGATE_LLM_API_KEY: 'sk-test-secret', FLOWGATE_SEARCH_URL: search.url,
      FLOWGATE_AGENT_WAIT_SECONDS: '30',
    }, crm.source);
    crm.owner.orgId = 'org_default';
    token = (await runtimeToken(fg)).token;
  });
  after(async () => {
    await fg?.stop();
    await llm?.close();
    await search?.close();
  });
  beforeEach(() => {
    llm.script.length = 0;
    llm.requests.length = 0;
  });

  it('lists the agent tools unprefixed and accepts the agent-management_ prefix on calls', async () => {
    const listed = await rpc(fg, SERVER, token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const names = (listed.body?.result?.tools as { name: string }[]).map((t) => t.name);
    for (const name of ['agent_create', 'agent_list', 'agent_read', 'agent_update', 'agent_delete', 'agent_invoke', 'chat_create', 'chat_list',
      'chat_reset_conversation', 'chat_list_artifacts']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    const created = await tool(fg, token, 'agent-management_agent_create', { name: 'prefixed', description: 'd', instructions: 'Be brief.' });
    assert.equal(created.isError, false, JSON.stringify(created));
    assert.match(String(created.structured.id), /^agt_/);
    assert.equal(typeof created.structured.createdDate, 'string');
  });

  it('runs a scripted conversation that calls web search and a workflow, then answers', async function () {
    this.timeout(60_000);
    const wf = await publishWorkflow(fg, {
      name: 'greeter', inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      steps: [{ name: 'Greet', type: 'template', template: 'Hello, {{inputs.name}}!' }],
    });
    const created = await tool(fg, token, 'agent_create', {
      name: 'researcher', description: 'searches', instructions: 'Use the tools, then answer.',
      servers: [{ name: 'web-search', allTools: true }], workflows: [{ triggerId: wf.triggerId, toolName: 'greet', description: 'Greets someone.' }],
    });
    const agentId = String(created.structured.id);
    llm.script.push(
      (request) => {
        assert.deepEqual(request.tools?.map((t) => t.function.name).sort(), ['greet', 'web-search_search']);
        assert.equal(request.messages[0]?.role, 'system');
        assert.equal(lastMessage(request).content, 'Find Temporal and greet Ada.');
        return { toolCalls: [{ name: 'web-search_search', arguments: { query: 'temporal', limit: 2 } }] };
      },
      (request) => {
        const last = lastMessage(request);
        assert.equal(last.role, 'tool');
        assert.match(String(last.content), /Result 1 for temporal/);
        return { toolCalls: [{ name: 'greet', arguments: { inputs: { name: 'Ada' } } }] };
      },
      (request) => {
        assert.match(String(lastMessage(request).content), /Hello, Ada!/);
        return { content: 'Temporal is a workflow engine. Hello, Ada!' };
      },
    );
    const invoked = await tool(fg, token, 'agent-management_agent_invoke', { agentId, message: 'Find Temporal and greet Ada.' });
    assert.equal(invoked.isError, false, JSON.stringify(invoked));
    assert.equal(invoked.structured.status, 'COMPLETE');
    assert.equal(invoked.structured.response, 'Temporal is a workflow engine. Hello, Ada!');
    assert.equal(invoked.structured.agentId, agentId);
    assert.match(String(invoked.structured.chatId), /^chat_/);
    assert.equal((invoked.structured.toolCalls as unknown[]).length, 2);
    assert.equal(llm.requests.length, 3);
    assert.equal(llm.requests[0]?.headers.authorization, 'Bearer sk-test-secret');
    assert.equal(llm.requests[0]?.body.model, 'fake-model');
    assert.equal(search.requests.filter((u) => u.searchParams.get('q') === 'temporal').length, 1);

    // the invocation is a workflow the Web UI lists by organization and agent
    const query = `WorkflowType = 'invokeAgent' AND FlowgateAgentId = '${agentId}' AND FlowgateOrgId = 'org_default'`;
    let found: string[] = [];
    for (let i = 0; i < 50 && found.length === 0; i++) {
      found = [];
      for await (const execution of fg.client.workflow.list({ query })) found.push(execution.workflowId);
      if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.deepEqual(found, [invoked.structured.invocationId]);

    const artifacts = await tool(fg, token, 'chat_list_artifacts', { chatId: invoked.structured.chatId });
    const files = artifacts.structured.artifacts as { name: string; url: string }[];
    assert.equal(files.length, 1, 'the web search result is kept as a chat artifact');
    const file = await fetch(files[0]!.url);
    assert.equal(file.status, 200);
    assert.match(await file.text(), /Result 1 for temporal/);
  });

  it('continues a conversation by chatId, and forgets it after chat_reset_conversation', async function () {
    this.timeout(60_000);
    const agentId = String((await tool(fg, token, 'agent_create', { name: 'chatty', instructions: 'Remember things.' })).structured.id);
    const chat = await tool(fg, token, 'chat_create', { agentId, title: 'numbers' });
    const chatId = String(chat.structured.id);
    llm.script.push({ content: 'Noted: 42.' });
    const first = await tool(fg, token, 'agent_invoke', { agentId, chatId, message: 'My number is 42.' });
    assert.equal(first.structured.chatId, chatId);
    llm.script.push((request) => {
      assert.deepEqual(request.messages.map((m) => [m.role, m.content]), [
        ['system', 'Remember things.'], ['user', 'My number is 42.'], ['assistant', 'Noted: 42.'], ['user', 'What is my number?'],
      ]);
      return { content: 'Your number is 42.' };
    });
    const second = await tool(fg, token, 'agent_invoke', { agentId, chatId, message: 'What is my number?' });
    assert.equal(second.structured.response, 'Your number is 42.');
    const chats = await tool(fg, token, 'chat_list', { agentId });
    assert.deepEqual((chats.structured.chats as { id: string }[]).map((c) => c.id), [chatId]);

    await tool(fg, token, 'chat_reset_conversation', { chatId });
    llm.script.push((request) => {
      assert.equal(request.messages.length, 2, 'only the instructions and the new message');
      return { content: 'I do not know.' };
    });
    const third = await tool(fg, token, 'agent_invoke', { agentId, chatId, message: 'What is my number?' });
    assert.equal(third.structured.response, 'I do not know.');
  });

  it('asks for and validates an outputSchema answer, retrying a non-conforming answer once', async function () {
    this.timeout(60_000);
    const schema = { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } }, required: ['city', 'population'], additionalProperties: false };
    const agentId = String((await tool(fg, token, 'agent_create', { name: 'structured', instructions: 'Answer in JSON.', outputSchema: JSON.stringify(schema) })).structured.id);
    llm.script.push(
      (request) => {
        assert.equal(request.response_format?.type, 'json_schema');
        assert.deepEqual(request.response_format?.json_schema?.schema, schema);
        return { content: '{"city": "Paris"}' };
      },
      (request) => {
        assert.match(String(lastMessage(request).content), /not accepted: .*population/);
        return { content: '```json\n{"city": "Paris", "population": 2102650}\n```' };
      },
    );
    const answered = await tool(fg, token, 'agent_invoke', { agentId, message: 'Biggest city of France?' });
    assert.equal(answered.structured.status, 'COMPLETE', JSON.stringify(answered));
    assert.deepEqual(answered.structured.output, { city: 'Paris', population: 2102650 });

    llm.script.push({ content: 'Paris' }, { content: 'Still Paris' });
    const refused = await tool(fg, token, 'agent_invoke', { agentId, message: 'Again?' });
    assert.equal(refused.structured.status, 'FAILED');
    assert.match(String(refused.structured.error), /refused twice: the answer is not JSON/);
  });

  it('ends an invocation whose model keeps calling tools at the turn limit', async function () {
    this.timeout(60_000);
    const agentId = String((await tool(fg, token, 'agent_create', {
      name: 'looper', instructions: 'Search forever.', servers: [{ name: 'web-search', tools: { search: {} } }], limits: { maxTurns: 3 },
    })).structured.id);
    llm.fallback = { toolCalls: [{ name: 'web-search_search', arguments: { query: 'again' } }] };
    try {
      const answered = await tool(fg, token, 'agent_invoke', { agentId, message: 'Go.' });
      assert.equal(answered.structured.status, 'FAILED');
      assert.match(String(answered.structured.error), /all 3 model turns \(limits\.maxTurns\)/);
      assert.equal(llm.requests.length, 3);
    } finally {
      delete llm.fallback;
    }
  });

  it('waits out a 429 for its Retry-After and fails clearly on a refused request', async function () {
    this.timeout(60_000);
    const agentId = String((await tool(fg, token, 'agent_create', { name: 'patient', instructions: 'Answer.' })).structured.id);
    llm.script.push({ status: 429, message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded', headers: { 'Retry-After': '2' } }, { content: 'done' });
    const answered = await tool(fg, token, 'agent_invoke', { agentId, message: 'Hi' });
    assert.equal(answered.structured.response, 'done');
    assert.equal(llm.requests.length, 2);
    const waited = llm.requests[1]!.at - llm.requests[0]!.at;
    assert.ok(waited >= 1900, `waited ${waited} ms for Retry-After: 2`);

    llm.script.push({ status: 400, message: "Invalid schema for function 'x'", code: 'invalid_function_parameters' });
    const refused = await tool(fg, token, 'agent_invoke', { agentId, message: 'Hi again' });
    assert.equal(refused.structured.status, 'FAILED');
    assert.match(String(refused.structured.error), /refused the request \(400\): Invalid schema for function 'x'/);
    assert.equal(llm.requests.length, 3, 'a 400 is not retried');
  });

  it('answers a RUNNING handle past the wait and the status tool reads the answer later', async function () {
    this.timeout(60_000);
    const agentId = String((await tool(fg, token, 'agent_create', { name: 'slow', instructions: 'Take your time.' })).structured.id);
    llm.script.push({ delayMs: 2500, then: { content: 'finally' } });
    const handle = await tool(fg, token, 'agent_invoke', { agentId, message: 'Hi', waitSeconds: 0 });
    assert.equal(handle.structured.status, 'RUNNING');
    const invocationId = String(handle.structured.invocationId);
    let status: Structured = {};
    for (let i = 0; i < 100 && status.status !== 'COMPLETE'; i++) {
      status = (await tool(fg, token, 'agent_invocation_status', { invocationId })).structured;
      if (status.status !== 'COMPLETE') await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(status.response, 'finally');
  });

  it('refuses an unknown server name or tool, listing the valid names and ids', async () => {
    const unknown = await tool(fg, token, 'agent_create', { name: 'x', instructions: 'x', servers: [{ name: 'Acme CRM', allTools: true }] });
    assert.equal(unknown.error?.code, -32000, 'a validation error (contract 7)');
    assert.match(unknown.error!.message, /no server "Acme CRM"/);
    assert.match(unknown.error!.message, /web-search/);
    assert.match(unknown.error!.message, new RegExp(`${crm.serverId} \\(custom: Acme CRM\\)`));
    const badTool = await tool(fg, token, 'agent_create', { name: 'x', instructions: 'x', servers: [{ name: 'web-search', tools: { crawl: {} } }] });
    assert.match(badTool.error!.message, /web-search has no tool crawl; its tools: search/);
    const byId = await tool(fg, token, 'agent_create', { name: 'crm', instructions: 'x', servers: [{ name: crm.serverId, allTools: true }] });
    assert.equal(byId.isError, false, JSON.stringify(byId));
  });

  it('updates only the fields given; servers replaces the list', async () => {
    const agentId = String((await tool(fg, token, 'agent_create', {
      name: 'before', description: 'kept', instructions: 'x', servers: [{ name: 'web-search', allTools: true }], limits: { maxTurns: 4 },
    })).structured.id);
    const updated = await tool(fg, token, 'agent-management_agent_update', { agentId, name: 'after', servers: [{ name: crm.serverId, tools: { find_customer: {} } }] });
    assert.equal(updated.structured.name, 'after');
    assert.equal(updated.structured.description, 'kept');
    assert.deepEqual(updated.structured.servers, [{ name: crm.serverId, tools: { find_customer: {} } }]);
    assert.equal((updated.structured.limits as { maxTurns: number }).maxTurns, 4);
    const deleted = await tool(fg, token, 'agent_delete', { agentId });
    assert.equal(deleted.structured.deleted, true);
    assert.equal((await tool(fg, token, 'agent_read', { agentId })).isError, true);
  });

  it('keeps organizations apart: another organization cannot read, invoke or list an agent, nor attach its servers', async () => {
    const agentId = String((await tool(fg, token, 'agent_create', { name: 'private', instructions: 'x' })).structured.id);
    const other = await createOrg(fg);
    const otherToken = (await runtimeToken(fg, other.adminToken)).token;
    const read = await tool(fg, otherToken, 'agent_read', { agentId });
    assert.equal(read.isError, true);
    assert.match(String(read.structured.error), /no agent .* in this organization/);
    const invoked = await tool(fg, otherToken, 'agent_invoke', { agentId, message: 'hi' });
    assert.equal(invoked.isError, true);
    assert.deepEqual((await tool(fg, otherToken, 'agent_list', {})).structured.agents, []);
    const attach = await tool(fg, otherToken, 'agent_create', { name: 'thief', instructions: 'x', servers: [{ name: crm.serverId, allTools: true }] });
    assert.match(attach.error!.message, /no server/);
    assert.doesNotMatch(attach.error!.message.split('valid names and ids:')[1] ?? '', new RegExp(crm.serverId));
    const viaApi = await fetch(`${fg.url}/api/v1/agents/${agentId}`, { headers: { Authorization: `Bearer ${other.adminToken}` } });
    assert.equal(viaApi.status, 404);
  });

  it('passes X-Pf-Forward-* headers of agent_invoke on to the tools the agent calls, never Authorization', async function () {
    this.timeout(60_000);
    const agentId = String((await tool(fg, token, 'agent_create', { name: 'crm-agent', instructions: 'x', servers: [{ name: crm.serverId, allTools: true }] })).structured.id);
    llm.script.push({ toolCalls: [{ name: `${crm.serverId}_find_customer`, arguments: { company: 'Acme' } }] }, { content: 'Acme is gold.' });
    crm.seen.length = 0;
    const answer = await rpc(fg, SERVER, token, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'agent_invoke', arguments: { agentId, message: 'Acme?' } } },
      { ...RPC_HEADERS, 'X-Pf-Forward-Tenant': 'acme-eu', 'X-Pf-Forward-Authorization': 'Bearer stolen', 'X-Other': 'no' });
    assert.equal((answer.body?.result?.structuredContent as Structured).response, 'Acme is gold.');
    assert.equal(crm.seen.length, 1);
    assert.deepEqual(crm.seen[0]?.forwardHeaders, { tenant: 'acme-eu' });
    assert.match(String(crm.seen[0]?.idempotencyKey), /^inv_.*:0:0$/);
  });

  it('serves the same operations under /api/v1/agents with the admin token', async function () {
    this.timeout(60_000);
    const created = await fg.admin<{ id: string; name: string }>('POST', '/api/v1/agents', { name: 'rest', instructions: 'Say hi.' });
    assert.equal(created.status, 201);
    const refused = await fg.admin<{ error: string; message: string }>('POST', '/api/v1/agents', { name: 'rest', instructions: 'x', servers: [{ name: 'nope', allTools: true }] });
    assert.equal(refused.status, 400);
    assert.match(refused.body.message, /valid names and ids: .*web-search/);
    llm.script.push({ content: 'hi' });
    const invoked = await fg.admin<{ status: string; response: string; chatId: string }>('POST', `/api/v1/agents/${created.body.id}/invoke`, { message: 'hello' });
    assert.equal(invoked.status, 200);
    assert.equal(invoked.body.response, 'hi');
    const chat = await fg.admin<{ messages: { role: string; content: string }[] }>('GET', `/api/v1/agents/chats/${invoked.body.chatId}`);
    assert.deepEqual(chat.body.messages.map((m) => m.content), ['hello', 'hi']);
    const patched = await fg.admin<{ name: string; instructions: string }>('PATCH', `/api/v1/agents/${created.body.id}`, { name: 'renamed' });
    assert.deepEqual([patched.body.name, patched.body.instructions], ['renamed', 'Say hi.']);
    assert.equal((await fg.admin('DELETE', `/api/v1/agents/${created.body.id}`)).status, 204);
    assert.equal((await fg.admin('GET', `/api/v1/agents/${created.body.id}`)).status, 404);
  });

  it('merges a PATCH with some of the limits into the stored ones over /api/v1/agents: the others are not reset to their defaults', async () => {
    type Limits = Record<string, number | null | undefined>;
    const limits = { maxTurns: 4, maxToolCalls: 7, timeoutSeconds: 120, toolResultChars: 2000, maxTokens: 5000, maxCostUsd: 2 };
    const created = await fg.admin<{ id: string; limits: Limits }>('POST', '/api/v1/agents', { name: 'bounded', instructions: 'x', limits });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.limits, limits);
    const path = `/api/v1/agents/${created.body.id}`;
    const patched = await fg.admin<{ limits: Limits }>('PATCH', path, { limits: { maxTurns: 6 } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body.limits, { ...limits, maxTurns: 6 });
    assert.deepEqual((await fg.admin<{ limits: Limits }>('GET', path)).body.limits, { ...limits, maxTurns: 6 }, 'as stored');
    // null clears a budget (no limit); the others stay
    const cleared = await fg.admin<{ limits: Limits }>('PATCH', path, { limits: { maxTokens: null, timeoutSeconds: 300 } });
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.equal(cleared.body.limits.maxTokens ?? null, null);
    assert.deepEqual({ ...cleared.body.limits, maxTokens: undefined }, { ...limits, maxTurns: 6, timeoutSeconds: 300, maxTokens: undefined });
    // a bound out of range refuses the whole update
    const refused = await fg.admin<{ message: string }>('PATCH', path, { name: 'renamed', limits: { maxToolCalls: 3, maxTurns: 0 } });
    assert.equal(refused.status, 400);
    assert.match(refused.body.message, /maxTurns/);
    const after = (await fg.admin<{ name: string; limits: Limits }>('GET', path)).body;
    assert.deepEqual([after.name, after.limits.maxToolCalls, after.limits.maxTurns], ['bounded', 7, 6]);
    // a PATCH without limits leaves them all
    assert.deepEqual((await fg.admin<{ limits: Limits }>('PATCH', path, { description: 'd' })).body.limits, cleared.body.limits);
    assert.equal((await fg.admin('DELETE', path)).status, 204);
  });
});

describe('agents without a model configured', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startToolFlowgate();
  });
  after(async () => fg?.stop());

  it('refuses agent_invoke with a message naming the variables, and everything else still works', async () => {
    const { token } = await runtimeToken(fg);
    const created = await tool(fg, token, 'agent_create', { name: 'idle', instructions: 'x' });
    assert.equal(created.isError, false);
    const invoked = await tool(fg, token, 'agent_invoke', { agentId: created.structured.id, message: 'hi' });
    assert.equal(invoked.isError, true);
    assert.match(String(invoked.structured.error), /FLOWGATE_LLM_BASE_URL and FLOWGATE_LLM_MODEL/);
    const viaApi = await fg.admin<{ message: string }>('POST', `/api/v1/agents/${String(created.structured.id)}/invoke`, { message: 'hi' });
    assert.equal(viaApi.status, 503);
    assert.equal((await tool(fg, token, 'agent_list', {})).isError, false);
  });
});
