/**
 * Run data sealed before it reaches Temporal (src/crypto/payload-codec.ts), seen from outside: the
 * real Temporal CLI reads a run's history without the codec and finds neither its input nor its
 * result, and finds both through flowgate's codec endpoint (`--codec-endpoint`); a fresh sealed
 * history replays with the codec and not without it; a key rotation keeps old runs readable,
 * resumable and rerunnable while new runs use the new key; the codec endpoint refuses wrong
 * credentials and foreign origins.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../../src/crypto/payload-codec';
import { CODEC_SESSION_COOKIE } from '../../src/http/routes/codec';
import { workflowBundle } from '../../temporal/worker';
import { temporalAddress, temporalCliPath } from '../setup/root-hooks';
import { recordHistoryPath } from '../support/ci';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';
import { FIXTURE_DATA_KEYS } from '../support/histories';

const run = promisify(execFile);
const UI_ORIGIN = 'http://temporal-ui.example.test:8233';

/** The text, and every base64 string in it decoded: a marker hidden in a payload's bytes shows too. */
function revealed(text: string): string {
  const decoded = [...text.matchAll(/"([A-Za-z0-9+/]{8,}={0,2})"/g)].map((m) => Buffer.from(m[1] ?? '', 'base64').toString('latin1'));
  return [text, ...decoded].join('\n');
}

/** `via: 'env'` gives the codec as `npm run temporal` does (TEMPORAL_CODEC_ENDPOINT, TEMPORAL_CODEC_AUTH). */
async function showHistory(runId: string, codec?: { url: string; token: string; via?: 'flags' | 'env' }): Promise<string> {
  const args = ['workflow', 'show', '--workflow-id', runId, '--address', temporalAddress(), '--namespace', 'default', '--output', 'json'];
  const env = { ...process.env, TEMPORAL_CODEC_ENDPOINT: '', TEMPORAL_CODEC_AUTH: '' };
  if (codec?.via === 'env') Object.assign(env, { TEMPORAL_CODEC_ENDPOINT: `${codec.url}/codec`, TEMPORAL_CODEC_AUTH: `Bearer ${codec.token}` });
  else if (codec) args.push('--codec-endpoint', `${codec.url}/codec`, '--codec-auth', `Bearer ${codec.token}`);
  const { stdout } = await run(temporalCliPath(), args, { maxBuffer: 32 * 1024 * 1024, env });
  return stdout;
}

const keyIdOf = (payload: { metadata?: Record<string, Uint8Array | null> | null } | null | undefined): string =>
  Buffer.from(payload?.metadata?.[KEY_ID_METADATA] ?? []).toString('utf8');

const REVERSE = { name: 'Reverse', type: 'code', source: 'return inputs.secret.split("").reverse().join("")' };

