import assert from 'node:assert/strict';
import { publishWorkflow, startTestFlowgate, type TestFlowgate } from '../support/flowgate';
import { MultipartBody, send } from '../support/multipart';

interface Attachment { filename: string; size: number; url: string }

describe('idempotent replay of a trigger call with attachments', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  it('answers a replayed synchronous call with the run\'s own inputs, whose attachment links still work', async () => {
    const p = await publishWorkflow(fg, { name: 'files', steps: [{ name: 'Count', type: 'code', source: 'return String(inputs.attachments.length)' }] });
    const url = `${fg.url}/ext/triggers/${p.triggerId}`;
    const key = { 'X-API-KEY': p.apiKey, 'Idempotency-Key': `replay-${Date.now()}` };
    const first = await send(url, key, new MultipartBody([
      { name: 'note', value: 'first' }, { name: 'file', filename: 'first.txt', contentType: 'text/plain', head: Buffer.from('first file') },
    ]));
    assert.equal(first.status, 200);
    const replay = await send(url, { ...key, 'x-api-wait': 'true' }, new MultipartBody([
      { name: 'note', value: 'second' }, { name: 'file', filename: 'second.txt', contentType: 'text/plain', head: Buffer.from('second file') },
    ]));
    assert.equal(replay.status, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.headers['x-pf-run-id'], first.headers['x-pf-run-id']);
    const body = replay.json<{ inputs: { note: string; attachments: Attachment[] } }>();
    assert.equal(body.inputs.note, 'first');
    assert.deepEqual(body.inputs.attachments.map((a) => a.filename), ['first.txt']);
    const download = await fetch(body.inputs.attachments[0]?.url ?? '');
    assert.equal(download.status, 200);
    assert.equal(await download.text(), 'first file');
  });
});
