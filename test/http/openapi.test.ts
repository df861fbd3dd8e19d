import assert from 'node:assert/strict';
import http from 'node:http';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { publishWorkflow, pollStatus, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback } from '../support/loopback';
import { callTool, runtimeToken, startFakeSearch, startToolFlowgate, type FakeSearch } from '../tools/support';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** The events of a complete text/event-stream body. */
function parseEvents(text: string): { id?: string; event: string; data: string }[] {
  return text.split(/\r?\n\r?\n/).map((block) => {
    const fields: { id?: string; event?: string; data: string[] } = { data: [] };
    for (const line of block.split(/\r?\n/)) {
      const match = /^(id|event|data): ?(.*)$/.exec(line);
      if (match?.[1] === 'id') fields.id = match[2];
      else if (match?.[1] === 'event') fields.event = match[2];
      else if (match?.[1] === 'data') fields.data.push(match[2] ?? '');
    }
    return fields;
  }).filter((f) => f.event !== undefined).map((f) => ({ ...(f.id === undefined ? {} : { id: f.id }), event: f.event!, data: f.data.join('\n') }));
}

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

  const admin = (method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}) => fg.request(pathname, {
    method, headers: { Authorization: `Bearer ${fg.adminToken}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

  /**
   * Checks a Server-Sent Events answer against the document: the status and text/event-stream are
   * documented, and the `end` event carries a RunStatusBody. Answers the end event's id.
   */
  async function conformsStream(template: string, response: Response): Promise<string> {
    const text = await response.text();
    const described = doc.paths[template]?.get?.responses[String(response.status)];
    assert.ok(described, `GET ${template} does not document status ${response.status} (${text.slice(0, 200)})`);
    assert.ok(described.content?.['text/event-stream'], `GET ${template} ${response.status} documents no event stream`);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = parseEvents(text);
    const validate = ajv.compile({ $ref: '#/components/schemas/RunStatusBody', components: doc.components });
    for (const event of events) {
      assert.ok(['step', 'gap', 'end'].includes(event.event), `an undocumented event ${event.event}`);
      const data = JSON.parse(event.data) as Record<string, unknown>;
      if (event.event === 'step') assert.deepEqual(Object.keys(data).sort(), ['at', 'name', 'seq', 'status', 'stepIndex']);
      if (event.event === 'end') assert.ok(validate(data), `the end event of GET ${template}: ${ajv.errorsText(validate.errors)}`);
    }
    const end = events.find((e) => e.event === 'end');
    assert.ok(end?.id, `GET ${template}: no end event in ${text.slice(0, 500)}`);
    checked++;
    return end.id;
  }

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

  it('documents every route the gateway\'s routers register, and nothing they do not', () => {
    const served = new Set(fg.routes.map((r) => `${r.method} ${r.path}`));
    assert.ok(served.size > 60, `only ${served.size} routes found: ${[...served].join(', ')}`);
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item)
      .filter((method) => HTTP_METHODS.includes(method)).map((method) => `${method.toUpperCase()} ${path}`)));
    assert.deepEqual([...served].filter((route) => !documented.has(route)).sort(), [], 'routes the OpenAPI document lacks');
    assert.deepEqual([...documented].filter((route) => !served.has(route)).sort(), [], 'documented routes the gateway does not serve');
  });

  it('describes the real answers of live status, callbacks, rerun and resume, trigger disable and enable, and schedules', async function () {
    this.timeout(120_000);
    const hooks = await listenOnLoopback(http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end());
    }));
    try {
      const p: Published = await publishWorkflow(fg, { name: 'doc-live', steps: [{ name: 'Hi', type: 'template', template: 'hi' }] });
      const failing: Published = await publishWorkflow(fg, {
        name: 'doc-failing', steps: [{ name: 'Ok', type: 'template', template: 'ok' }, { name: 'Boom', type: 'code', source: 'throw new Error("boom")' }],
      });
      const trig = '/ext/triggers/{triggerId}';
      const done = (await conforms(trig, 'post', await trigger(fg, p, {}, { 'x-api-wait': 'true', 'X-Pf-Callback-Url': `${hooks.url}/hook` }))) as { id: string };
      await conforms(trig, 'post', await trigger(fg, p, {}, { 'X-Pf-Callback-Url': 'ftp://example.com/' }));

      // live status: ETag, 304, the long poll, on both status paths
      const statusTpl = '/ext/webhook/{apiKey}/runs/{automationId}/{runId}/status';
      const statusPath = `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${done.id}/status`;
      const first = await fg.request(statusPath);
      const etag = first.headers.get('etag') ?? '';
      assert.ok(etag);
      const withCallback = (await conforms(statusTpl, 'get', first)) as { callback?: { state: string } };
      assert.ok(withCallback.callback, 'a run with a callback URL shows its callback');
      await conforms(statusTpl, 'get', await fg.request(statusPath, { headers: { 'If-None-Match': etag, Prefer: 'wait=1' } }));
      await conforms(statusTpl, 'get', await fg.request(statusPath, { headers: { Prefer: 'wait=1' } }));
      const current = await admin('GET', `/api/v1/runs/${done.id}`);
      const adminEtag = current.headers.get('etag') ?? '';
      await conforms('/api/v1/runs/{runId}', 'get', current);
      const notModified = await admin('GET', `/api/v1/runs/${done.id}`, undefined, { 'If-None-Match': adminEtag });
      assert.ok(notModified.status === 304 || notModified.status === 200, String(notModified.status));
      await conforms('/api/v1/runs/{runId}', 'get', notModified);

      // the status streams; after the end event, 204; a malformed Last-Event-ID, 400
      await conformsStream(`${statusTpl}/stream`, await fg.request(`${statusPath}/stream`));
      const endId = await conformsStream('/api/v1/runs/{runId}/stream', await admin('GET', `/api/v1/runs/${done.id}/stream`));
      await conforms('/api/v1/runs/{runId}/stream', 'get', await admin('GET', `/api/v1/runs/${done.id}/stream`, undefined, { 'Last-Event-ID': endId }));
      await conforms('/api/v1/runs/{runId}/stream', 'get', await admin('GET', `/api/v1/runs/${done.id}/stream`, undefined, { 'Last-Event-ID': 'x' }));
      await conforms(`${statusTpl}/stream`, 'get', await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/run_nope/status/stream`));

      // rerun and resume
      const rerun = (await conforms('/api/v1/runs/{runId}/rerun', 'post', await admin('POST', `/api/v1/runs/${done.id}/rerun`, { version: 'same' }))) as { runId: string };
      assert.notEqual(rerun.runId, done.id);
      await conforms('/api/v1/runs/{runId}/rerun', 'post', await admin('POST', `/api/v1/runs/${done.id}/rerun`, { version: 'nope' }));
      await conforms('/api/v1/runs/{runId}/rerun', 'post', await admin('POST', '/api/v1/runs/run_nope/rerun', {}));
      await conforms('/api/v1/runs/{runId}/resume', 'post', await admin('POST', `/api/v1/runs/${done.id}/resume`));
      const failed = (await (await trigger(fg, failing, {}, { 'x-api-wait': 'true' })).json()) as { id: string; status: string };
      assert.equal(failed.status, 'FAILED');
      await conforms('/api/v1/runs/{runId}/resume', 'post', await admin('POST', `/api/v1/runs/${failed.id}/resume`));
      await conforms('/api/v1/runs', 'get', await admin('GET', '/api/v1/runs?status=TIMEOUT&limit=5'));
      await conforms('/api/v1/runs', 'get', await admin('GET', '/api/v1/runs?status=FAILED&limit=5'));

      // trigger disable and enable, read
      await conforms('/api/v1/triggers/{id}/disable', 'post', await admin('POST', `/api/v1/triggers/${p.triggerId}/disable`));
      await conforms(trig, 'post', await trigger(fg, p, {}));
      await conforms('/api/v1/triggers/{id}/enable', 'post', await admin('POST', `/api/v1/triggers/${p.triggerId}/enable`));
      await conforms('/api/v1/triggers/{id}/enable', 'post', await admin('POST', '/api/v1/triggers/trg_nope/enable'));
      await conforms('/api/v1/triggers/{id}', 'get', await admin('GET', `/api/v1/triggers/${p.triggerId}`));

      // schedules
      const schedulePath = `/api/v1/triggers/${p.triggerId}/schedule`;
      await conforms('/api/v1/triggers/{id}/schedule', 'put', await admin('PUT', schedulePath, { interval: { every: '1h' }, paused: true, note: 'doc' }));
      await conforms('/api/v1/triggers/{id}/schedule', 'put', await admin('PUT', schedulePath, { cron: '0 9 * * 1', timeZone: 'Europe/Berlin' }));
      await conforms('/api/v1/triggers/{id}/schedule', 'put', await admin('PUT', schedulePath, { cron: '0 9 * * 1', bogus: 1 }));
      await conforms('/api/v1/triggers/{id}', 'get', await admin('GET', `/api/v1/triggers/${p.triggerId}`));
      // a scheduled trigger changed in place (its schedule follows the new priority), and refused changes
      const patchedResponse = await admin('PATCH', `/api/v1/triggers/${p.triggerId}`, { priority: 2, callbackUrl: null });
      assert.equal(patchedResponse.status, 200);
      const patched = (await conforms('/api/v1/triggers/{id}', 'patch', patchedResponse)) as { id: string; priority: number | null; schedule: unknown };
      assert.deepEqual([patched.id, patched.priority, patched.schedule !== null], [p.triggerId, 2, true]);
      await conforms('/api/v1/triggers/{id}', 'patch', await admin('PATCH', '/api/v1/triggers/trg_nope', { priority: 2 }));
      await conforms('/api/v1/triggers/{id}', 'patch', await admin('PATCH', `/api/v1/triggers/${p.triggerId}`, { bogus: 1 }));
      await conforms('/api/v1/triggers/{id}', 'patch', await admin('PATCH', `/api/v1/triggers/${p.triggerId}`, { designatedOutput: { stepIndex: 99 } }));
      await conforms('/api/v1/triggers', 'get', await admin('GET', '/api/v1/triggers'));
      await conforms('/api/v1/schedules', 'get', await admin('GET', '/api/v1/schedules'));
      await conforms('/api/v1/triggers/{id}/schedule/resume', 'post', await admin('POST', `${schedulePath}/resume`, {}));
      await conforms('/api/v1/triggers/{id}/schedule/pause', 'post', await admin('POST', `${schedulePath}/pause`, { note: 'quiet' }));
      await conforms('/api/v1/triggers/{id}/schedule', 'delete', await admin('DELETE', schedulePath));
      await conforms('/api/v1/triggers/{id}/schedule', 'delete', await admin('DELETE', schedulePath));
      const scheduled = (await conforms('/api/v1/triggers', 'post', await admin('POST', '/api/v1/triggers', {
        workflowId: p.workflowId, callbackUrl: `${hooks.url}/hook`, schedule: { interval: { every: '1h' }, paused: true },
      }))) as { id: string };
      await conforms('/api/v1/triggers/{id}', 'delete', await admin('DELETE', `/api/v1/triggers/${scheduled.id}`));

      // the callback signing secret
      await conforms('/api/v1/webhook-secret', 'get', await admin('GET', '/api/v1/webhook-secret'));
      await conforms('/api/v1/webhook-secret/rotate', 'post', await admin('POST', '/api/v1/webhook-secret/rotate'));
    } finally {
      await hooks.close();
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
