/**
 * A data dir made by the flowgate before issue 47 (the Temporal CLI v1.5.1's dev server, Temporal
 * 1.29.1 on SQLite, TypeScript SDK 1.23), opened by today's `npm start` (Temporal 1.32 and SDK
 * 1.24): the database is upgraded in place (temporal/sqlite-upgrade.ts) and everything in it still
 * answers. test/fixtures/data-dir-temporal-1.29.tar.gz holds that data dir: its registry, keys and
 * Temporal database after three runs of `legacy greet` (COMPLETE) and one of `legacy approval`,
 * paused on ann@example.com's approval. Its secrets are a throwaway fixture's.
 *
 * The paused run has a time limit of a year (its workflow's `timeoutSeconds: 31536000`, Temporal's
 * execution timeout a minute later): made on 2026-12-02, the fixture serves until 2027-12-02, after
 * which the test says so. The completed runs passed the namespace's retention (24 hours) on
 * 2026-12-03: the upgraded Temporal deletes them at its start (its deletion timers are overdue), so
 * the list may show them only for a moment; their status and results still answer from the
 * registry's finished runs (FLOWGATE_RETENTION_FINISHED_RUNS_DAYS, 30 days after they ended: until
 * 2027-01-01, after which the test no longer asks). To make it again: check out 0a89feb (the last flowgate on the CLI's dev
 * server), `npm start` with FLOWGATE_ADMIN_TOKEN=admin-token-for-fixture-0001 on an empty data dir,
 * create the two workflows, a trigger for each and an API key, make the four runs, stop it, and
 * checkpoint both SQLite files (journal_mode=delete) before packing the data dir.
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
const GREET_TRIGGER = 'trg_4pUFNnTE7jnZFmWX';
const API_KEY = 'fgk_Utqcunq9dtjIFQaHkYogDCipkrWGyMoC03xjTmrU5xw';
const PAUSED_RUN = '30ea710b-c1af-4a4e-be8c-46b3aa8e9c26';
/** when the paused run's time limit ends (see the header) */
const FIXTURE_EXPIRES = Date.parse('2027-12-02T05:00:00Z');
/** until when the registry keeps the completed runs' status and results (see the header) */
const FINISHED_RUNS_KEPT = Date.parse('2027-01-01T05:00:00Z');
const COMPLETED_RUNS = ['41e7a765-6bcc-4156-978b-e38115ad3c62', '63cc83e8-a7ad-44b0-94ee-0330558e49d4', '470c240f-ff3d-4839-bf5b-b142bac08831'];

interface RunBody { status: string; runId?: string; waitingOn?: { kind: string }; results?: unknown[] }

describe('a data dir of the Temporal 1.29 dev server, opened by today\'s embedded Temporal', function () {
  this.timeout(300_000);
  let parent = '';
  let env: Record<string, string> = {};
  let child: Child | undefined;
  let url = '';

  before(async () => {
    assert.ok(Date.now() < FIXTURE_EXPIRES, 'the fixture\'s paused run has passed its time limit: make the fixture again (see this file\'s header)');
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

    // the visibility rows carried over: the runs list (Temporal's visibility, by the organization's search attribute);
    // the completed runs are listed too until Temporal's retention deletes them (see the header)
    const listed = await eventually(async () => {
      const { body } = await api<{ runs: { runId: string; status: string }[] }>('GET', '/api/v1/runs?limit=50');
      assert.ok(body.runs.some((r) => r.runId === PAUSED_RUN), JSON.stringify(body));
      return body.runs;
    }, 'the paused run is listed', 30_000);
    assert.ok(listed.every((r) => [...COMPLETED_RUNS, PAUSED_RUN].includes(r.runId)), JSON.stringify(listed));
    if (Date.now() < FINISHED_RUNS_KEPT) {
      for (const runId of COMPLETED_RUNS) assert.equal((await api<RunBody>('GET', `/api/v1/runs/${runId}`)).body.status, 'COMPLETE', runId);
    }

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
    // the paused run, now complete, and the new one; the earlier completed ones only until retention deleted them
    assert.ok(body.runs.some((r) => r.runId === PAUSED_RUN), JSON.stringify(body));
    assert.ok(body.runs.length >= 2 && body.runs.length <= 5, JSON.stringify(body));
    assert.ok(body.runs.every((r) => r.status === 'COMPLETE'), JSON.stringify(body));
    if (Date.now() < FINISHED_RUNS_KEPT) {
      for (const runId of COMPLETED_RUNS) assert.equal((await api<RunBody>('GET', `/api/v1/runs/${runId}`)).body.status, 'COMPLETE', runId);
    }
  });
});