describe('run data encryption', () => {
  describe('a run\'s history in Temporal', () => {
    let fg: TestFlowgate;
    let published: Published;
    const marker = `fgmark${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const reversed = [...marker].reverse().join('');
    let runId: string;

    before(async () => {
      fg = await startTestFlowgate({ FLOWGATE_DATA_KEYS: FIXTURE_DATA_KEYS, FLOWGATE_DATA_ENCRYPTION: 'on' });
      published = await publishWorkflow(fg, { name: 'sealed', steps: [REVERSE] });
      const response = await trigger(fg, published, { secret: marker }, { 'x-api-wait': 'true' });
      assert.equal(response.status, 200, await response.clone().text());
      runId = response.headers.get('X-Pf-Run-Id') ?? '';
      const body = await response.json() as { results: { result: { result: string } }[] };
      assert.equal(body.results[0]?.result.result, reversed, 'the run itself sees its data in clear');
    });
    after(async () => fg?.stop());

    it('read with the Temporal CLI without the codec holds neither the input nor the result, only sealed payloads', async () => {
      const raw = await showHistory(runId);
      assert.ok(raw.includes('WorkflowExecutionCompleted') || raw.includes('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED'), 'the whole history was read');
      const seen = revealed(raw);
      assert.ok(!seen.includes(marker), 'the input is not in clear');
      assert.ok(!seen.includes(reversed), 'the result is not in clear');
      assert.ok(seen.includes(ENCRYPTED_ENCODING) && seen.includes('fixture-1'), 'payloads say binary/encrypted and name their key');
    });

    it('read with the Temporal CLI through flowgate\'s codec endpoint shows both', async () => {
      const decoded = revealed(await showHistory(runId, { url: fg.url, token: fg.adminToken }));
      assert.ok(decoded.includes(marker), 'the input, decoded');
      assert.ok(decoded.includes(reversed), 'the result, decoded');
      const viaEnv = revealed(await showHistory(runId, { url: fg.url, token: fg.adminToken, via: 'env' }));
      assert.ok(viaEnv.includes(marker) && viaEnv.includes(reversed), 'decoded with the codec given in the environment, as npm run temporal gives it');
      await assert.rejects(showHistory(runId, { url: fg.url, token: 'fga_wrong_token_0123456789' }), 'a wrong token decodes nothing');
    });

    it('a fresh sealed history replays with the codec, and not without it', async () => {
      const history = await fg.client.workflow.getHandle(runId).fetchHistory();
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      assert.equal(keyIdOf(started), 'fixture-1');
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle(), dataConverter: fg.dataConverter }, history, runId);
      await assert.rejects(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, runId));
      // FLOWGATE_RECORD_HISTORY=<file>: keep it (committed as histories/run-automation-sealed.json, opened with FIXTURE_DATA_KEYS)
      const recordTo = recordHistoryPath();
      if (recordTo) await writeFile(recordTo, `${historyToJSON(history)}\n`, { flag: 'wx' });
    });
  });

  describe('a key rotation', () => {
    const oldRing = `old-1:${randomBytes(32).toString('base64')}`;
    const newKey = `new-2:${randomBytes(32).toString('base64')}`;
    let fg: TestFlowgate | undefined;
    after(async () => fg?.stop());

    it('keeps an old run readable, decidable and rerunnable, and new runs use the new key', async function () {
      this.timeout(240_000);
      fg = await startTestFlowgate({ FLOWGATE_DATA_KEYS: oldRing, FLOWGATE_DATA_ENCRYPTION: 'on' });
      const marker = `rot${randomUUID().slice(0, 8)}`;
      const simple = await publishWorkflow(fg, { name: 'rotation-simple', steps: [REVERSE] });
      const paused = await publishWorkflow(fg, {
        name: 'rotation-paused',
        steps: [REVERSE, { name: 'Sign-off', type: 'approval', approvers: ['ops@example.com'], message: 'ok?', timeout: '2h' }, { name: 'Done', type: 'template', template: 'done {{inputs.secret}}' }],
      });
      const done = await trigger(fg, simple, { secret: marker }, { 'x-api-wait': 'true' });
      assert.equal(done.status, 200);
      const oldRun = done.headers.get('X-Pf-Run-Id') ?? '';
      const waiting = (await trigger(fg, paused, { secret: marker })).headers.get('X-Pf-Run-Id') ?? '';
      await pollStatus(fg, paused, waiting, (s) => (s as { waitingOn?: { kind: string } }).waitingOn?.kind === 'approval');
      const { dataDir, taskQueue, adminToken } = fg;
      await fg.stop(true);

      // new key first, old key second
      fg = await startTestFlowgate({ FLOWGATE_DATA_KEYS: `${newKey},${oldRing}`, FLOWGATE_DATA_ENCRYPTION: 'on' }, { restartOf: { dataDir, taskQueue, adminToken } });
      assert.equal(fg.codec.currentKeyId, 'new-2');
      const status = await fg.admin<{ status: string }>('GET', `/api/v1/runs/${oldRun}`);
      assert.equal(status.status, 200);
      assert.equal(status.body.status, 'COMPLETE');
      const oldResult = await fg.client.workflow.getHandle(oldRun).result() as { results?: unknown };
      assert.ok(JSON.stringify(oldResult).includes([...marker].reverse().join('')), 'the old run\'s result read from Temporal with the old key');

      const decided = await fg.request(`/ext/webhook/${paused.apiKey}/runs/${paused.workflowId}/${waiting}/approval`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'approve', approver: 'ops@example.com' }),
      });
      assert.equal(decided.status, 200, await decided.text());
      const resumed = await pollStatus(fg, paused, waiting);
      assert.equal(resumed.status, 'COMPLETE', JSON.stringify(resumed));

      const rerun = await fg.admin<{ runId: string }>('POST', `/api/v1/runs/${oldRun}/rerun`, {});
      assert.equal(rerun.status, 201, JSON.stringify(rerun.body));
      assert.equal((await pollStatus(fg, simple, rerun.body.runId)).status, 'COMPLETE');

      const startKey = async (id: string): Promise<string> => keyIdOf((await fg!.client.workflow.getHandle(id).fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]);
      assert.equal(await startKey(oldRun), 'old-1');
      assert.equal(await startKey(rerun.body.runId), 'new-2', 'a new run is sealed with the new key');
      const waitingEvents = (await fg.client.workflow.getHandle(waiting).fetchHistory()).events ?? [];
      const completed = waitingEvents.find((e) => e.workflowExecutionCompletedEventAttributes)?.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0];
      assert.equal(keyIdOf(completed), 'new-2', 'what the resumed run recorded after the rotation is sealed with the new key');
      await fg.stop(true);

      // the old key dropped: its runs fail clearly, naming the key
      fg = await startTestFlowgate({ FLOWGATE_DATA_KEYS: newKey, FLOWGATE_DATA_ENCRYPTION: 'on' }, { restartOf: { dataDir, taskQueue, adminToken } });
      await assert.rejects(fg.client.workflow.getHandle(oldRun).result(), /data key "old-1", which this process does not have/);
    });
  });

  describe('the codec endpoint', () => {
    let fg: TestFlowgate;
    const sealed = async (value: unknown): Promise<{ metadata: Record<string, string>; data: string }> => {
      const [payload] = await fg.codec.encode([defaultPayloadConverter.toPayload(value)]);
      return {
        metadata: Object.fromEntries(Object.entries(payload?.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')])),
        data: Buffer.from(payload?.data ?? []).toString('base64'),
      };
    };
    const call = (path: string, init: { headers?: Record<string, string>; body?: unknown; method?: string } = {}): Promise<Response> => fg.request(path, {
      method: init.method ?? 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });

    before(async () => {
      // no configured ring here (the suite's shared one is the default): this instance generates its own
      fg = await startTestFlowgate({ FLOWGATE_TEMPORAL_UI_ORIGIN: UI_ORIGIN, FLOWGATE_DATA_KEYS: undefined as unknown as string });
    });
    after(async () => fg?.stop());

    it('decodes for the instance administrator\'s bearer token, passes clear payloads through and encodes with the newest key', async () => {
      const clear = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('{"a":1}').toString('base64') };
      const response = await call('/codec/decode', { headers: { Authorization: `Bearer ${fg.adminToken}` }, body: { payloads: [await sealed({ hello: 'codec' }), clear] } });
      assert.equal(response.status, 200);
      const { payloads } = await response.json() as { payloads: { metadata: Record<string, string>; data: string }[] };
      assert.deepEqual(JSON.parse(Buffer.from(payloads[0]?.data ?? '', 'base64').toString('utf8')), { hello: 'codec' });
      assert.deepEqual(payloads[1], clear);
      const encoded = await call('/codec/encode', { headers: { Authorization: `Bearer ${fg.adminToken}` }, body: { payloads: [clear] } });
      const body = await encoded.json() as { payloads: { metadata: Record<string, string> }[] };
      assert.equal(Buffer.from(body.payloads[0]?.metadata[KEY_ID_METADATA] ?? '', 'base64').toString('utf8'), fg.codec.currentKeyId);
      assert.match(fg.codec.currentKeyId ?? '', /^local-/, 'on by default, with a key generated into the data dir');
    });

    it('answers 401 without a credential, with a wrong token or a forged cookie, 403 to an organization\'s token', async () => {
      const body = { payloads: [await sealed('x')] };
      for (const headers of [{}, { Authorization: 'Bearer fga_not_the_token_0123456789' }, { Authorization: 'Basic abc' }, { Cookie: `${CODEC_SESSION_COOKIE}=9999999999.${'a'.repeat(64)}.forged` }] as Record<string, string>[]) {
        const response = await call('/codec/decode', { headers, body });
        assert.equal(response.status, 401, JSON.stringify(headers));
        assert.ok(!(await response.text()).includes('"payloads"'));
      }
      const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: `other-${randomUUID()}` });
      assert.equal(org.status, 201);
      assert.equal((await call('/codec/decode', { headers: { Authorization: `Bearer ${org.body.adminToken}` }, body })).status, 403);
      assert.equal((await call('/codec/decode', { headers: { Authorization: `Bearer ${fg.adminToken}`, 'X-Namespace': 'elsewhere' }, body })).status, 400);
      const unknown = { payloads: [{ metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING).toString('base64'), [KEY_ID_METADATA]: Buffer.from('nope').toString('base64') }, data: randomBytes(40).toString('base64') }] };
      const refused = await call('/codec/decode', { headers: { Authorization: `Bearer ${fg.adminToken}` }, body: unknown });
      assert.equal(refused.status, 422);
      assert.match(await refused.text(), /data key \\?"nope\\?"/);
    });

    it('lets only the configured Web UI origin call it from a browser: preflight, CORS headers, and a sign-in cookie', async () => {
      const preflight = (origin: string) => call('/codec/decode', { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-namespace' } });
      const allowed = await preflight(UI_ORIGIN);
      assert.equal(allowed.status, 204);
      assert.equal(allowed.headers.get('access-control-allow-origin'), UI_ORIGIN);
      assert.equal(allowed.headers.get('access-control-allow-credentials'), 'true');
      assert.match(allowed.headers.get('access-control-allow-headers') ?? '', /X-Namespace/i);
      const foreign = await preflight('http://evil.example.test');
      assert.equal(foreign.headers.get('access-control-allow-origin'), null);
      assert.notEqual(foreign.status, 204);

      const page = await fg.request('/codec/sign-in');
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<form method="post" action="sign-in">/);
      const form = (token: string) => fg.request('/codec/sign-in', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString() });
      const wrong = await form('fga_not_the_token_0123456789');
      assert.equal(wrong.status, 401);
      assert.equal(wrong.headers.get('set-cookie'), null);
      const signedIn = await form(fg.adminToken);
      assert.equal(signedIn.status, 200);
      const setCookie = signedIn.headers.get('set-cookie') ?? '';
      assert.match(setCookie, new RegExp(`^${CODEC_SESSION_COOKIE}=[^;]+; Path=/codec; Max-Age=3600; HttpOnly; SameSite=Strict$`));
      const cookie = setCookie.split(';')[0] ?? '';
      // the sign-in opens every organization's data: it is in the instance administrator's audit trail
      const trail = async () => ((await fg.admin<{ records: { action: string; actor: string; outcome: string; credential: { id: string } }[] }>('GET', '/api/v1/audit?action=codec.&limit=10')).body.records);
      const [signInRecord] = await trail();
      assert.deepEqual([signInRecord?.action, signInRecord?.actor, signInRecord?.outcome], ['codec.signed_in', 'instance-admin', 'success']);
      assert.match(signInRecord?.credential.id ?? '', /^adm_[0-9a-f]{12}$/);

      const body = { payloads: [await sealed({ via: 'cookie' })] };
      const fromUi = await call('/codec/decode', { headers: { Cookie: cookie, Origin: UI_ORIGIN }, body });
      assert.equal(fromUi.status, 200);
      assert.equal(fromUi.headers.get('access-control-allow-origin'), UI_ORIGIN);
      assert.equal(fromUi.headers.get('access-control-allow-credentials'), 'true');
      const fromElsewhere = await call('/codec/decode', { headers: { Cookie: cookie, Origin: 'http://evil.example.test' }, body });
      assert.equal(fromElsewhere.status, 403);
      assert.equal(fromElsewhere.headers.get('access-control-allow-origin'), null);
      const unauthenticatedFromUi = await call('/codec/decode', { headers: { Origin: UI_ORIGIN }, body });
      assert.equal(unauthenticatedFromUi.status, 401);
      assert.equal(unauthenticatedFromUi.headers.get('access-control-allow-origin'), UI_ORIGIN, 'the UI can read why it was refused');
      const signedOut = await fg.request('/codec/sign-out', { method: 'POST', headers: { Cookie: cookie } });
      assert.equal(signedOut.status, 200);
      assert.equal((await trail())[0]?.action, 'codec.signed_out');
    });
  });
});
