/**
 * A data dir made by the flowgate before issue 47 (the Temporal CLI v1.5.1's dev server, Temporal
 * 1.29.1 on SQLite, TypeScript SDK 1.23), opened by today's `npm start` (Temporal 1.32 and SDK
 * 1.24): the database is upgraded in place (temporal/sqlite-upgrade.ts) and everything in it still
 * answers. test/fixtures/data-dir-temporal-1.29.tar.gz holds that data dir: its registry, keys and
 * Temporal database after three runs of `legacy greet` (COMPLETE) and one of `legacy approval`,
 * paused on ann@example.com's approval. Its secrets are a throwaway fixture's.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freeTemporalFrontendPort, temporalBinaries } from '../setup/root-hooks';
import { freePort } from '../../temporal/ports';
import { startMain, type Child } from '../support/processes';
import { eventually } from '../support/eventually';

const FIXTURE = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'data-dir-temporal-1.29.tar.gz');
const ADMIN = 'admin-token-for-fixture-0001';
const GREET_TRIGGER = 'trg_x5yode52SKLQNTaQ';
const API_KEY = 'fgk_wpXC30uA_UwRAXvMiXx2dFnlFP0-sCqKo7-RmkdPw9U';
const PAUSED_RUN = '19dc7766-8c3e-4de8-9cf1-937078157787';
const COMPLETED_RUNS = ['62adc29e-be6e-460a-b4b7-5b747016899a', '41a349d2-0a89-479f-93b6-114ab4395a1e', '1c730c9c-9ae1-4a53-b793-143417623603'];

interface RunBody { status: string; runId?: string; waitingOn?: { kind: string }; results?: unknown[] }

describe('a data dir of the Temporal 1.29 dev server, opened by today\'s embedded Temporal', function () {
  this.timeout(300_000);
  let parent = '';
  let env: Record<string, string> = {};
  let child: Child | undefined;
  let url = '';

  before(async () => {
    parent = mkdtempSync(path.join(os.tmpdir(), 'flowgate-upgrade-'));
    execFileSync('tar', ['xzf', FIXTURE, '-C', parent]);
    const { binaries, uiServer } = temporalBinaries();
    env = {
      FLOWGATE_DATA_DIR: path.join(parent, 'data'), FLOWGATE_ADMIN_TOKEN: ADMIN, FLOWGATE_DATA_KEYS: '', PORT: String(await freePort()),
      TEMPORAL_DEV_PORT: String(await freeTemporalFrontendPort()), TEMPORAL_UI_PORT: String(await freePort()),
      TEMPORAL_SERVER_PATH: binaries.server, TEMPORAL_UI_SERVER_PATH: uiServer,
    };
  });
  afterEach(async () => {
    child?.process.kill('SIGTERM');
    await child?.exited;
    child = undefined;
  });
  after(() => rmSync(parent, { recursive: true, force: true }));

  async function start(): Promise<void> {
    child = startMain(env);
    await child.waitForLine(/gateway listening on (http:\/\/\S+)/);
    url = /gateway listening on (http:\/\/\S+)/.exec(child.output())?.[1] ?? '';
  }

  const api = async <T>(method: string, pathname: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const response = await fetch(`${url}${pathname}`, {
      method, headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json() as T };
  };

  it('upgrades the database once, lists and reads the earlier runs, finishes the paused one and starts new ones', async () => {
    await start();
    assert.match(child!.output(), /upgraded \S+temporal\.sqlite to this Temporal's schema: created current_chasm_executions; rebuilt the visibility table \(\d+ workflow executions\)/);

    // the visibility rows carried over: the runs list (Temporal's visibility, by the organization's search attribute)
    const listed = await eventually(async () => {
      const { body } = await api<{ runs: { runId: string; status: string }[] }>('GET', '/api/v1/runs?limit=50');
      assert.equal(body.runs.length, 4, JSON.stringify(body));
      return body.runs;
    }, 'the four earlier runs are listed', 30_000);
    assert.deepEqual(listed.map((r) => r.runId).sort(), [...COMPLETED_RUNS, PAUSED_RUN].sort());
    for (const runId of COMPLETED_RUNS) assert.equal((await api<RunBody>('GET', `/api/v1/runs/${runId}`)).body.status, 'COMPLETE');

    // the paused run's history, written by SDK 1.23 on Temporal 1.29, replays on SDK 1.24 and takes its decision
    const paused = await eventually(async () => {
      const { body } = await api<RunBody>('GET', `/api/v1/runs/${PAUSED_RUN}`);
      assert.equal(body.waitingOn?.kind, 'approval', JSON.stringify(body));
      return body;
    }, 'the paused run reads as waiting on its approval', 60_000);
    assert.equal(paused.status, 'PAUSED');
    const decided = await api<unknown>('POST', `/api/v1/runs/${PAUSED_RUN}/approval`, { decision: 'approve', approver: 'ann@example.com' });
    assert.ok(decided.status < 300, JSON.stringify(decided));
    await eventually(async () => ((await api<RunBody>('GET', `/api/v1/runs/${PAUSED_RUN}`)).body.status === 'COMPLETE' ? true : undefined), 'the approved run completes', 60_000);

    const fresh = await fetch(`${url}/ext/triggers/${GREET_TRIGGER}`, {
      method: 'POST', headers: { 'X-API-KEY': API_KEY, 'x-api-wait': 'true', 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'eve' }),
    });
    assert.equal(fresh.status, 200, await fresh.clone().text());
    assert.match(JSON.stringify(await fresh.json()), /Hello eve/);
  });

  it('finds nothing to upgrade on the next start, and every run still answers', async () => {
    await start();
    assert.doesNotMatch(child!.output(), /upgraded/);
    const { body } = await api<{ runs: { runId: string; status: string }[] }>('GET', '/api/v1/runs?limit=50');
    assert.equal(body.runs.length, 5, JSON.stringify(body));
    assert.ok(body.runs.every((r) => r.status === 'COMPLETE'), JSON.stringify(body));
  });
});
