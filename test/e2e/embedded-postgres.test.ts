/**
 * The production-shaped embedded Temporal (issue 47): `FLOWGATE_EMBEDDED_TEMPORAL=postgres npm start`
 * on PostgreSQL databases of this test's own. It comes up, the Temporal CLI's `operator cluster
 * describe` names a server of 1.31 or later on PostgreSQL, a synchronous call completes; with 200
 * runs in flight the Temporal server is killed with SIGKILL, flowgate starts it again, and all 200
 * complete once; flowgate restarted finds every earlier run in Temporal's visibility; and a SIGKILL
 * of flowgate leaves no Temporal process behind.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { freeTemporalFrontendPort, freshTemporalDatabases, temporalBinaries, temporalCliPath } from '../setup/root-hooks';
import { freePort } from '../../temporal/ports';
import { startMain, type Child } from '../support/processes';
import { eventually } from '../support/eventually';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';
import { missingPeer } from '../support/ci';

const run = promisify(execFile);
const ADMIN = 'admin-token-embedded-postgres-test';
const IN_FLIGHT = 200;

const DescribeSchema = z.object({ serverVersion: z.string(), persistenceStore: z.string(), visibilityStore: z.string() });
const PidFileSchema = z.object({ server: z.number().int() });

/** Live processes (not their guardians) started with one of this data dir's embedded Temporal files. */
function temporalProcesses(dataDir: string): number[] {
  const marks = [path.join(dataDir, 'temporal-postgres.server.yaml'), path.join(dataDir, 'temporal-postgres.ui')];
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.some((a) => a.endsWith('guardian.js')) || !marks.some((m) => argv.includes(m))) continue;
      if (/\) Z /.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) continue;
      found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('the production-shaped embedded Temporal (FLOWGATE_EMBEDDED_TEMPORAL=postgres)', function () {
  this.timeout(600_000);
  let parent = '';
  let dataDir = '';
  let env: Record<string, string> = {};
  let child: Child | undefined;
  let url = '';
  let temporalAddress = '';
  let upstream: LoopbackServer | undefined;
  const calls = new Map<string, number>();
  const databases = freshTemporalDatabases();

  before(async function () {
    if (!existsSync('/proc/self/stat')) missingPeer(this, '/proc', 'the test finds the Temporal server process through /proc (Linux)');
    parent = mkdtempSync(path.join(os.tmpdir(), 'flowgate-embedded-pg-'));
    dataDir = path.join(parent, 'data');
    const { binaries, uiServer } = temporalBinaries();
    const devPort = await freeTemporalFrontendPort();
    temporalAddress = `127.0.0.1:${devPort}`;
    env = {
      FLOWGATE_EMBEDDED_TEMPORAL: 'postgres', FLOWGATE_TEMPORAL_DATABASE_URL: `postgres://${databases.target.user}@${databases.target.host}:${databases.target.port}/${databases.target.database}`,
      FLOWGATE_DATA_DIR: dataDir, FLOWGATE_ADMIN_TOKEN: ADMIN, PORT: String(await freePort()), TEMPORAL_DEV_PORT: String(devPort), TEMPORAL_UI_PORT: String(await freePort()),
      TEMPORAL_SERVER_PATH: binaries.server, TEMPORAL_UI_SERVER_PATH: uiServer, FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
      // 201 calls of one API key in a row: faster than 10 a second on an idle machine, they would use up
      // the key's rate-limit bucket (60 at once, 600 a minute) and get 429s, which this test is not about
      FLOWGATE_RATE_LIMIT_PER_MINUTE: '0',
    };
    // the runs' http step calls this, once per run and attempt: a run that ran its step twice would show it
    upstream = await listenOnLoopback(http.createServer((req, res) => {
      const runId = new URL(req.url ?? '/', 'http://x').searchParams.get('run') ?? '';
      calls.set(runId, (calls.get(runId) ?? 0) + 1);
      res.end('ok');
    }));
  });
  afterEach(async () => {
    child?.process.kill('SIGTERM');
    await child?.exited;
    child = undefined;
  });
  after(async () => {
    await upstream?.close();
    await databases.drop().catch(() => undefined);
    rmSync(parent, { recursive: true, force: true });
  });

  async function start(): Promise<Child> {
    child = startMain(env);
    await child.waitForLine(/gateway listening on (http:\/\/\S+)/, 300_000);
    url = /gateway listening on (http:\/\/\S+)/.exec(child.output())?.[1] ?? '';
    return child;
  }

  const api = async <T>(method: string, pathname: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}${pathname}`, {
      method, headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    assert.ok(response.ok, `${method} ${pathname}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  };

  it('comes up on PostgreSQL (Temporal >= 1.31), survives a SIGKILL of its server with 200 runs in flight, and keeps its runs across a restart', async () => {
    await start();
    const { stdout } = await run(temporalCliPath(), ['operator', 'cluster', 'describe', '--address', temporalAddress, '-o', 'json']);
    const described = DescribeSchema.parse(JSON.parse(stdout));
    const [major = 0, minor = 0] = described.serverVersion.split('.').map(Number);
    assert.ok(major > 1 || (major === 1 && minor >= 31), `server ${described.serverVersion}`);
    assert.match(described.persistenceStore, /postgres/);
    assert.match(described.visibilityStore, /postgres/);

    const workflow = await api<{ id: string }>('POST', '/api/v1/workflows', {
      name: 'in flight',
      steps: [
        { name: 'Wait', type: 'delay', duration: '3s' },
        { name: 'Call', type: 'http', method: 'GET', url: `${upstream!.url}/?run={{run.id}}` },
        { name: 'Done', type: 'template', template: 'done {{inputs.n}}' },
      ],
    });
    await api('POST', `/api/v1/workflows/${workflow.id}/publish`);
    const trigger = await api<{ id: string }>('POST', '/api/v1/triggers', { workflowId: workflow.id });
    const { key } = await api<{ key: string }>('POST', '/api/v1/api-keys', { name: 'embedded-pg' });
    const call = (n: number, wait = false): Promise<Response> => fetch(`${url}/ext/triggers/${trigger.id}`, {
      method: 'POST', headers: { 'X-API-KEY': key, 'Content-Type': 'application/json', ...(wait ? { 'x-api-wait': 'true' } : {}) }, body: JSON.stringify({ n }),
    });
    const sync = await call(0, true);
    assert.equal(sync.status, 200, await sync.clone().text());
    assert.match(await sync.text(), /done 0/);

    const runIds: string[] = [];
    for (let n = 1; n <= IN_FLIGHT; n++) {
      const response = await call(n);
      assert.equal(response.status, 200, await response.text());
      runIds.push(response.headers.get('x-pf-run-id') ?? '');
    }
    const { server } = PidFileSchema.parse(JSON.parse(readFileSync(path.join(dataDir, 'temporal-postgres.pid'), 'utf8')));
    process.kill(server, 'SIGKILL');
    await child!.waitForLine(/the embedded Temporal server is back at/, 180_000);

    const complete = await eventually(async () => {
      const { runs } = await api<{ runs: { runId: string; status: string }[] }>('GET', `/api/v1/runs?workflowId=${workflow.id}&limit=500`);
      const done = runs.filter((r) => r.status === 'COMPLETE');
      return done.length === IN_FLIGHT + 1 ? done : undefined;
    }, `all ${IN_FLIGHT} runs complete after the Temporal server was killed and started again`, 300_000, 2000);
    assert.deepEqual(new Set(runIds.filter((id) => complete.some((r) => r.runId === id))).size, IN_FLIGHT);
    const repeated = runIds.filter((runId) => (calls.get(runId) ?? 0) !== 1);
    console.log(`      (${IN_FLIGHT} runs complete; http steps run more than once: ${repeated.length}, an activity Temporal retried after losing its completion)`);
    // Temporal runs activities at least once: a step whose completion the killed server never stored is retried
    assert.ok(runIds.every((runId) => (calls.get(runId) ?? 0) >= 1));

    // flowgate stopped and started again: Temporal's own visibility still lists every run (201 with the synchronous one)
    child!.process.kill('SIGTERM');
    assert.deepEqual(await child!.exited, { code: 0, signal: null }, child!.output());
    await start();
    const listed = await eventually(async () => {
      const { runs } = await api<{ runs: { runId: string; status: string }[] }>('GET', `/api/v1/runs?workflowId=${workflow.id}&limit=500`);
      return runs.length === IN_FLIGHT + 1 ? runs : undefined;
    }, 'every earlier run is listed after the restart', 60_000, 1000);
    assert.equal(new Set(listed.map((r) => r.runId)).size, IN_FLIGHT + 1, 'no run twice');
    assert.ok(listed.every((r) => r.status === 'COMPLETE'));

    // a SIGKILL of flowgate: its guardians stop the Temporal server and the Web UI server
    assert.equal(temporalProcesses(dataDir).length, 2, 'the server and the Web UI server run');
    child!.process.kill('SIGKILL');
    await child!.exited;
    child = undefined;
    await eventually(async () => (temporalProcesses(dataDir).length === 0 ? true : undefined), 'no Temporal process is left', 20_000, 100);
  });
});
