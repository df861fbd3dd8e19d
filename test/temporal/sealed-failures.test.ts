/**
 * Failures' messages and stack traces sealed like the rest of a run's data (docs/operations.md, "Run
 * data encryption"): a step whose error message carries an input value, on a Temporal dev server of
 * this test's own with a database file, leaves that value nowhere in the database's bytes (the WAL
 * included), while the API shows the message, the Temporal CLI shows it through flowgate's codec
 * endpoint (and not without it), and a callback's retried delivery still names its last error.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { EmbeddedTemporal } from '../../temporal/embedded';
import { startTestTemporal, temporalCliPath } from '../setup/root-hooks';
import { recordHistoryPath } from '../support/ci';
import { eventually } from '../support/eventually';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';

const run = promisify(execFile);

/** The text, and every base64 string in it decoded: a marker inside a payload's bytes shows too. */
function revealed(text: string): string {
  const decoded = [...text.matchAll(/"([A-Za-z0-9+/]{8,}={0,2})"/g)].map((m) => Buffer.from(m[1] ?? '', 'base64').toString('latin1'));
  return [text, ...decoded].join('\n');
}

/** Every byte of the dev server's database: the file, its WAL and shared memory, whatever exists. */
function databaseBytes(dbFile: string): Buffer {
  const dir = path.dirname(dbFile);
  const base = path.basename(dbFile);
  return Buffer.concat(readdirSync(dir).filter((name) => name.startsWith(base)).map((name) => readFileSync(path.join(dir, name))));
}

describe('failure messages sealed in Temporal', function () {
  this.timeout(240_000);
  const marker = `fgleak${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  let dbDir: string;
  let dbFile: string;
  let dev: EmbeddedTemporal | undefined;
  let fg: TestFlowgate | undefined;
  let hook: LoopbackServer | undefined;
  let hookCalls = 0;
  let runId = '';

  before(async () => {
    dbDir = mkdtempSync(path.join(os.tmpdir(), 'flowgate-sealed-failures-'));
    dbFile = path.join(dbDir, 'temporal.sqlite');
    dev = await startTestTemporal({ dbFile });
    fg = await startTestFlowgate({ TEMPORAL_ADDRESS: dev.address, FLOWGATE_DATA_ENCRYPTION: 'on' });
    // a callback receiver that keeps refusing: the delivery stays DELIVERING with a last error
    hook = await listenOnLoopback(http.createServer((req, res) => {
      hookCalls++;
      req.resume();
      req.on('end', () => { res.statusCode = 503; res.end(); });
    }));
  });
  after(async () => {
    await fg?.stop();
    await hook?.close();
    await dev?.stop();
    rmSync(dbDir, { recursive: true, force: true });
  });

  it('keeps a step\'s error message carrying an input out of Temporal\'s database, and shows it through the API, the CLI\'s codec and a callback\'s status', async () => {
    const p = await publishWorkflow(fg!, {
      name: 'sealed-failure',
      steps: [{
        name: 'Leak', type: 'code', source: 'throw new Error("refused " + inputs.secret)',
        // a retried attempt's failure is an activity failure in Temporal, the last one the run's
        retry: { maxAttempts: 2, initialInterval: '100ms' },
      }],
    });
    const started = await trigger(fg!, p, { secret: marker }, { 'X-Pf-Callback-Url': `${hook!.url}/hook` });
    assert.equal(started.status, 200, await started.clone().text());
    runId = started.headers.get('X-Pf-Run-Id') ?? '';
    const status = await pollStatus(fg!, p, runId);
    assert.equal(status.status, 'FAILED');
    assert.ok(status.error?.includes(`refused ${marker}`), `the status shows the message: ${status.error}`);
    const view = await fg!.admin<{ error?: string }>('GET', `/api/v1/runs/${runId}`);
    assert.ok(view.body.error?.includes(`refused ${marker}`), `the run's view shows it: ${JSON.stringify(view.body)}`);

    // What Temporal holds: the failures of both attempts and of the run, all sealed.
    const history = await fg!.client.workflow.getHandle(runId).fetchHistory();
    const failures = (history.events ?? []).flatMap((e) => [e.activityTaskFailedEventAttributes?.failure, e.workflowExecutionFailedEventAttributes?.failure]).filter((f) => f);
    assert.ok(failures.length >= 1, 'the history holds the run\'s failure');
    for (const failure of failures) {
      assert.equal(failure?.message, 'Encoded failure');
      assert.equal(failure?.stackTrace ?? '', '');
      assert.equal(Buffer.from(failure?.encodedAttributes?.metadata?.encoding ?? []).toString(), 'binary/encrypted');
    }
    // FLOWGATE_RECORD_HISTORY=<file>: keep it (committed as histories/sealed/run-automation-sealed-failure.json, opened with FIXTURE_DATA_KEYS)
    const recordTo = recordHistoryPath();
    if (recordTo) await writeFile(recordTo, `${historyToJSON(history)}\n`, { flag: 'wx' });

    // The Temporal CLI shows the message through flowgate's codec endpoint, and without it does not.
    const show = async (codec: boolean): Promise<string> => revealed((await run(temporalCliPath(), [
      'workflow', 'show', '--workflow-id', runId, '--address', dev!.address, '--namespace', 'default', '--output', 'json',
      ...(codec ? ['--codec-endpoint', `${fg!.url}/codec`, '--codec-auth', `Bearer ${fg!.adminToken}`] : []),
    ], { env: { ...process.env, TEMPORAL_CODEC_ENDPOINT: '', TEMPORAL_CODEC_AUTH: '' }, maxBuffer: 32 * 1024 * 1024 })).stdout);
    assert.ok(!(await show(false)).includes(marker), 'the CLI without the codec');
    assert.ok((await show(true)).includes(`refused ${marker}`), 'the CLI through the codec endpoint');

    // The callback's delivery is being retried: its status names the last error in clear.
    const callback = await eventually(async () => {
      const { body } = await fg!.admin<{ callback?: { state: string; attempts: number; lastError?: string } }>('GET', `/api/v1/runs/${runId}`);
      return body.callback?.state === 'DELIVERING' && body.callback.attempts >= 1 && body.callback.lastError ? body.callback : undefined;
    }, 'a failed callback attempt', 60_000);
    assert.match(callback.lastError ?? '', /503/);
    assert.ok(hookCalls >= 1);

    // Every byte Temporal wrote: the run is there (its ID, in clear), the input value is not.
    await fg!.stop();
    fg = undefined;
    await dev!.stop();
    dev = undefined;
    const bytes = databaseBytes(dbFile);
    assert.ok(bytes.includes(runId), 'the database holds the run');
    assert.ok(!bytes.includes(marker), 'the input value is nowhere in Temporal\'s database');
  });
});
