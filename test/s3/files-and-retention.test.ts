/**
 * The blob store through flowgate, on both stores: a multipart trigger call with attachments end
 * to end (received, stored, seen by the run, downloaded through its signed link), signed-link
 * tampering and expiry, the S3 redirect download mode, and the retention sweep as Temporal runs it
 * (its schedule created at start, its workflow deleting what expired as of a given moment).
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { ScheduleNotFoundError } from '@temporalio/client';
import { ENGINE_LEVEL } from '../../src/common/run-types';
import { signingKey } from '../../src/crypto/data-dir';
import { retentionScheduleId } from '../../src/retention/schedule';
import { createSigner } from '../../src/crypto/signed-urls';
import { echoInputsWorkflow, type AttachmentsSyncBody } from '../support/echo-workflow';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { MultipartBody, send } from '../support/multipart';
import { s3ServerForSuite } from '../support/versitygw';
import { clearHistory } from '../support/histories';

const MIB = 1024 * 1024;

type SyncBody = AttachmentsSyncBody;

async function hashOf(response: Response): Promise<{ hash: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { hash: hash.digest('hex'), size };
}

function expectedHash(size: number, fill: number, head = Buffer.alloc(0)): string {
  const hash = createHash('sha256').update(head);
  const block = Buffer.alloc(MIB, fill);
  let left = size - head.length;
  while (left > 0) {
    const n = Math.min(left, block.length);
    hash.update(block.subarray(0, n));
    left -= n;
  }
  return hash.digest('hex');
}

function describeWithStore(name: string, env: () => Record<string, string>, s3: boolean): void {
  describe(`files and retention through flowgate: ${name}`, function () {
    let fg: TestFlowgate;
    let p: Published;

    before(async () => {
      fg = await startTestFlowgate({ ...env(), FLOWGATE_RETENTION: 'on' });
      p = await publishWorkflow(fg, echoInputsWorkflow);
    });
    after(async () => {
      await fg?.stop();
    });

    const upload = async (parts: ConstructorParameters<typeof MultipartBody>[0]): Promise<SyncBody & { runId: string }> => {
      const response = await send(`${fg.url}/ext/triggers/${p.triggerId}`, { 'X-API-KEY': p.apiKey, 'x-api-wait': 'true' }, new MultipartBody(parts));
      assert.equal(response.status, 200, response.text);
      const body = response.json<SyncBody>();
      assert.equal(body.status, 'COMPLETE', response.text);
      return { ...body, runId: String(response.headers['x-pf-run-id']) };
    };

    it('a multipart trigger call with attachments: stored, seen by the run, downloaded whole through the signed link', async () => {
      const body = await upload([
        { name: 'title', value: 'scan' },
        { name: 'report', filename: 'report.pdf', contentType: 'application/pdf', head: Buffer.from('%PDF-1.7\n'), size: 4096 },
        // above the S3 store's multipart threshold
        { name: 'big', filename: 'big.dat', contentType: 'application/octet-stream', size: 20 * MIB, fill: 0x42 },
      ]);
      assert.equal(body.inputs.title, 'scan');
      assert.deepEqual(body.inputs.attachments.map((a) => [a.filename, a.size]), [['report.pdf', 4096], ['big.dat', 20 * MIB]]);
      assert.deepEqual(JSON.parse(body.results[0]?.result.result ?? ''), body.inputs, 'the run got the same inputs');
      const [report, big] = body.inputs.attachments;
      const small = await fetch(report!.url);
      assert.equal(small.status, 200);
      assert.equal(small.headers.get('content-type'), 'application/pdf');
      assert.match(small.headers.get('content-disposition') ?? '', /report\.pdf/);
      assert.equal((await hashOf(small)).hash, expectedHash(4096, 0x61, Buffer.from('%PDF-1.7\n')));
      const whole = await fetch(big!.url);
      assert.equal(whole.status, 200);
      assert.deepEqual(await hashOf(whole), { hash: expectedHash(20 * MIB, 0x42), size: 20 * MIB });
    });

    it('refuses a tampered or expired link without saying whether the file exists', async () => {
      const body = await upload([{ name: 'doc', filename: 'doc.txt', contentType: 'text/plain', head: Buffer.from('hello'), size: 5 }]);
      const url = new URL(body.inputs.attachments[0]!.url);
      const ok = await fetch(url);
      assert.equal(await ok.text(), 'hello');
      const refused = async (link: URL | string, code: string): Promise<void> => {
        const response = await fetch(link);
        assert.equal(response.status, 403);
        assert.equal(((await response.json()) as { error: string }).error, code);
      };
      const badSig = new URL(url);
      badSig.searchParams.set('sig', `${url.searchParams.get('sig')!.slice(0, -2)}AA`);
      await refused(badSig, 'invalid_link');
      const otherName = new URL(url);
      otherName.searchParams.set('name', 'evil.exe');
      await refused(otherName, 'invalid_link');
      const longer = new URL(url);
      longer.searchParams.set('exp', String(Number(url.searchParams.get('exp')) + 3600));
      await refused(longer, 'invalid_link');
      const otherKey = new URL(url.toString().replace('/doc.txt', '/other.txt'));
      await refused(otherKey, 'invalid_link');
      // signed with the gateway's own key, but two hours ago for one hour
      const key = url.pathname.slice('/files/'.length);
      const past = createSigner(await signingKey(fg.dataDir), fg.url, () => Date.now() - 2 * 3600_000);
      await refused(past.sign(decodeURIComponent(key), 3600, { name: 'doc.txt', type: 'text/plain' }), 'expired_link');
      // a link to a blob that is not there: the same answer as for any missing file
      const signer = createSigner(await signingKey(fg.dataDir), fg.url);
      const missing = await fetch(signer.sign('attachments/none/none/x.txt', 60));
      assert.equal(missing.status, 404);
    });

    it('never signs a link for longer than its blob is kept', async () => {
      const signer = createSigner(await signingKey(fg.dataDir), fg.url, Date.now, { maxTtlSeconds: () => 600 });
      const link = new URL(signer.sign('attachments/o/x/y.txt', 24 * 3600));
      assert.ok(Number(link.searchParams.get('exp')) <= Date.now() / 1000 + 600);
      const bounded = new URL(signer.sign('attachments/o/x/y.txt', 3600, { notAfter: Date.now() + 60_000 }));
      assert.ok(Number(bounded.searchParams.get('exp')) <= Date.now() / 1000 + 60);
    });

    it('the retention sweep runs as a Temporal Schedule\'s workflow and deletes what expired, and nothing else', async () => {
      const description = await fg.client.schedule.getHandle(retentionScheduleId(fg.taskQueue)).describe();
      assert.equal(description.action.type, 'startWorkflow');
      assert.equal(description.action.workflowType, 'retentionSweep');
      const body = await upload([{ name: 'doc', filename: 'keep-a-day.txt', contentType: 'text/plain', head: Buffer.from('soon gone'), size: 9 }]);
      const link = body.inputs.attachments[0]!.url;
      assert.equal((await fetch(link)).status, 200);
      // As of 23 hours from now nothing of this call has expired; as of 25 hours its attachment has,
      // while the run's step files (30 days) stay.
      const testRun = randomUUID();
      const sweep = (hours: number) => fg.client.workflow.execute('retentionSweep', {
        taskQueue: fg.taskQueue, workflowId: `sweep-test-${hours}-${testRun}`, args: [{ now: new Date(Date.now() + hours * 3600_000).toISOString(), engine: ENGINE_LEVEL }],
      }) as Promise<{ blobs: { removed: number; kept: number }; finishedRuns: { removed: number } }>;
      const early = await sweep(23);
      assert.equal(early.blobs.removed, 0, JSON.stringify(early));
      // what the Web UI shows of a sweep (level 6): its two activities by what they delete
      const labels = ((await clearHistory(fg, `sweep-test-23-${testRun}`)).events ?? [])
        .flatMap((e) => (e.userMetadata?.summary ? [defaultPayloadConverter.fromPayload<string>(e.userMetadata.summary)] : []));
      assert.deepEqual(labels, ['delete expired attachments, stored inputs and step files', 'delete the rows of finished runs past retention']);
      assert.equal((await fetch(link)).status, 200);
      const late = await sweep(25);
      assert.ok(late.blobs.removed >= 1, JSON.stringify(late));
      assert.ok(late.blobs.kept >= 1, `step files stay: ${JSON.stringify(late)}`);
      const gone = await fetch(link);
      assert.equal(gone.status, 404);
      assert.equal(((await gone.json()) as { error: string }).error, 'unknown_file');
      // finished-run rows go after 30 days
      const month = await sweep(31 * 24);
      assert.ok(month.finishedRuns.removed >= 1, JSON.stringify(month));
      // the sync answer above is still readable from Temporal once the row is gone
      const status = await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${body.runId}/status`);
      assert.equal(status.status, 200);
    });

    if (s3) {
      it('FLOWGATE_S3_DOWNLOADS=redirect answers 302 to a presigned URL no longer valid than the link', async () => {
        const redirecting = await startTestFlowgate({ ...env(), FLOWGATE_S3_DOWNLOADS: 'redirect', FLOWGATE_RETENTION: 'off' });
        try {
          const q = await publishWorkflow(redirecting, echoInputsWorkflow);
          const response = await send(`${redirecting.url}/ext/triggers/${q.triggerId}`, { 'X-API-KEY': q.apiKey, 'x-api-wait': 'true' },
            new MultipartBody([{ name: 'doc', filename: 'notes.txt', contentType: 'text/plain', head: Buffer.from('from the bucket'), size: 15 }]));
          assert.equal(response.status, 200, response.text);
          const link = new URL(response.json<SyncBody>().inputs.attachments[0]!.url);
          const answer = await fetch(link, { redirect: 'manual' });
          assert.equal(answer.status, 302);
          const location = new URL(answer.headers.get('location') ?? '');
          assert.notEqual(location.origin, new URL(redirecting.url).origin, 'served by the object store');
          const expires = Number(location.searchParams.get('X-Amz-Expires'));
          assert.ok(expires > 0 && expires <= Number(link.searchParams.get('exp')) - Date.now() / 1000 + 2, `presigned for ${expires} s`);
          const direct = await fetch(location);
          assert.equal(direct.status, 200);
          assert.equal(await direct.text(), 'from the bucket');
          assert.match(direct.headers.get('content-disposition') ?? '', /notes\.txt/);
          // and a tampered link is still refused by the gateway, before any redirect
          link.searchParams.set('sig', 'x');
          assert.equal((await fetch(link, { redirect: 'manual' })).status, 403);
          // retention off: no schedule
          await assert.rejects(redirecting.client.schedule.getHandle(retentionScheduleId(redirecting.taskQueue)).describe(), ScheduleNotFoundError);
        } finally {
          await redirecting.stop();
        }
      });
    }
  });
}

describeWithStore('local data dir', () => ({}), false);

describe('with an S3 bucket (versitygw)', function () {
  const s3Server = s3ServerForSuite();
  let prefix = 0;
  describeWithStore('S3 bucket', () => s3Server().env(`flowgate-${++prefix}`), true);
});
