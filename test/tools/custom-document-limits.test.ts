/**
 * OpenAPI documents that are hostile rather than wrong, sent to a gateway in a process of its own
 * over real HTTP: text nested thousands of levels deep (issue 28, finding 1: it aborted Node), and
 * fields of the wrong JSON type after the document parsed (finding 4: a 500). Each is a 400 that
 * says what is wrong, and the process goes on serving.
 */
import assert from 'node:assert/strict';
import { startManagementProcess, type ManagementProcess } from '../support/management-process';
import { DEEP_TEXT_FORMS, INDENTED_FORMS } from '../support/deep-text';
import { startHostileRemoteMcp } from '../support/hostile-remote-mcp';
import { PETSTORE } from './custom-support';

/** an OpenAPI document with one operation whose text carries `deep` (a YAML or JSON fragment) under `x-deep` */
function deepDocument(form: string, levels: number): string {
  const fragment = DEEP_TEXT_FORMS[form]!(levels);
  if (form.startsWith('JSON')) {
    return `{"openapi":"3.0.3","info":{"title":"deep","version":"1"},"paths":{"/x":{"get":{"responses":{"200":{"description":"ok"}}}}},"x-deep":${fragment}}`;
  }
  return `openapi: 3.0.3\ninfo: {title: deep, version: "1"}\npaths:\n  /x:\n    get:\n      responses:\n        "200": {description: ok}\nx-deep:\n  ${fragment.replace(/\n/g, '\n  ')}\n`;
}

function operation(schema: unknown, openapi = '3.0.3'): Record<string, unknown> {
  return {
    openapi, info: { title: 't', version: '1' },
    paths: { '/x': { post: { operationId: 'op', requestBody: { content: { 'application/json': { schema } } }, responses: { 200: { description: 'ok' } } } } },
  };
}

