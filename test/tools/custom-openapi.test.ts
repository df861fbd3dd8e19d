import assert from 'node:assert/strict';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { CUSTOM_SERVER_RECHECK_MS } from '../../src/tools/custom';
import { generateApi, toolNameOf } from '../../src/tools/custom/openapi';
import { startFakeCustomerApi, API_KEY, type FakeCustomerApi } from '../support/fake-customer-api';
import { eventually } from '../support/eventually';
import type { TestFlowgate } from '../support/flowgate';
import { asAdmin, createCustomConnection, createServer, ORG_CHART_YAML, PETSTORE, type ServerBody } from './custom-support';
import { callTool, rpc, RPC_HEADERS, runtimeToken, startToolFlowgate } from './support';

describe('OpenAPI documents as tools', () => {
  it('makes one tool per Petstore 3.0 operation, named by operationId, with every $ref resolved', async () => {
    const api = await generateApi(PETSTORE);
    assert.equal(api.title, 'Swagger Petstore - OpenAPI 3.0');
    assert.equal(api.operations.length, 19);
    assert.deepEqual(api.operations.map((o) => o.toolName).slice(0, 5), ['updatePet', 'addPet', 'findPetsByStatus', 'findPetsByTags', 'getPetById']);
    const addPet = api.operations.find((o) => o.toolName === 'addPet');
    assert.equal(addPet?.description, 'Add a new pet to the store.\n\nAdd a new pet to the store.');
    const body = addPet?.inputSchema.properties.body as { required: string[]; properties: Record<string, { properties?: Record<string, unknown> }> };
    assert.deepEqual(body.required, ['name', 'photoUrls']);
    assert.deepEqual(Object.keys(body.properties.category?.properties ?? {}), ['id', 'name'], 'the Category $ref is resolved inline');
    assert.deepEqual(addPet?.inputSchema.required, ['body']);
    assert.doesNotMatch(JSON.stringify(api.operations.map((o) => o.inputSchema)), /\$ref/);
    const deletePet = api.operations.find((o) => o.toolName === 'deletePet');
    assert.deepEqual(deletePet?.parameters.map((p) => [p.argument, p.in]), [['api_key', 'header'], ['petId', 'path']]);
  });

  it('reads YAML, handles circular schemas, and names operations without an operationId by method and path', async () => {
    const api = await generateApi(ORG_CHART_YAML);
    assert.deepEqual(api.operations.map((o) => o.toolName), ['getTeam', 'replaceTeam', 'get_teams_teamId_report_pdf', 'search_people']);
    const replace = api.operations.find((o) => o.toolName === 'replaceTeam');
    const text = JSON.stringify(replace?.inputSchema);
    assert.match(text, /recursive/);
    assert.deepEqual(replace?.inputSchema.required, ['teamId', 'body'], 'the path-level parameter applies');
  });

  it('refuses Swagger 2.0 and documents that are not OpenAPI 3 with a clear message', async () => {
    await assert.rejects(generateApi({ swagger: '2.0', info: { title: 't', version: '1' }, paths: {} }), /Swagger 2\.0 documents are not accepted: convert it to OpenAPI 3/);
    await assert.rejects(generateApi('just: [text'), /neither JSON nor YAML/);
    await assert.rejects(generateApi({ openapi: '3.0.3', info: { title: 't' }, paths: { '/x': { get: { responses: 'no' } } } }), /not a valid OpenAPI document/);
  });

  it('makes valid tool names of any operationId', () => {
    assert.equal(toolNameOf('list pets/by owner', 'get', '/x'), 'list_pets_by_owner');
    assert.equal(toolNameOf(undefined, 'delete', '/users/{id}/keys'), 'delete_users_id_keys');
    assert.equal(toolNameOf('x'.repeat(100), 'get', '/').length, 64);
  });
});

