import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { publishWorkflow, pollStatus, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { callTool, runtimeToken, startFakeSearch, startToolFlowgate, type FakeSearch } from '../tools/support';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>;
  components: Record<string, unknown>;
};

describe('OpenAPI document', () => {
  let fg: TestFlowgate;
  let search: FakeSearch;
  let doc: Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  let checked = 0;

  /** Validates a real answer against the document's schema for that path, method and status. */
  async function conforms(template: string, method: string, response: Response): Promise<unknown> {
    const text = await response.text();
    const operation = doc.paths[template]?.[method];
    assert.ok(operation, `the document has no ${method.toUpperCase()} ${template}`);
    const described = operation.responses[String(response.status)];
    assert.ok(described, `${method.toUpperCase()} ${template} does not document status ${response.status} (body ${text.slice(0, 200)})`);
    if (text === '') return undefined;
    const schema = described.content?.['application/json']?.schema;
    assert.ok(schema, `${method.toUpperCase()} ${template} ${response.status} documents no JSON body`);
    const body = JSON.parse(text) as unknown;
    const validate = ajv.compile({ ...schema, components: doc.components });
    assert.ok(validate(body), `${method.toUpperCase()} ${template} ${response.status}: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 500)}`);
    checked++;
    return body;
  }

  const admin = (method: string, pathname: string, body?: unknown) => fg.request(pathname, {
    method, headers: { Authorization: `Bearer ${fg.adminToken}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

  before(async () => {
    search = await startFakeSearch();
    fg = await startToolFlowgate({ FLOWGATE_SEARCH_URL: search.url });
    const response = await fg.request('/api/v1/openapi.json');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    doc = (await response.json()) as Doc;
  });
  after(async () => {
    await fg?.stop();
    await search?.close();
  });

  it('is a valid OpenAPI 3.1 document (swagger-parser) describing every surface', async () => {
    assert.equal(doc.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(doc) as never);
    for (const path of ['/ext/triggers/{triggerId}', '/ext/webhook/{apiKey}/triggers/{triggerId}', '/ext/webhook/{apiKey}/runs/{automationId}/{runId}/status',
      '/ext/webhook/{apiKey}/runs/{automationId}/{runId}/results', '/files/{key}', '/approvals/{token}', '/api/v1/workflows', '/api/v1/triggers',
      '/api/v1/api-keys', '/api/v1/runs', '/auth/token', '/tools/{server}', '/metrics']) {
      assert.ok(doc.paths[path], `no ${path}`);
    }
  });

  it('describes the real answers of triggers, polling, management, the tool gateway and errors', async () => {
    const p: Published = await publishWorkflow(fg, { name: 'doc', steps: [{ name: 'Hi', type: 'template', template: 'hi {{inputs.who}}' }] });
    const slow: Published = await publishWorkflow(fg, { name: 'slow', steps: [{ name: 'Nap', type: 'delay', duration: '2s' }] });
    const ask: Published = await publishWorkflow(fg, { name: 'ask', steps: [{ name: 'Ask', type: 'approval', approvers: ['ann'], timeout: '5m' }] });
    const trig = '/ext/triggers/{triggerId}';

    const sync = (await conforms(trig, 'post', await trigger(fg, p, { who: 'ann' }, { 'x-api-wait': 'true' }))) as { id: string };
    await conforms(trig, 'post', await trigger(fg, p, { who: 'bob' }));
    const handle = (await conforms(trig, 'post', await trigger(fg, slow, {}, { Prefer: 'wait=1' }))) as { runId: string };
    await conforms(trig, 'post', await trigger(fg, { ...p, apiKey: 'fgk_wrong_key_wrong_key' }, {}));
    await conforms(trig, 'post', await trigger(fg, { ...p, triggerId: 'trg_nope' }, {}));
    await conforms(trig, 'post', await fg.request(`/ext/triggers/${p.triggerId}`, { method: 'POST', headers: { 'X-API-KEY': p.apiKey, 'Content-Type': 'text/plain' }, body: 'x' }));
    await conforms('/ext/webhook/{apiKey}/triggers/{triggerId}', 'get', await fg.request(`/ext/webhook/${p.apiKey}/triggers/${p.triggerId}?who=cy&x-api-wait=true`, { headers: { 'x-api-wait': 'true' } }));

    const runBase = (q: Published, runId: string) => `/ext/webhook/${q.apiKey}/runs/${q.workflowId}/${runId}`;
    const statusTpl = '/ext/webhook/{apiKey}/runs/{automationId}/{runId}/status';
    const resultsTpl = '/ext/webhook/{apiKey}/runs/{automationId}/{runId}/results';
    await conforms(statusTpl, 'get', await fg.request(`${runBase(p, sync.id)}/status`));
    await conforms(resultsTpl, 'get', await fg.request(`${runBase(p, sync.id)}/results`));
    await conforms(statusTpl, 'get', await fg.request(`${runBase(slow, handle.runId)}/status`));
    await conforms(statusTpl, 'get', await fg.request(`${runBase(p, 'run_nope')}/status`));

    const asked = (await trigger(fg, ask, {})).headers.get('X-Pf-Run-Id') ?? '';
    await pollStatus(fg, ask, asked, (s) => s.status === 'PAUSED');
    await conforms(statusTpl, 'get', await fg.request(`${runBase(ask, asked)}/status`));
    await conforms('/api/v1/runs/{runId}/approvals', 'get', await admin('GET', `/api/v1/runs/${asked}/approvals`));
    await conforms('/ext/webhook/{apiKey}/runs/{automationId}/{runId}/approval', 'post', await fg.request(`${runBase(ask, asked)}/approval`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'bogus' }),
    }));
    await conforms('/ext/webhook/{apiKey}/runs/{automationId}/{runId}/approval', 'post', await fg.request(`${runBase(ask, asked)}/approval`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'approve', approver: 'ann' }),
    }));
    await pollStatus(fg, ask, asked);
    await conforms(statusTpl, 'get', await fg.request(`${runBase(ask, asked)}/status`));
    await conforms(resultsTpl, 'get', await fg.request(`${runBase(ask, asked)}/results`));

    await conforms('/api/v1/workflows', 'get', await admin('GET', '/api/v1/workflows'));
    await conforms('/api/v1/workflows', 'get', await fg.request('/api/v1/workflows'));
    const created = (await conforms('/api/v1/workflows', 'post', await admin('POST', '/api/v1/workflows', { name: 'w', steps: [{ name: 'T', type: 'template', template: 'x' }] }))) as { id: string };
    await conforms('/api/v1/workflows', 'post', await admin('POST', '/api/v1/workflows', { name: 'w', steps: [] }));
    await conforms('/api/v1/workflows/{id}', 'get', await admin('GET', `/api/v1/workflows/${created.id}`));
    await conforms('/api/v1/workflows/{id}', 'put', await admin('PUT', `/api/v1/workflows/${created.id}`, { name: 'w2', steps: [{ name: 'T', type: 'template', template: 'y' }] }));
    await conforms('/api/v1/workflows/{id}/publish', 'post', await admin('POST', `/api/v1/workflows/${created.id}/publish`));
    const trg = (await conforms('/api/v1/triggers', 'post', await admin('POST', '/api/v1/triggers', { workflowId: created.id, name: 't' }))) as { id: string };
    await conforms('/api/v1/triggers', 'get', await admin('GET', '/api/v1/triggers'));
    await conforms('/api/v1/triggers/{id}', 'delete', await admin('DELETE', `/api/v1/triggers/${trg.id}`));
    await conforms('/api/v1/workflows/{id}', 'delete', await admin('DELETE', `/api/v1/workflows/${created.id}`));
    await conforms('/api/v1/workflows/{id}', 'get', await admin('GET', `/api/v1/workflows/${created.id}`));
    const key = (await conforms('/api/v1/api-keys', 'post', await admin('POST', '/api/v1/api-keys', { name: 'k' }))) as { id: string };
    await conforms('/api/v1/api-keys', 'get', await admin('GET', '/api/v1/api-keys'));
    await conforms('/api/v1/api-keys/{id}', 'delete', await admin('DELETE', `/api/v1/api-keys/${key.id}`));
    await conforms('/api/v1/runs', 'get', await admin('GET', '/api/v1/runs?limit=10'));
    await conforms('/api/v1/runs', 'get', await admin('GET', '/api/v1/runs?status=NOPE'));
    await conforms('/api/v1/runs/{runId}', 'get', await admin('GET', `/api/v1/runs/${sync.id}`));
    await conforms('/api/v1/runs/{runId}/results', 'get', await admin('GET', `/api/v1/runs/${sync.id}/results`));
    await conforms('/api/v1/runs/{runId}/cancel', 'post', await admin('POST', `/api/v1/runs/${sync.id}/cancel`));
    await conforms('/api/v1/orgs', 'post', await admin('POST', '/api/v1/orgs', { name: 'another' }));
    await conforms('/healthz', 'get', await fg.request('/healthz'));

    await conforms('/auth/token', 'post', await fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': p.apiKey } }));
    await conforms('/auth/token', 'post', await fg.request('/auth/token', { method: 'POST' }));
    const { token } = await runtimeToken(fg);
    const rpc = (body: unknown, auth = token) => fg.request('/tools/web-search', {
      method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json', Authorization: `Bearer ${auth}` }, body: JSON.stringify(body),
    });
    await conforms('/tools/{server}', 'post', await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    await conforms('/tools/{server}', 'post', await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search', arguments: { query: 'otters' } } }));
    await conforms('/tools/{server}', 'post', await rpc([{ jsonrpc: '2.0', id: 3, method: 'ping' }, { jsonrpc: '2.0', id: 4, method: 'nope' }]));
    await conforms('/tools/{server}', 'post', await rpc({ jsonrpc: '2.0', id: 5, method: 'ping' }, 'not-a-token'));
    assert.equal((await callTool(fg, 'web-search', token, 'search', { query: 'x' })).status, 200);
    assert.ok(checked >= 40, `only ${checked} bodies checked`);
  });
});