describe('custom servers: documents that must be refused, not crash (a separate gateway process)', function () {
  this.timeout(300_000);
  let gw: ManagementProcess;
  let pcid: string;

  before(async () => {
    gw = await startManagementProcess();
    const created = await gw.call('POST', '/api/v1/connections', { application: 'custom', name: 'api', credentials: { baseUrl: 'http://127.0.0.1:9/api', auth: { kind: 'api_key', name: 'k', value: 'v' } } });
    assert.equal(created.status, 201, created.text);
    pcid = String(created.json?.PCID);
  });
  after(async () => {
    await gw?.replica.stop();
  });

  const register = (document: unknown) => gw.call('POST', '/api/v1/servers', { connection: pcid, document });

  it('refuses OpenAPI text nested 5,000 to 50,000 deep, as JSON and in every YAML form, with 400, and goes on serving', async () => {
    for (const form of Object.keys(DEEP_TEXT_FORMS)) {
      // indentation grows with the square of the depth: 1,000 levels is what fits in 2 MiB
      for (const levels of INDENTED_FORMS.has(form) ? [1_000] : [5_000, 20_000, 50_000]) {
        const answer = await register(deepDocument(form, levels));
        assert.equal(answer.status, 400, `${form}, ${levels} levels: ${answer.text}`);
        assert.equal(answer.json?.error, 'invalid_server');
        assert.match(String(answer.json?.message), /nests deeper than 64 levels/, `${form}, ${levels} levels`);
        assert.equal(gw.exited(), undefined);
      }
    }
    const normal = await register(PETSTORE);
    assert.equal(normal.status, 201, normal.text);
    assert.equal((normal.json?.tools as unknown[]).length, 19);
    const replaced = await gw.call('PUT', `/api/v1/servers/${String(normal.json?.id)}`, { connection: pcid, document: deepDocument('YAML flow sequences', 50_000) });
    assert.equal(replaced.status, 400, replaced.text);
    const kept = await gw.call('GET', `/api/v1/servers/${String(normal.json?.id)}`);
    assert.equal((kept.json?.tools as unknown[]).length, 19, 'a refused replacement leaves the server as it was');
    assert.equal(gw.exited(), undefined);
  });

  it('answers 400 naming the field when info, info.title or openapi has the wrong JSON type', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ openapi: '3.0.3', info: [], paths: {} }, /info: Invalid input: expected object, received array/],
      [{ openapi: '3.0.3', info: 'x', paths: {} }, /info: Invalid input: expected object, received string/],
      [{ openapi: '3.0.3', info: { title: 5, version: '1' }, paths: {} }, /info\.title: Invalid input: expected string, received number/],
      [{ openapi: '3.0.3', info: { title: 't', description: {}, version: '1' }, paths: {} }, /info\.description: Invalid input/],
      [{ openapi: 3, info: { title: 't', version: '1' }, paths: {} }, /openapi: Invalid input: expected string, received number/],
      [{ swagger: 2, info: { title: 't', version: '1' }, paths: {} }, /swagger: Invalid input: expected string, received number/],
    ];
    for (const [document, message] of cases) {
      for (const sent of [document, JSON.stringify(document)]) {
        const answer = await register(sent);
        assert.equal(answer.status, 400, `${JSON.stringify(document)}: ${answer.text}`);
        assert.equal(answer.json?.error, 'invalid_server');
        assert.match(String(answer.json?.message), message);
      }
    }
  });

  it('answers 400 for what only breaks after parsing: schemas ajv cannot compile, unresolvable $refs, a YAML alias inside itself, aliases that multiply the JSON', async () => {
    const cases: [unknown, RegExp][] = [
      [operation({ type: 'foo' }, '3.1.0'), /cannot check a tool's arguments: schema is invalid/],
      [operation({ type: 'object', required: 5 }, '3.1.0'), /cannot check a tool's arguments: schema is invalid/],
      [operation({ $ref: 'other.yaml#/A' }), /cannot check a tool's arguments: can't resolve reference other\.yaml#\/A/],
      ['openapi: 3.0.3\ninfo: {title: t, version: "1"}\npaths: {}\nx-loop: &x [ *x ]\n', /nests deeper than 64 levels/],
      ['openapi: 3.0.3\ninfo: &i {title: t, version: "1", self: *i}\npaths: {}\n', /nests deeper than 64 levels/],
      // half a megabyte of YAML whose aliases repeat long strings: 50 MB of JSON to store
      [`openapi: 3.0.3\ninfo: {title: t, version: "1"}\npaths: {}\n${Array.from({ length: 100 }, (_, i) => `x-s${i}: &s${i} ${'x'.repeat(5_000)}`).join('\n')}\nx-uses:\n${
        Array.from({ length: 100 }, (_, i) => `  - [${Array(99).fill(`*s${i}`).join(',')}]`).join('\n')}\n`, /holds more than 2097152 values or 8388608 characters of JSON/],
    ];
    for (const [document, message] of cases) {
      const answer = await register(document);
      assert.equal(answer.status, 400, `${JSON.stringify(document)}: ${answer.text}`);
      assert.match(String(answer.json?.message), message);
    }
    assert.equal(gw.exited(), undefined);
  });

  it('checks arguments against the document\'s patterns on RE2: one nested 7,000 groups deep (it aborted the process at the first call) or with look-around is not checked, an ordinary one is', async () => {
    const deepPattern = `${'(a|'.repeat(7_000)}b${')'.repeat(7_000)}`;
    const document = {
      openapi: '3.0.3', info: { title: 'patterns', version: '1' },
      paths: { '/x': { get: {
        operationId: 'op',
        parameters: [
          { name: 'deep', in: 'query', schema: { type: 'string', pattern: deepPattern } },
          { name: 'look', in: 'query', schema: { type: 'string', pattern: '^(?!x)' } },
          { name: 'plain', in: 'query', schema: { type: 'string', pattern: '^[a-z]+$' } },
        ],
        responses: { 200: { description: 'ok' } },
      } } },
    };
    const server = await register(document);
    assert.equal(server.status, 201, server.text);
    const key = await gw.call('POST', '/api/v1/api-keys', { name: 'patterns' });
    const token = await fetch(`${gw.url}/auth/token`, { method: 'POST', headers: { 'X-API-KEY': String(key.json?.key) } }).then(async (r) => (await r.json() as { token: string }).token);
    const call = async (args: Record<string, unknown>): Promise<{ status: number; text: string }> => {
      try {
        const response = await fetch(`${gw.url}/tools/${String(server.json?.id)}`, {
          method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'op', arguments: { PCID: pcid, ...args } } }),
        });
        return { status: response.status, text: await response.text() };
      } catch (error) {
        return { status: 0, text: String(error) };
      }
    };
    // past the argument check, the call goes to the API, which is not there: a tool error, not "invalid arguments"
    const passed = await call({ deep: 'aaaa', look: 'xyz', plain: 'abc' });
    assert.equal(passed.status, 200, passed.text);
    assert.doesNotMatch(passed.text, /invalid arguments/);
    assert.match(passed.text, /127\.0\.0\.1:9|ECONNREFUSED|could not/i);
    const refused = await call({ plain: 'ABC' });
    assert.match(refused.text, /invalid arguments for op: arguments\.plain: must match pattern/);
    assert.equal(gw.exited(), undefined);
  });

  it('takes a remote server whose declared output schemas are hostile: a $ref chain ajv\'s compiler overflowed on (registration failed on a caught stack overflow), a pattern nested 7,000 deep', async () => {
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) defs[`d${i}`] = i === 299 ? { type: 'string' } : { type: 'object', properties: { a: { $ref: `#/$defs/d${i + 1}` } } };
    const remote = await startHostileRemoteMcp([
      { name: 'deep_pattern', outputSchema: { type: 'object', properties: { v: { type: 'string', pattern: `${'(a|'.repeat(7_000)}b${')'.repeat(7_000)}` } } }, structuredContent: { v: 'aaab' } },
      { name: 'ref_chain', outputSchema: { type: 'object', properties: { v: { $ref: '#/$defs/d0' } }, $defs: defs }, structuredContent: { v: { a: { a: 'x' } } } },
    ]);
    try {
      const server = await gw.call('POST', '/api/v1/servers', { url: `${remote.url}/mcp` });
      assert.equal(server.status, 201, server.text);
      const key = await gw.call('POST', '/api/v1/api-keys', { name: 'remote schemas' });
      const token = await fetch(`${gw.url}/auth/token`, { method: 'POST', headers: { 'X-API-KEY': String(key.json?.key) } }).then(async (r) => (await r.json() as { token: string }).token);
      const call = async (name: string): Promise<{ status: number; text: string }> => {
        try {
          const response = await fetch(`${gw.url}/tools/${String(server.json?.id)}`, {
            method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
          });
          return { status: response.status, text: await response.text() };
        } catch (error) {
          return { status: 0, text: String(error) };
        }
      };
      for (const name of ['deep_pattern', 'ref_chain']) {
        const answer = await call(name);
        assert.equal(answer.status, 200, `${name}: ${answer.text}`);
        assert.equal((JSON.parse(answer.text) as { result?: { isError?: boolean } }).result?.isError, false, `${name}: ${answer.text}`);
      }
      assert.equal(gw.exited(), undefined);
    } finally {
      await remote.close();
    }
  });
});