describe('generated tool servers', () => {
  let fg: TestFlowgate;
  let api: FakeCustomerApi;
  let token: string;
  let pcid: string;
  let petstore: ServerBody;

  before(async () => {
    api = await startFakeCustomerApi();
    fg = await startToolFlowgate();
    token = (await runtimeToken(fg)).token;
    pcid = await createCustomConnection(fg, fg.adminToken, { baseUrl: `${api.url}/api/v3`, testPath: '/health', auth: { kind: 'api_key', name: 'api_key', value: API_KEY } });
    petstore = await createServer(fg, fg.adminToken, { connection: pcid, document: PETSTORE });
  });
  after(async () => {
    await fg?.stop();
    await api?.close();
  });

  it('registers the Petstore under a short opaque id with its 19 tools, each requiring PCID', async () => {
    assert.match(petstore.id, /^[0-9a-v]{20}$/);
    assert.equal(petstore.name, 'Swagger Petstore - OpenAPI 3.0');
    assert.equal(petstore.tools?.length, 19);
    const listed = await rpc(fg, petstore.id, token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tools = listed.body?.result?.tools as { name: string; inputSchema: { required: string[]; properties: Record<string, unknown> } }[];
    const getPet = tools.find((t) => t.name === 'getPetById');
    assert.deepEqual(getPet?.inputSchema.required, ['PCID', 'petId']);
    const got = await asAdmin<ServerBody>(fg, fg.adminToken, 'GET', `/api/v1/servers/${petstore.id}`);
    assert.equal(got.body.tools?.length, 19);
  });

  it('calls the API with the stored API key: path templating, query, JSON body, header parameters', async () => {
    const got = await callTool(fg, petstore.id, token, 'getPetById', { PCID: pcid, petId: 10 });
    assert.deepEqual(got.body?.result?.structuredContent, api.pets.get(10));
    const last = api.requests[api.requests.length - 1];
    assert.equal(last?.path, '/api/v3/pet/10');
    assert.equal(last?.headers.api_key, API_KEY);

    const added = await callTool(fg, petstore.id, token, 'addPet', { PCID: pcid, body: { id: 77, name: 'Rex the 2nd', photoUrls: [], status: 'pending' } });
    assert.equal(added.body?.result?.isError, false);
    assert.deepEqual(api.requests[api.requests.length - 1]?.body, { id: 77, name: 'Rex the 2nd', photoUrls: [], status: 'pending' });

    const found = await callTool(fg, petstore.id, token, 'findPetsByStatus', { PCID: pcid, status: 'pending' });
    assert.deepEqual((found.body?.result?.structuredContent as { result: { id: number }[] }).result.map((p) => p.id), [77], 'a JSON array answer is wrapped in result');

    const tagged = await callTool(fg, petstore.id, token, 'findPetsByTags', { PCID: pcid, tags: ['good', 'a b/c'] });
    assert.equal(tagged.body?.result?.isError, false);
    assert.deepEqual(api.requests[api.requests.length - 1]?.query.tags, ['good', 'a b/c'], 'an exploded query array repeats the name');

    const deleted = await callTool(fg, petstore.id, token, 'deletePet', { PCID: pcid, petId: 77, api_key: 'ignored-by-the-credential' });
    assert.equal((deleted.body?.result?.structuredContent as { text: string }).text, 'Pet deleted', 'a text answer is text');
    assert.equal(api.requests[api.requests.length - 1]?.headers.api_key, API_KEY, 'the stored credential wins over a same-named header argument');
  });

  it('calls with its connection kept briefly: credentials written elsewhere (another replica) apply within CUSTOM_SERVER_RECHECK_MS', async () => {
    const credentials = (value: string): Record<string, unknown> => ({ baseUrl: `${api.url}/api/v3`, testPath: '/health', auth: { kind: 'api_key', name: 'api_key', value } });
    const kept = await createCustomConnection(fg, fg.adminToken, credentials(API_KEY));
    const server = await createServer(fg, fg.adminToken, { connection: kept, document: PETSTORE, name: 'kept connection' });
    const keyOfLastCall = async (): Promise<unknown> => {
      await callTool(fg, server.id, token, 'getPetById', { PCID: kept, petId: 10 });
      return api.requests[api.requests.length - 1]?.headers.api_key;
    };
    assert.equal(await keyOfLastCall(), API_KEY);
    // written straight to the store, as another replica writes it: nothing here forgets the kept copy
    assert.equal(await fg.tools.connections.replace(DEFAULT_ORG_ID, kept, null, credentials('rotated-key')), true);
    await eventually(async () => ((await keyOfLastCall()) === 'rotated-key' ? true : undefined),
      'a call with the credentials written elsewhere', CUSTOM_SERVER_RECHECK_MS + 5_000, 20);
  });

  it('answers a non-2xx reply as a tool error with its status and body', async () => {
    const missing = await callTool(fg, petstore.id, token, 'getPetById', { PCID: pcid, petId: 404404 });
    const result = missing.body?.result as { isError: boolean; structuredContent: { error: string; status: number; body: unknown } };
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.status, 404);
    assert.deepEqual(result.structuredContent.body, { code: 1, type: 'error', message: 'Pet not found' });
    assert.match(result.structuredContent.error, /GET \/pet\/\{petId\} answered 404/);
  });

  it('sends the call\'s idempotency key to the API as Idempotency-Key: the caller\'s, an in-process call\'s, none without one', async () => {
    const pet = { PCID: pcid, body: { id: 880, name: 'Keyed', photoUrls: [] } };
    const keyed = await rpc(fg, petstore.id, token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'addPet', arguments: pet } },
      { ...RPC_HEADERS, 'Idempotency-Key': 'order-2026-0042' });
    assert.equal(keyed.body?.result?.isError, false, JSON.stringify(keyed.body));
    assert.equal(api.requests.at(-1)?.headers['idempotency-key'], 'order-2026-0042');

    const inProcess = await fg.tools.call(DEFAULT_ORG_ID, petstore.id, 'getPetById', { PCID: pcid, petId: 10 }, { idempotencyKey: 'run-9:4' });
    assert.equal(inProcess.isError, false);
    assert.equal(api.requests.at(-1)?.headers['idempotency-key'], 'run-9:4', 'a step\'s or an agent\'s key the same way');

    await callTool(fg, petstore.id, token, 'getPetById', { PCID: pcid, petId: 10 });
    assert.equal(api.requests.at(-1)?.headers['idempotency-key'], undefined, 'none is made up');
  });

  it('checks arguments against the generated schema (ajv) before any request', async () => {
    const before = api.requests.length;
    const bad = await callTool(fg, petstore.id, token, 'getPetById', { PCID: pcid, petId: 'ten' });
    assert.equal(bad.body?.error?.code, -32000);
    assert.match(bad.body?.error?.message ?? '', /arguments\.petId: must be integer/);
    const extra = await callTool(fg, petstore.id, token, 'addPet', { PCID: pcid, body: { name: 'x' } });
    assert.match(extra.body?.error?.message ?? '', /arguments\.body: must have required property 'photoUrls'/);
    const noPcid = await callTool(fg, petstore.id, token, 'getInventory', {});
    assert.equal(noPcid.body?.error?.code, -32000);
    assert.equal(api.requests.length, before);
  });

  it('serves a YAML document with circular schemas: encoded path segments, comma-joined arrays, a binary answer as a blob link', async () => {
    const chart = await createServer(fg, fg.adminToken, { connection: pcid, document: ORG_CHART_YAML, name: 'Org chart' });
    const replaced = await callTool(fg, chart.id, token, 'replaceTeam', { PCID: pcid, teamId: 'r&d/eu', body: { name: 'R&D', subTeams: [{ name: 'Compilers', subTeams: [] }] } });
    assert.deepEqual(replaced.body?.result?.structuredContent, { stored: 'r&d/eu', team: { name: 'R&D', subTeams: [{ name: 'Compilers', subTeams: [] }] } });
    assert.equal(api.requests[api.requests.length - 1]?.path, '/api/v3/teams/r%26d%2Feu');
    const people = await callTool(fg, chart.id, token, 'search_people', { PCID: pcid, skill: ['ts', 'sql'], 'X-Request-Source': 'flowgate' });
    assert.deepEqual((people.body?.result?.structuredContent as { result: unknown[] }).result, [{ name: 'Ada', skills: ['ts', 'sql'], source: 'flowgate' }]);
    const report = await callTool(fg, chart.id, token, 'get_teams_teamId_report_pdf', { PCID: pcid, teamId: 'core' });
    const file = (report.body?.result?.structuredContent as { contentType: string; file: { url: string } });
    assert.equal(file.contentType, 'application/pdf');
    const download = await fetch(file.file.url);
    assert.equal(download.status, 200);
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0, 1, 2, 255]), Buffer.from('core')]));
  });

  it('refuses a document without operations, a Swagger 2.0 one, and a connection that is not custom', async () => {
    const empty = await asAdmin(fg, fg.adminToken, 'POST', '/api/v1/servers', { connection: pcid, document: { openapi: '3.0.3', info: { title: 'e', version: '1' }, paths: {} } });
    assert.equal(empty.status, 400);
    assert.match(String(empty.body.message), /at least one tool/);
    const swagger = await asAdmin(fg, fg.adminToken, 'POST', '/api/v1/servers', { connection: pcid, document: { swagger: '2.0', info: { title: 's', version: '1' }, paths: {} } });
    assert.equal(swagger.status, 400);
    assert.match(String(swagger.body.message), /Swagger 2\.0/);
    const unknown = await asAdmin(fg, fg.adminToken, 'POST', '/api/v1/servers', { connection: 'pc_nope', document: PETSTORE });
    assert.equal(unknown.status, 400);
  });

  it('replaces the document of a server, keeps its id, and deletes it', async () => {
    const server = await createServer(fg, fg.adminToken, { connection: pcid, document: PETSTORE });
    const small = { openapi: '3.1.0', info: { title: 'Inventory only', version: '1' }, paths: { '/store/inventory': { get: { operationId: 'inventory', responses: { 200: { description: 'ok' } } } } } };
    const replaced = await asAdmin<ServerBody>(fg, fg.adminToken, 'PUT', `/api/v1/servers/${server.id}`, { connection: pcid, document: JSON.stringify(small) });
    assert.equal(replaced.status, 200);
    assert.deepEqual(replaced.body.tools?.map((t) => t.name), ['inventory']);
    const called = await callTool(fg, server.id, token, 'inventory', { PCID: pcid });
    assert.equal(typeof (called.body?.result?.structuredContent as { available: number }).available, 'number');
    assert.equal((await asAdmin(fg, fg.adminToken, 'DELETE', `/api/v1/servers/${server.id}`)).status, 204);
    const gone = await callTool(fg, server.id, token, 'inventory', { PCID: pcid });
    assert.equal(gone.status, 404);
  });

  it('refuses a base URL on a private address unless private networks are allowed', async () => {
    const strict = await startToolFlowgate({ FLOWGATE_ALLOW_PRIVATE_NETWORK: 'false' });
    try {
      const strictToken = (await runtimeToken(strict)).token;
      const conn = await createCustomConnection(strict, strict.adminToken, { baseUrl: `${api.url}/api/v3`, auth: { kind: 'api_key', name: 'api_key', value: API_KEY } });
      const server = await createServer(strict, strict.adminToken, { connection: conn, document: PETSTORE });
      const before = api.requests.length;
      const refused = await callTool(strict, server.id, strictToken, 'getPetById', { PCID: conn, petId: 10 });
      assert.equal(refused.body?.error?.code, -32000);
      assert.match(refused.body?.error?.message ?? '', /refused to connect to 127\.0\.0\.1/);
      assert.equal(api.requests.length, before);
    } finally {
      await strict.stop();
    }
  });
});
