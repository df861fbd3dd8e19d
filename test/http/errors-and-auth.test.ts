/**
 * Error answers and credentials of the gateway, against a real flowgate over loopback HTTP:
 * the API trigger (interface.md 4.1), polling (4.3, 4.4), the management API and /healthz
 * (ARCHITECTURE.md, "Management API" and "Decisions for what the contract leaves open").
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { openSqlite } from '../../src/registry/sqlite';
import { getJson, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';

const hello = {
  name: 'hello',
  steps: [{ name: 'Say', type: 'template', format: 'plaintext', template: 'hello {{inputs.who}}' }],
};

interface ErrorBody {
  error: string;
  message: string;
}

interface SyncBody {
  id: string;
  automationVersion: number;
  status: string;
  results: { result: { result: string } }[];
}

interface WorkflowBody {
  id: string;
  name: string;
  draft: { name: string; steps: { template?: string }[] };
  publishedVersion: number | null;
  versions: number[];
}

/** A credential of the right shape that was never issued. */
const unknownKey = (): string => `fgk_${randomBytes(32).toString('base64url')}`;

/**
 * Reads an error answer and checks what every error must be: JSON, exactly `{error, message}`,
 * both strings, no stack trace. Returns the body for further checks.
 */
async function expectError(response: Response, status: number, code?: string): Promise<ErrorBody> {
  const text = await response.text();
  assert.equal(response.status, status, `expected ${status}, got ${response.status}: ${text}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/, `content type of: ${text}`);
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], text);
  assert.equal(typeof body.error, 'string');
  assert.equal(typeof body.message, 'string');
  assert.ok((body.message as string).length > 0, 'the message is a sentence, not empty');
  assert.doesNotMatch(text, /\bat \S+ \(|\bat (?:async )?\/|\\n\s+at |node:internal|\.ts:\d+|\.js:\d+/, `a stack trace leaked: ${text}`);
  if (code !== undefined) assert.equal(body.error, code, text);
  return body as unknown as ErrorBody;
}

describe('gateway errors and credentials', () => {
  let fg: TestFlowgate;

  /** A management call with any bearer token (or none). */
  async function as<T = unknown>(token: string | undefined, method: string, pathname: string, body?: unknown): Promise<{ status: number; body: T; response: Response; text: string }> {
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fg.request(pathname, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.clone().text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T, response, text };
  }

  /** A new organization and an API key of its own, made the way an operator would. */
  async function otherOrg(): Promise<{ orgId: string; adminToken: string; apiKey: string }> {
    const org = await fg.admin<{ id: string; name: string; adminToken: string }>('POST', '/api/v1/orgs', { name: `other-${randomBytes(4).toString('hex')}` });
    assert.equal(org.status, 201, JSON.stringify(org.body));
    assert.ok(org.body.adminToken);
    const key = await as<{ id: string; key: string }>(org.body.adminToken, 'POST', '/api/v1/api-keys', { name: 'theirs' });
    assert.equal(key.status, 201, key.text);
    return { orgId: org.body.id, adminToken: org.body.adminToken, apiKey: key.body.key };
  }

  function post(triggerId: string, init: { key?: string; contentType?: string; body?: string; headers?: Record<string, string> }): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (init.key !== undefined) headers['X-API-KEY'] = init.key;
    if (init.contentType !== undefined) headers['Content-Type'] = init.contentType;
    return fg.request(`/ext/triggers/${triggerId}`, { method: 'POST', headers, body: init.body });
  }

  async function completedRun(p: Published): Promise<string> {
    const response = await trigger(fg, p, { who: 'run' }, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200);
    const body = (await response.json()) as SyncBody;
    assert.equal(body.status, 'COMPLETE');
    return body.id;
  }

  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  describe('API trigger (POST /ext/triggers/{triggerId})', () => {
    it('answers 401 when X-API-KEY is missing', async () => {
      const p = await publishWorkflow(fg, hello);
      await expectError(await post(p.triggerId, { contentType: 'application/json', body: '{"who":"x"}' }), 401, 'unauthorized');
    });

    it('answers 401 to an unknown key, well-formed or not', async () => {
      const p = await publishWorkflow(fg, hello);
      await expectError(await post(p.triggerId, { key: unknownKey(), contentType: 'application/json', body: '{}' }), 401, 'unauthorized');
      await expectError(await post(p.triggerId, { key: 'nope', contentType: 'application/json', body: '{}' }), 401, 'unauthorized');
      await expectError(await post(p.triggerId, { key: `${p.apiKey}x`, contentType: 'application/json', body: '{}' }), 401, 'unauthorized');
    });

    it('stops accepting a revoked key at once, for triggers and polling alike', async () => {
      const p = await publishWorkflow(fg, hello);
      const runId = await completedRun(p);
      const revoke = await fg.admin('DELETE', `/api/v1/api-keys/${p.apiKeyId}`);
      assert.equal(revoke.status, 204);
      assert.equal(revoke.body, undefined);
      await expectError(await trigger(fg, p, { who: 'late' }), 401, 'unauthorized');
      for (const what of ['status', 'results']) {
        await expectError(await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/${what}`), 401, 'unauthorized');
      }
      // Revoking twice, or a key that never existed, is a 404 of the management API.
      await expectError((await as(fg.adminToken, 'DELETE', `/api/v1/api-keys/${p.apiKeyId}`)).response, 404);
      await expectError((await as(fg.adminToken, 'DELETE', '/api/v1/api-keys/key_doesnotexist')).response, 404);
    });

    it('answers 404 unknown_trigger to a key of another organization, exactly as for a trigger that does not exist', async () => {
      const p = await publishWorkflow(fg, hello);
      const them = await otherOrg();
      const missingId = 'trg_doesnotexist00';
      const missing = await expectError(await post(missingId, { key: them.apiKey, contentType: 'application/json', body: '{}' }), 404, 'unknown_trigger');
      const foreign = await expectError(await post(p.triggerId, { key: them.apiKey, contentType: 'application/json', body: '{}' }), 404, 'unknown_trigger');
      assert.equal(foreign.message, missing.message.replace(missingId, p.triggerId), 'the answer must not tell a foreign trigger from a missing one');
      // and the trigger still works for its own organization
      assert.equal((await trigger(fg, p, { who: 'owner' })).status, 200);
    });

    it('answers 404 {error: unknown_trigger, message} to an unknown trigger', async () => {
      const p = await publishWorkflow(fg, hello);
      const body = await expectError(await post('trg_nosuchtrigger1', { key: p.apiKey, contentType: 'application/json', body: '{}' }), 404, 'unknown_trigger');
      assert.match(body.message, /trg_nosuchtrigger1/);
    });

    it('answers 400 to malformed JSON', async () => {
      const p = await publishWorkflow(fg, hello);
      for (const bad of ['{"who":', '{who: 1}', "{'who':'x'}", '{"who":"x"}}']) {
        const body = await expectError(await post(p.triggerId, { key: p.apiKey, contentType: 'application/json', body: bad }), 400);
        assert.match(body.message, /JSON/i, `for ${bad}`);
      }
    });

    it('answers 400 to a JSON body that is an array or a scalar, not an object of inputs', async () => {
      const p = await publishWorkflow(fg, hello);
      for (const bad of ['[]', '[{"who":"x"}]', '42', '"who"', 'true']) {
        await expectError(await post(p.triggerId, { key: p.apiKey, contentType: 'application/json', body: bad }), 400);
      }
    });

    it('answers 400 to a JSON null body, which is a scalar and not an object of inputs (and starts no run)', async () => {
      const p = await publishWorkflow(fg, hello);
      const response = await post(p.triggerId, { key: p.apiKey, contentType: 'application/json', body: 'null' });
      assert.equal(response.headers.get('X-Pf-Run-Id'), null, 'no run may start for a rejected body');
      await expectError(response, 400);
    });

    it('answers 415 to a text/plain body', async () => {
      const p = await publishWorkflow(fg, hello);
      await expectError(await post(p.triggerId, { key: p.apiKey, contentType: 'text/plain', body: 'who=x' }), 415, 'unsupported_media_type');
    });

    it('answers 400 to x-api-wait other than "true" or "false"', async () => {
      const p = await publishWorkflow(fg, hello);
      const body = await expectError(await trigger(fg, p, { who: 'x' }, { 'x-api-wait': 'maybe' }), 400);
      assert.match(body.message, /x-api-wait/i);
    });

    it('takes x-api-wait in any case (contract 4.1: true or false): TRUE waits for the run, False answers at once', async () => {
      const p = await publishWorkflow(fg, hello);
      const waited = await trigger(fg, p, { who: 'loud' }, { 'x-api-wait': 'TRUE' });
      assert.equal(waited.status, 200);
      assert.equal(((await waited.json()) as SyncBody).status, 'COMPLETE');
      const started = await trigger(fg, p, { who: 'quiet' }, { 'x-api-wait': 'False' });
      assert.equal(started.status, 200);
      assert.equal(await started.text(), '', 'asynchronous: an empty body');
      assert.ok(started.headers.get('X-Pf-Run-Id'));
    });

    it('answers 405 {error, message} to PUT and DELETE, naming POST as allowed', async () => {
      const p = await publishWorkflow(fg, hello);
      for (const method of ['PUT', 'DELETE']) {
        const response = await fg.request(`/ext/triggers/${p.triggerId}`, { method, headers: { 'X-API-KEY': p.apiKey } });
        await expectError(response, 405, 'method_not_allowed');
        // RFC 9110 section 15.5.6: a 405 must carry Allow.
        assert.match(response.headers.get('allow') ?? '', /\bPOST\b/, `Allow header of ${method}`);
      }
    });

    it('answers 404 JSON to an unknown path', async () => {
      for (const pathname of ['/ext/nothing-here', '/no/such/endpoint', '/ext/triggers', '/ext/triggers/a/b']) {
        await expectError(await fg.request(pathname, { headers: { 'X-API-KEY': unknownKey() } }), 404);
      }
    });

    it('matches paths case-insensitively, as its routers always have, whichever router serves them', async () => {
      const p = await publishWorkflow(fg, hello);
      assert.equal((await fg.request('/HEALTHZ')).status, 200);
      const started = await fg.request(`/EXT/Triggers/${p.triggerId}`, { method: 'POST', headers: { 'X-API-KEY': p.apiKey, 'Content-Type': 'application/json' }, body: '{"who":"caps"}' });
      assert.equal(started.status, 200, await started.text());
      await expectError(await fg.request(`/Ext/triggers/${p.triggerId}`, { method: 'PUT', headers: { 'X-API-KEY': p.apiKey } }), 405, 'method_not_allowed');
      await expectError(await fg.request('/%65xt/nothing-here'), 404);
    });
  });

  describe('polling (GET /ext/webhook/{apiKey}/runs/{automationId}/{runId}/status|results)', () => {
    it('answers 401 to an unknown key', async () => {
      const p = await publishWorkflow(fg, hello);
      const runId = await completedRun(p);
      for (const what of ['status', 'results']) {
        await expectError(await fg.request(`/ext/webhook/${unknownKey()}/runs/${p.workflowId}/${runId}/${what}`), 401, 'unauthorized');
        await expectError(await fg.request(`/ext/webhook/short/runs/${p.workflowId}/${runId}/${what}`), 401, 'unauthorized');
      }
    });

    it("answers 404 unknown_run to another organization's key, exactly as for a run that does not exist", async () => {
      const p = await publishWorkflow(fg, hello);
      const runId = await completedRun(p);
      const them = await otherOrg();
      for (const what of ['status', 'results']) {
        const foreign = await expectError(await fg.request(`/ext/webhook/${them.apiKey}/runs/${p.workflowId}/${runId}/${what}`), 404, 'unknown_run');
        const missingId = '00000000-0000-4000-8000-000000000000';
        const missing = await expectError(await fg.request(`/ext/webhook/${them.apiKey}/runs/${p.workflowId}/${missingId}/${what}`), 404, 'unknown_run');
        assert.equal(foreign.message, missing.message.replace(missingId, runId));
      }
      // the owner still sees it
      assert.equal((await getJson(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/status`)).status, 200);
    });

    it('answers 404 unknown_run to a run id that does not exist', async () => {
      const p = await publishWorkflow(fg, hello);
      for (const what of ['status', 'results']) {
        for (const runId of ['6f1c1f4e-1111-4222-8333-444455556666', 'not-a-run']) {
          await expectError(await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/${what}`), 404, 'unknown_run');
        }
      }
    });

    it("answers 404 unknown_run to a run of automation A asked under automation B's id (same organization)", async () => {
      const a = await publishWorkflow(fg, hello);
      const b = await publishWorkflow(fg, { ...hello, name: 'hello-b' });
      const runId = await completedRun(a);
      for (const what of ['status', 'results']) {
        await expectError(await fg.request(`/ext/webhook/${a.apiKey}/runs/${b.workflowId}/${runId}/${what}`), 404, 'unknown_run');
        await expectError(await fg.request(`/ext/webhook/${b.apiKey}/runs/${b.workflowId}/${runId}/${what}`), 404, 'unknown_run');
        assert.equal((await fg.request(`/ext/webhook/${b.apiKey}/runs/${a.workflowId}/${runId}/${what}`)).status, 200, 'any key of the org reads its runs');
      }
    });
  });

  describe('management API (/api/v1)', () => {
    it('answers 401 without a bearer token or with an invalid one', async () => {
      await expectError((await as(undefined, 'GET', '/api/v1/workflows/wf_x')).response, 401, 'unauthorized');
      await expectError((await as(`fga_${randomBytes(32).toString('base64url')}`, 'GET', '/api/v1/workflows/wf_x')).response, 401, 'unauthorized');
      await expectError((await as('x', 'POST', '/api/v1/workflows', hello)).response, 401, 'unauthorized');
      const basic = await fg.request('/api/v1/api-keys', { method: 'POST', headers: { Authorization: `Basic ${Buffer.from(`admin:${fg.adminToken}`).toString('base64')}` } });
      await expectError(basic, 401, 'unauthorized');
      // An API key is not an admin token.
      const p = await publishWorkflow(fg, hello);
      await expectError((await as(p.apiKey, 'GET', `/api/v1/workflows/${p.workflowId}`)).response, 401, 'unauthorized');
    });

    it("answers 403 to POST /api/v1/orgs with an organization admin's token that is not the instance administrator's", async () => {
      const them = await otherOrg();
      await expectError((await as(them.adminToken, 'POST', '/api/v1/orgs', { name: 'sneaky' })).response, 403, 'forbidden');
    });

    it('rotates an organization\'s admin token: the old one stops working at once', async () => {
      const them = await otherOrg();
      const rotated = await as<{ adminToken: string }>(them.adminToken, 'POST', '/api/v1/admin-token/rotate');
      assert.equal(rotated.status, 201, rotated.text);
      assert.match(rotated.body.adminToken, /^fga_/);
      await expectError((await as(them.adminToken, 'POST', '/api/v1/api-keys', {})).response, 401, 'unauthorized');
      assert.equal((await as(rotated.body.adminToken, 'POST', '/api/v1/api-keys', {})).status, 201);

      // The instance administrator reissues an organization's token (one lost, say); an organization cannot.
      await expectError((await as(rotated.body.adminToken, 'POST', `/api/v1/orgs/${them.orgId}/admin-token`)).response, 403, 'forbidden');
      const reissued = await fg.admin<{ id: string; adminToken: string }>('POST', `/api/v1/orgs/${them.orgId}/admin-token`);
      assert.equal(reissued.status, 201);
      assert.equal(reissued.body.id, them.orgId);
      await expectError((await as(rotated.body.adminToken, 'POST', '/api/v1/api-keys', {})).response, 401, 'unauthorized');
      assert.equal((await as(reissued.body.adminToken, 'POST', '/api/v1/api-keys', {})).status, 201);
      await expectError((await as(fg.adminToken, 'POST', '/api/v1/orgs/org_nope/admin-token')).response, 404, 'unknown_org');

      // The bootstrap token comes from the configuration: rotating it through the API is refused.
      await expectError((await as(fg.adminToken, 'POST', '/api/v1/admin-token/rotate')).response, 409, 'bootstrap_token');
    });

    it('revokes the previous instance administrator token when FLOWGATE_ADMIN_TOKEN changes across a restart', async () => {
      const first = await startTestFlowgate();
      await first.stop(true);
      const second = await startTestFlowgate({}, { restartOf: { ...first, adminToken: `fga_test_${randomBytes(12).toString('hex')}` } });
      try {
        const old = await second.request('/api/v1/api-keys', { method: 'POST', headers: { Authorization: `Bearer ${first.adminToken}` } });
        await expectError(old, 401, 'unauthorized');
        assert.equal((await second.admin('POST', '/api/v1/api-keys', {})).status, 201);
      } finally {
        await second.stop();
      }
    });

    it('checks inputSchema patterns in linear time, and refuses a pattern RE2 cannot run when the workflow is saved', async () => {
      // ^(a+)+$ against 'aaaa…ab' takes V8's backtracking engine minutes; RE2 answers at once.
      const p = await publishWorkflow(fg, { ...hello, inputSchema: { type: 'object', properties: { who: { type: 'string', pattern: '^(a+)+$' } } } });
      const evil = await trigger(fg, p, { who: `${'a'.repeat(40)}b` });
      await expectError(evil, 422, 'invalid_inputs');
      const fine = await trigger(fg, p, { who: 'aaaa' }, { 'x-api-wait': 'true' });
      assert.equal(fine.status, 200);
      const lookahead = await as<ErrorBody>(fg.adminToken, 'POST', '/api/v1/workflows',
        { ...hello, inputSchema: { type: 'object', properties: { who: { type: 'string', pattern: '^(?=x)x$' } } } });
      await expectError(lookahead.response, 400, 'invalid_definition');
      assert.match(lookahead.body.message, /inputSchema/);
    });

    it('refuses a wait longer than 366 days when the workflow is saved', async () => {
      const tooLong = await as<ErrorBody>(fg.adminToken, 'POST', '/api/v1/workflows', { name: 'nap', steps: [{ name: 'Nap', type: 'delay', duration: '400d' }] });
      await expectError(tooLong.response, 400, 'invalid_definition');
      assert.match(tooLong.body.message, /at most 366d/);
    });

    it('answers 400 invalid_definition, naming the field, to an invalid workflow definition', async () => {
      const cases: { definition: unknown; field: RegExp }[] = [
        { definition: { name: 'bad-type', steps: [{ name: 'X', type: 'teleport' }] }, field: /steps\.0/ },
        { definition: { name: 'no-steps', steps: [] }, field: /steps/ },
        { definition: { name: 'missing-steps' }, field: /steps/ },
        { definition: { steps: hello.steps }, field: /name/ },
        { definition: { ...hello, output: { stepIndex: 5 } }, field: /output\.stepIndex/ },
        { definition: { ...hello, surprise: true }, field: /surprise/ },
        { definition: { name: 'nap', steps: [{ name: 'Nap', type: 'delay', duration: '5 minutes' }] }, field: /steps\.0\.duration: must be a duration/ },
        { definition: { name: 'ask', steps: [{ name: 'Ask', type: 'approval', approvers: ['ann'], timeout: '1w' }] }, field: /steps\.0\.timeout/ },
      ];
      for (const { definition, field } of cases) {
        const created = await as(fg.adminToken, 'POST', '/api/v1/workflows', definition);
        const body = await expectError(created.response, 400, 'invalid_definition');
        assert.match(body.message, field, `${JSON.stringify(definition)} → ${body.message}`);
      }
      // the same rules on PUT
      const p = await publishWorkflow(fg, hello);
      const put = await as(fg.adminToken, 'PUT', `/api/v1/workflows/${p.workflowId}`, { name: 'no-steps', steps: [] });
      assert.match((await expectError(put.response, 400, 'invalid_definition')).message, /steps/);
    });

    it('answers 404 to GET, PUT and publish of an unknown workflow', async () => {
      const id = 'wf_doesnotexist000';
      await expectError((await as(fg.adminToken, 'GET', `/api/v1/workflows/${id}`)).response, 404, 'unknown_workflow');
      await expectError((await as(fg.adminToken, 'PUT', `/api/v1/workflows/${id}`, hello)).response, 404, 'unknown_workflow');
      await expectError((await as(fg.adminToken, 'POST', `/api/v1/workflows/${id}/publish`)).response, 404, 'unknown_workflow');
      await expectError((await as(fg.adminToken, 'POST', '/api/v1/triggers', { workflowId: id })).response, 404, 'unknown_workflow');
    });

    it("answers 404, not 403, to another organization's workflow, and changes nothing", async () => {
      const p = await publishWorkflow(fg, hello);
      const them = await otherOrg();
      await expectError((await as(them.adminToken, 'GET', `/api/v1/workflows/${p.workflowId}`)).response, 404, 'unknown_workflow');
      await expectError((await as(them.adminToken, 'PUT', `/api/v1/workflows/${p.workflowId}`, { ...hello, name: 'hijacked' })).response, 404, 'unknown_workflow');
      await expectError((await as(them.adminToken, 'POST', `/api/v1/workflows/${p.workflowId}/publish`)).response, 404, 'unknown_workflow');
      await expectError((await as(them.adminToken, 'POST', '/api/v1/triggers', { workflowId: p.workflowId })).response, 404, 'unknown_workflow');
      await expectError((await as(them.adminToken, 'DELETE', `/api/v1/api-keys/${p.apiKeyId}`)).response, 404);
      const mine = await fg.admin<WorkflowBody>('GET', `/api/v1/workflows/${p.workflowId}`);
      assert.equal(mine.body.name, 'hello');
      assert.deepEqual(mine.body.versions, [1]);
      assert.equal((await trigger(fg, p, { who: 'still mine' })).status, 200, 'the other org could not revoke this key');
    });

    it('answers 409 not_published to POST /api/v1/triggers on a workflow never published', async () => {
      const created = await fg.admin<{ id: string; publishedVersion: number | null }>('POST', '/api/v1/workflows', hello);
      assert.equal(created.status, 201);
      assert.equal(created.body.publishedVersion, null);
      await expectError((await as(fg.adminToken, 'POST', '/api/v1/triggers', { workflowId: created.body.id })).response, 409, 'not_published');
    });

    it('answers 422 when designatedOutput.stepIndex is beyond the steps of the published version', async () => {
      const p = await publishWorkflow(fg, hello);
      const body = await expectError((await as(fg.adminToken, 'POST', '/api/v1/triggers', { workflowId: p.workflowId, designatedOutput: { stepIndex: 2 } })).response, 422);
      assert.match(body.message, /stepIndex/);
      const ok = await fg.admin<{ designatedOutput: unknown }>('POST', '/api/v1/triggers', { workflowId: p.workflowId, designatedOutput: { stepIndex: 1, fileName: 'out.txt' } });
      assert.equal(ok.status, 201);
      assert.deepEqual(ok.body.designatedOutput, { stepIndex: 1, fileName: 'out.txt' });
    });

    it('shows an API key once, in the create answer, and in no other answer', async () => {
      const p = await publishWorkflow(fg, hello);
      const created = await fg.admin<Record<string, unknown>>('POST', '/api/v1/api-keys', { name: 'once' });
      assert.equal(created.status, 201);
      assert.deepEqual(Object.keys(created.body).sort(), ['id', 'key', 'name']);
      const key = String(created.body.key);
      assert.match(key, /^fgk_[A-Za-z0-9_-]{40,}$/);
      assert.equal(created.body.name, 'once');
      const runId = await completedRun({ ...p, apiKey: key });
      const answers = [
        await as(fg.adminToken, 'GET', `/api/v1/workflows/${p.workflowId}`),
        await as(fg.adminToken, 'PUT', `/api/v1/workflows/${p.workflowId}`, hello),
        await as(fg.adminToken, 'POST', `/api/v1/workflows/${p.workflowId}/publish`),
        await as(fg.adminToken, 'POST', '/api/v1/triggers', { workflowId: p.workflowId }),
        await as(fg.adminToken, 'GET', `/api/v1/runs?workflowId=${p.workflowId}`),
        await as(fg.adminToken, 'GET', '/api/v1/api-keys'),
        await as(fg.adminToken, 'GET', `/api/v1/api-keys/${String(created.body.id)}`),
      ];
      for (const answer of answers) assert.ok(!answer.text.includes(key), `the key leaked in ${answer.status} ${answer.text}`);
      const results = await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
      assert.ok(!(await results.text()).includes(key), 'results read with another key do not show the starting key');
    });

    it('stores API keys only hashed: the plaintext is nowhere in the api_keys table or the registry files', async () => {
      const created = await fg.admin<{ id: string; key: string }>('POST', '/api/v1/api-keys', { name: 'hashed' });
      assert.equal(created.status, 201);
      const { id, key } = created.body;
      const file = path.join(fg.dataDir, 'registry.sqlite');
      const db = openSqlite(file, { readOnly: true });
      try {
        const rows = db.prepare('select * from api_keys').all();
        const row = rows.find((r) => r.id === id);
        assert.ok(row, 'the key has a row');
        assert.equal(row.revoked_at, null);
        for (const r of rows) {
          for (const [column, value] of Object.entries(r)) {
            assert.ok(!String(value).includes(key), `the plaintext key is in api_keys.${column}`);
            assert.ok(!String(value).includes(key.slice(4)), `the key's random part is in api_keys.${column}`);
          }
        }
        assert.match(String(row.key_hash), /^[0-9a-f]{64}$/);
      } finally {
        db.close();
      }
      for (const f of [file, `${file}-wal`]) {
        if (existsSync(f)) assert.ok(!readFileSync(f).includes(key.slice(4)), `the key is written in ${path.basename(f)}`);
      }
    });

    it('keeps published versions immutable: a new draft changes the draft only, and runs use the published version', async () => {
      const v1 = { name: 'frozen', steps: [{ name: 'Say', type: 'template', format: 'plaintext', template: 'v1 says {{inputs.who}}' }] };
      const p = await publishWorkflow(fg, v1);
      const before = await fg.admin<WorkflowBody>('GET', `/api/v1/workflows/${p.workflowId}`);
      assert.deepEqual([before.body.publishedVersion, before.body.versions], [1, [1]]);

      const v2 = { name: 'frozen-renamed', steps: [{ name: 'Say', type: 'template', format: 'plaintext', template: 'v2 says {{inputs.who}}' }] };
      const put = await fg.admin<WorkflowBody>('PUT', `/api/v1/workflows/${p.workflowId}`, v2);
      assert.equal(put.status, 200);
      assert.equal(put.body.draft.steps[0]?.template, 'v2 says {{inputs.who}}');

      const after = await fg.admin<WorkflowBody>('GET', `/api/v1/workflows/${p.workflowId}`);
      assert.equal(after.status, 200);
      assert.equal(after.body.draft.steps[0]?.template, 'v2 says {{inputs.who}}');
      assert.equal(after.body.draft.name, 'frozen-renamed');
      assert.equal(after.body.publishedVersion, 1);
      assert.deepEqual(after.body.versions, [1]);

      const response = await trigger(fg, p, { who: 'Ann' }, { 'x-api-wait': 'true' });
      assert.equal(response.status, 200);
      const run = (await response.json()) as SyncBody & { automationName: string };
      assert.equal(run.automationVersion, 1);
      assert.equal(run.automationName, 'frozen');
      assert.equal(run.results[0]?.result.result, 'v1 says Ann');
    });
  });

  describe('GET /healthz', () => {
    it("answers 200 {status: 'ok', temporal: 'ok', registry: 'ok'}", async () => {
      const { status, body } = await getJson(fg, '/healthz');
      assert.equal(status, 200);
      assert.deepEqual(body, { status: 'ok', temporal: 'ok', registry: 'ok' });
    });

    it('keeps an idle keep-alive connection open past Node\'s 5 s default (FLOWGATE_KEEP_ALIVE_SECONDS, 65 s), as its Keep-Alive header says', async () => {
      const { port, hostname } = new URL(fg.url);
      const socket = net.connect(Number(port), hostname);
      socket.setEncoding('latin1');
      let received = '';
      socket.on('data', (chunk: string) => {
        received += chunk;
      });
      const answers = async (count: number): Promise<void> => {
        const deadline = Date.now() + 10_000;
        while ((received.match(/HTTP\/1\.1 200 /g) ?? []).length < count) {
          assert.ok(Date.now() < deadline && !socket.destroyed, `no answer ${count} on the connection: ${received}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      try {
        const get = `GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\n\r\n`;
        socket.write(get);
        await answers(1);
        assert.match(received, /^Keep-Alive: timeout=65\r$/im);
        // the behaviour under test: the connection stays open idle past Node's default 5 s keep-alive
        await new Promise((resolve) => setTimeout(resolve, 5_500));
        assert.ok(!socket.destroyed && !socket.readableEnded, 'the gateway closed the idle connection');
        socket.write(get);
        await answers(2);
      } finally {
        socket.destroy();
      }
    });
  });
});
