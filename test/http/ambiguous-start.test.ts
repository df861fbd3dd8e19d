/**
 * A trigger call whose start fails after Temporal may have created the run (UNAVAILABLE, say):
 * the call's attachments and stored inputs are removed only when Temporal says there is no such
 * run. The gateway here is a second app over a real flowgate's registry, worker and blob store;
 * only its RunService's start (and, in one case, exists) is made to fail as a flaky network would.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { ServiceError } from '@temporalio/client';
import type { RunInput } from '../../src/common/run-types';
import { startBareGateway } from '../support/bare-gateway';
import { silentLogger } from '../../src/observability/logger';
import { RunService } from '../../src/runs/run-service';
import { echoInputsWorkflow } from '../support/echo-workflow';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { type LoopbackServer } from '../support/loopback';
import { filesUnder, MultipartBody, send, type SentResponse } from '../support/multipart';

/** What a gRPC UNAVAILABLE from Temporal looks like to the client. */
function unavailable(): ServiceError {
  return new ServiceError('14 UNAVAILABLE: Connection dropped', { cause: Object.assign(new Error('14 UNAVAILABLE: Connection dropped'), { code: 14 }) });
}

type StartFault = 'after-creating' | 'before-creating';

/** The real RunService, whose start fails as told; it records the run IDs it was asked to start. */
class FlakyRunService extends RunService {
  startFault: StartFault = 'after-creating';
  describeFails = false;
  readonly startedIds: string[] = [];

  override async start(input: Omit<RunInput, 'runId'>, idempotencyKey?: string, runId?: string): Promise<{ runId: string; existing: boolean }> {
    assert.ok(runId, 'the gateway chooses the run ID before start');
    this.startedIds.push(runId);
    if (this.startFault === 'after-creating') await super.start(input, idempotencyKey, runId);
    throw unavailable();
  }

  override async exists(runId: string): Promise<boolean> {
    if (this.describeFails) throw unavailable();
    return super.exists(runId);
  }

  get lastId(): string {
    const id = this.startedIds.at(-1);
    assert.ok(id, 'a start was attempted');
    return id;
  }
}

interface EchoBody {
  id: string;
  status: string;
  inputs: { note: string; attachments: { filename: string; size: number; url: string }[] };
  results: { result: { result: string } }[];
}

describe('trigger: a start that fails after Temporal may have created the run', () => {
  let fg: TestFlowgate;
  let p: Published;
  let gateway: LoopbackServer;
  let runs: FlakyRunService;

  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, echoInputsWorkflow);
    runs = new FlakyRunService(fg.client, fg.taskQueue, silentLogger);
    gateway = await startBareGateway(fg, { runs });
  });
  after(async () => {
    await gateway?.close();
    await fg?.stop();
  });

  /** The stored files of trigger calls: attachments, and inputs kept by reference. */
  const storedFiles = (): string[] => ['attachments', 'inputs'].flatMap((dir) => filesUnder(path.join(fg.dataDir, 'blobs', dir))).sort();

  /** A call with an attachment and a field large enough for the inputs to be stored by reference. */
  async function call(headers: Record<string, string> = {}): Promise<SentResponse & { stored: string[]; note: string }> {
    const note = `n${Math.random().toString(16).slice(2)}`.padEnd(300_000, 'n');
    const before = new Set(storedFiles());
    const response = await send(`${gateway.url}/ext/triggers/${p.triggerId}`, { 'X-API-KEY': p.apiKey, ...headers }, new MultipartBody([
      { name: 'note', value: note },
      { name: 'report', filename: 'report.pdf', contentType: 'application/pdf', head: Buffer.from('%PDF-1.7\n'), size: 2048 },
    ]));
    return { ...response, stored: storedFiles().filter((f) => !before.has(f)), note };
  }

  /** The run saw the call's inputs, stored inputs read back, and its attachment still downloads. */
  async function assertRunHasItsFiles(body: EchoBody, note: string): Promise<void> {
    assert.equal(body.status, 'COMPLETE');
    const seen = JSON.parse(body.results[0]?.result.result ?? '') as EchoBody['inputs'];
    assert.equal(seen.note, note);
    const [report] = seen.attachments;
    assert.equal(report?.filename, 'report.pdf');
    const download = await fetch(report?.url ?? '');
    assert.equal(download.status, 200);
    assert.equal((await download.arrayBuffer()).byteLength, 2048);
  }

  it('keeps the files and answers as for a started run when the run exists', async () => {
    runs.startFault = 'after-creating';
    runs.describeFails = false;
    const response = await call({ 'x-api-wait': 'true' });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers['x-pf-run-id'], runs.lastId);
    assert.equal(response.stored.length, 2, 'an attachment and the stored inputs');
    const body = response.json<EchoBody>();
    assert.equal(body.id, runs.lastId);
    assert.equal(body.inputs.note, response.note);
    await assertRunHasItsFiles(body, response.note);
    assert.deepEqual(response.stored.filter((f) => !storedFiles().includes(f)), [], 'no file of the call was removed');
  });

  it('keeps the files and answers as for a started run with an Idempotency-Key too; a retry finds the same run', async () => {
    runs.startFault = 'after-creating';
    runs.describeFails = false;
    const idempotencyKey = `ambiguous-${Math.random().toString(16).slice(2)}`;
    const response = await call({ 'x-api-wait': 'true', 'Idempotency-Key': idempotencyKey });
    assert.equal(response.status, 200, response.text);
    await assertRunHasItsFiles(response.json<EchoBody>(), response.note);
    const retried = await send(`${fg.url}/ext/triggers/${p.triggerId}`, { 'X-API-KEY': p.apiKey, 'Idempotency-Key': idempotencyKey }, new MultipartBody([{ name: 'note', value: 'again' }]));
    assert.equal(retried.status, 200, retried.text);
    assert.equal(retried.headers['x-pf-run-id'], runs.lastId);
    assert.equal(retried.headers['idempotent-replayed'], 'true');
  });

  it('keeps the files and answers 503 naming the run when Temporal cannot say; the run completes with them', async () => {
    runs.startFault = 'after-creating';
    runs.describeFails = true;
    const response = await call({ 'x-api-wait': 'true' });
    assert.equal(response.status, 503, response.text);
    assert.equal(response.json<{ error: string }>().error, 'temporal_unavailable');
    assert.ok(Number(response.headers['retry-after']) > 0);
    const runId = response.headers['x-pf-run-id'];
    assert.ok(typeof runId === 'string');
    assert.equal(runId, runs.lastId);
    assert.equal(response.headers['x-pf-automation-id'], p.workflowId);
    assert.equal(response.stored.length, 2);
    // The caller polls the run it was told about.
    await pollStatus(fg, p, runId);
    const results = await getJson<{ results: { resultUrls: Record<string, { url: string }> }[] }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    assert.equal(results.status, 200);
    const output = await (await fetch(results.body.results[0]?.resultUrls['output.txt']?.url ?? '')).text();
    await assertRunHasItsFiles({ id: runId, status: 'COMPLETE', inputs: JSON.parse(output) as EchoBody['inputs'], results: [{ result: { result: output } }] }, response.note);
  });

  it('removes the files and answers 503 when Temporal says the run does not exist', async () => {
    runs.startFault = 'before-creating';
    runs.describeFails = false;
    const before = storedFiles();
    const response = await call({ 'x-api-wait': 'true' });
    assert.equal(response.status, 503, response.text);
    assert.equal(response.json<{ error: string }>().error, 'temporal_unavailable');
    assert.equal(response.headers['x-pf-run-id'], undefined, 'no run to name');
    assert.equal(await runs.exists(runs.lastId), false);
    assert.deepEqual(storedFiles(), before, 'the call left no stored file');
  });
});
