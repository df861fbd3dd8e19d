/**
 * Multipart uploads on the API trigger (interface.md 2.2, 8): attachments, their limits and the
 * file-type policy, against a real flowgate over loopback HTTP. Bodies are generated while they
 * are sent; every refusal is checked to leave no stored file and to start no run.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createSigner } from '../../src/crypto/signed-urls';
import { echoInputsWorkflow, type AttachmentsSyncBody } from '../support/echo-workflow';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { filesUnder, MultipartBody, send, type Part, type SentResponse } from '../support/multipart';

const MIB = 1024 * 1024;
const ELF = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]);

type SyncBody = AttachmentsSyncBody;

describe('API trigger: multipart attachments', () => {
  let fg: TestFlowgate;
  let p: Published;

  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, echoInputsWorkflow);
  });
  after(async () => {
    await fg?.stop();
  });

  const blobsDir = (): string => path.join(fg.dataDir, 'blobs', 'attachments');

  type Sent = SentResponse & { storedBefore: string[]; foldersBefore: string[] };

  /** The per-file folders, attachments/<org>/<uuid>, the store holds. */
  const uploadFolders = (): string[] => {
    const list = (dir: string): string[] => { try { return readdirSync(dir); } catch { return []; } };
    return list(blobsDir()).flatMap((org) => list(path.join(blobsDir(), org)).map((id) => `${org}/${id}`)).sort();
  };

  /** Sends a generated multipart body; remembers which files the store held before. */
  async function sendTo(url: string, headers: Record<string, string>, body: Parameters<typeof send>[2]): Promise<Sent> {
    const storedBefore = filesUnder(blobsDir());
    const foldersBefore = uploadFolders();
    return { ...(await send(url, headers, body)), storedBefore, foldersBefore };
  }

  function upload(parts: Part[], headers: Record<string, string> = {}, target: Published = p): Promise<Sent> {
    return sendTo(`${fg.url}/ext/triggers/${target.triggerId}`, { 'X-API-KEY': target.apiKey, ...headers }, new MultipartBody(parts));
  }

  /** The refusal is `{error, message}` with this status and code; it started no run and stored nothing. */
  function expectRefused(response: Sent, status: number, code: string, message?: RegExp): void {
    assert.equal(response.status, status, response.text);
    const body = response.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], response.text);
    assert.equal(body.error, code, response.text);
    if (message) assert.match(String(body.message), message);
    assert.equal(response.headers['x-pf-run-id'], undefined, 'a refused request starts no run');
    assert.deepEqual(filesUnder(blobsDir()).sort(), response.storedBefore.sort(), 'a refused request leaves no stored file');
    assert.deepEqual(filesUnder(fg.dataDir).filter((f) => f.endsWith('.partial')), [], 'no partial upload is left');
    assert.deepEqual(uploadFolders(), response.foldersBefore, 'no emptied upload folder is left');
  }

  async function accepted(response: Sent): Promise<SyncBody> {
    assert.equal(response.status, 200, response.text);
    const body = response.json<SyncBody>();
    assert.equal(body.status, 'COMPLETE', response.text);
    return body;
  }

  it('delivers files as attachments (filename, contentType, size, signed url) next to the ordinary fields, and the run sees them', async () => {
    const response = await upload([
      { name: 'title', value: 'quarterly report' },
      { name: 'tag', value: 'a' },
      { name: 'tag', value: 'b' },
      { name: 'report', filename: 'report.pdf', contentType: 'application/pdf', head: Buffer.from('%PDF-1.7\n'), size: 4096 },
      { name: 'photo', filename: 'photo.jpg', contentType: 'image/jpeg', head: Buffer.from([0xff, 0xd8, 0xff, 0xe0]), size: 1000 },
    ], { 'x-api-wait': 'true' });
    const body = await accepted(response);
    assert.equal(body.inputs.title, 'quarterly report');
    assert.deepEqual(body.inputs.tag, ['a', 'b']);
    const [report, photo] = body.inputs.attachments;
    assert.ok(report && photo);
    assert.deepEqual(Object.keys(report).sort(), ['contentType', 'filename', 'size', 'url']);
    assert.deepEqual({ ...report, url: undefined }, { filename: 'report.pdf', contentType: 'application/pdf', size: 4096, url: undefined });
    assert.deepEqual({ ...photo, url: undefined }, { filename: 'photo.jpg', contentType: 'image/jpeg', size: 1000, url: undefined });
    // the run got the same inputs
    assert.deepEqual(JSON.parse(body.results[0]?.result.result ?? ''), body.inputs);
    // the link downloads the very bytes, under the sanitized name, for 24 hours
    const url = new URL(report.url);
    assert.ok(report.url.startsWith(`${fg.url}/files/attachments/`), report.url);
    const expires = Number(url.searchParams.get('exp')) - Date.now() / 1000;
    assert.ok(expires > 24 * 3600 - 120 && expires <= 24 * 3600 + 1, `valid for 24 hours, not ${expires} s`);
    const download = await fetch(report.url);
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), 'application/pdf');
    assert.match(download.headers.get('content-disposition') ?? '', /report\.pdf/);
    const bytes = Buffer.from(await download.arrayBuffer());
    assert.equal(bytes.length, 4096);
    assert.equal(bytes.subarray(0, 9).toString(), '%PDF-1.7\n');
    assert.ok(bytes.subarray(9).every((b) => b === 0x61));
  });

  it('accepts a 1-byte file and a file of exactly 25 MiB (26,214,400 bytes)', async () => {
    const body = await accepted(await upload([
      { name: 'tiny', filename: 'one.bin', contentType: 'application/octet-stream', head: Buffer.from('x') },
      { name: 'big', filename: 'exactly-25MiB.dat', contentType: 'application/octet-stream', size: 25 * MIB, fill: 0x30 },
    ], { 'x-api-wait': 'true' }));
    assert.deepEqual(body.inputs.attachments.map((a) => [a.filename, a.size]), [['one.bin', 1], ['exactly-25MiB.dat', 25 * MIB]]);
    const tiny = await fetch(body.inputs.attachments[0]?.url ?? '');
    assert.equal(await tiny.text(), 'x');
    // the big one is whole: hash it as it streams down
    const big = await fetch(body.inputs.attachments[1]?.url ?? '');
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of big.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      size += chunk.length;
    }
    assert.equal(size, 25 * MIB);
    const expected = createHash('sha256');
    const block = Buffer.alloc(MIB, 0x30);
    for (let i = 0; i < 25; i++) expected.update(block);
    assert.equal(hash.digest('hex'), expected.digest('hex'));
  });

  it('refuses a file of 25 MiB + 1 byte with 413 file_too_large and stores none of the request\'s files', async () => {
    const response = await upload([
      { name: 'first', filename: 'fine.txt', contentType: 'text/plain', size: 1000 },
      { name: 'big', filename: 'too-big.dat', contentType: 'application/octet-stream', size: 25 * MIB + 1 },
      { name: 'after', filename: 'later.txt', contentType: 'text/plain', size: 10 * MIB },
    ]);
    expectRefused(response, 413, 'file_too_large', /too-big\.dat.*25 MiB \(26214400 bytes\)/);
  });

  it('accepts 20 files and refuses 21 with 413 too_many_files', async () => {
    const files = (n: number): Part[] => Array.from({ length: n }, (_, i) => ({ name: 'f', filename: `file-${i}.txt`, contentType: 'text/plain', size: 100 }));
    const ok = await accepted(await upload(files(20), { 'x-api-wait': 'true' }));
    assert.equal(ok.inputs.attachments.length, 20);
    assert.deepEqual(ok.inputs.attachments.map((a) => a.filename), Array.from({ length: 20 }, (_, i) => `file-${i}.txt`));
    expectRefused(await upload(files(21)), 413, 'too_many_files', /at most 20 files/);
  });

  it('refuses attachments over 100 MiB in all with 413 attachments_too_large, though each file is within 25 MiB', async () => {
    const response = await upload([
      ...Array.from({ length: 4 }, (_, i): Part => ({ name: 'f', filename: `part-${i}.dat`, contentType: 'application/octet-stream', size: 25 * MIB })),
      { name: 'f', filename: 'one-too-many-bytes.dat', contentType: 'application/octet-stream', size: 1 },
      { name: 'f', filename: 'never-read.dat', contentType: 'application/octet-stream', size: 5 * MIB },
    ]);
    expectRefused(response, 413, 'attachments_too_large', /100 MiB \(104857600 bytes\)/);
  });

  it('refuses an ELF renamed photo.jpg (declared image/jpeg) with 415 file_type_refused', async () => {
    const response = await upload([
      { name: 'note', value: 'innocent' },
      { name: 'ok', filename: 'ok.txt', contentType: 'text/plain', size: 2 * MIB },
      { name: 'photo', filename: 'photo.jpg', contentType: 'image/jpeg', head: ELF, size: 3 * MIB },
    ]);
    expectRefused(response, 415, 'file_type_refused', /photo\.jpg.*ELF/);
  });

  it('refuses a #! script named notes.txt (declared text/plain) with 415, however short', async () => {
    expectRefused(await upload([{ name: 'notes', filename: 'notes.txt', contentType: 'text/plain', head: Buffer.from('#!/bin/sh\nrm -rf /\n') }]),
      415, 'file_type_refused', /notes\.txt.*script/);
    expectRefused(await upload([{ name: 'notes', filename: 'short.txt', contentType: 'text/plain', head: Buffer.from('#!') }]), 415, 'file_type_refused');
  });

  it('refuses other executables by content (PE, Mach-O) and scripts and programs by name, whatever they claim to be', async () => {
    const cases: Part[] = [
      { name: 'f', filename: 'report.pdf', contentType: 'application/pdf', head: Buffer.from('MZ\x90\x00\x03\x00'), size: 600 },
      { name: 'f', filename: 'image.png', contentType: 'image/png', head: Buffer.from([0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1]) },
      { name: 'f', filename: 'data.bin', head: Buffer.from([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2]) },
      { name: 'f', filename: 'bom.txt', contentType: 'text/plain', head: Buffer.from('\ufeff#!/usr/bin/env python\n') },
      { name: 'f', filename: 'setup.exe', contentType: 'image/png', head: Buffer.from('harmless text') },
      { name: 'f', filename: 'deploy.SH', contentType: 'text/plain', head: Buffer.from('echo hi') },
      { name: 'f', filename: 'invoice.pdf.bat', contentType: 'application/pdf', head: Buffer.from('%PDF') },
      { name: 'f', filename: 'script.ps1', head: Buffer.from('Write-Host hi') },
      { name: 'f', filename: 'tool.py', head: Buffer.from('print(1)') },
      { name: 'f', filename: 'plain.dat', contentType: 'application/x-msdownload', head: Buffer.from('plain') },
    ];
    for (const part of cases) {
      const response = await upload([{ name: 'before', filename: 'fine.txt', contentType: 'text/plain', size: 10 }, part]);
      expectRefused(response, 415, 'file_type_refused');
    }
  });

  it('sanitizes file names: ../../etc/passwd becomes passwd, special characters are replaced', async () => {
    const body = await accepted(await upload([
      { name: 'f', filename: '../../etc/passwd', contentType: 'text/plain', head: Buffer.from('root:x:0:0') },
      { name: 'f', filename: '..\\..\\windows\\win.ini', contentType: 'text/plain', head: Buffer.from('[fonts]') },
      { name: 'f', filename: 'a<b>:c|d?*e$.txt', contentType: 'text/plain', head: Buffer.from('x') },
      { name: 'f', filename: '.hidden', contentType: 'text/plain', head: Buffer.from('x') },
      { name: 'f', filename: '..', contentType: 'text/plain', head: Buffer.from('x') },
      { name: 'f', filename: 'Résumé 2024.pdf', contentType: 'application/pdf; name=x', head: Buffer.from('%PDF') },
    ], { 'x-api-wait': 'true' }));
    const names = body.inputs.attachments.map((a) => a.filename);
    assert.deepEqual(names, ['passwd', 'win.ini', 'a_b_c_d_e_.txt', 'hidden', 'file', 'Résumé 2024.pdf']);
    assert.equal(body.inputs.attachments[5]?.contentType, 'application/pdf');
    for (const file of filesUnder(blobsDir())) {
      assert.ok(path.resolve(file).startsWith(path.resolve(blobsDir()) + path.sep), `${file} stays inside the attachments store`);
    }
    const passwd = await fetch(body.inputs.attachments[0]?.url ?? '');
    assert.equal(await passwd.text(), 'root:x:0:0');
    assert.match(passwd.headers.get('content-disposition') ?? '', /filename="passwd"/);
  });

  it('refuses an expired and a tampered attachment link with 403', async () => {
    const body = await accepted(await upload([{ name: 'f', filename: 'secret.txt', contentType: 'text/plain', head: Buffer.from('the secret') }], { 'x-api-wait': 'true' }));
    const link = new URL(body.inputs.attachments[0]?.url ?? '');
    const key = link.pathname.slice('/files/'.length);
    assert.equal(await (await fetch(link)).text(), 'the secret');

    const otherFile = new URL(link);
    otherFile.pathname = link.pathname.replace(/secret\.txt$/, 'other.txt');
    const longer = new URL(link);
    longer.searchParams.set('exp', String(Number(link.searchParams.get('exp')) + 3600));
    const renamed = new URL(link);
    renamed.searchParams.set('name', 'evil.html');
    const retyped = new URL(link);
    retyped.searchParams.set('type', 'text/html');
    const misencoded = new URL(link); // malformed percent-encoding: no such link was ever handed out
    misencoded.pathname = `${link.pathname}%E0`;
    for (const tampered of [otherFile, longer, renamed, retyped, misencoded]) {
      const response = await fetch(tampered);
      assert.equal(response.status, 403, tampered.href);
      assert.deepEqual(await response.json(), { error: 'invalid_link', message: 'this link is not valid' });
    }
    // signed with this instance's own key 25 hours ago for 24 hours: genuine, but expired
    const signingKey = readFileSync(path.join(fg.dataDir, 'secrets', 'signing.key'));
    const yesterday = createSigner(signingKey, fg.url, () => Date.now() - 25 * 3600_000);
    const expired = await fetch(yesterday.sign(key, 24 * 3600, { name: 'secret.txt', type: 'text/plain' }));
    assert.equal(expired.status, 403);
    assert.deepEqual(await expired.json(), { error: 'expired_link', message: 'this link has expired' });
  });

  it('ignores an empty file input (no filename, no content), as a browser sends it', async () => {
    const body = await accepted(await upload([
      { name: 'who', value: 'Ann' },
      { name: 'upload', filename: '', contentType: 'application/octet-stream' },
    ], { 'x-api-wait': 'true' }));
    assert.deepEqual(body.inputs, { who: 'Ann', attachments: [] });
  });

  it('refuses a text field named attachments with 400, and a malformed multipart body with 400', async () => {
    const response = await upload([{ name: 'attachments', value: '[]' }, { name: 'f', filename: 'a.txt', contentType: 'text/plain', size: 10 }]);
    expectRefused(response, 400, 'invalid_body', /attachments/);
    const truncated = await sendTo(`${fg.url}/ext/triggers/${p.triggerId}`, { 'X-API-KEY': p.apiKey }, {
      contentType: 'multipart/form-data; boundary=xyz',
      async *chunks() {
        yield Buffer.from('--xyz\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nsome text but no closing boundary');
      },
    });
    expectRefused(truncated, 400, 'invalid_multipart');
    const noBoundary = await fetch(`${fg.url}/ext/triggers/${p.triggerId}`, {
      method: 'POST', headers: { 'X-API-KEY': p.apiKey, 'Content-Type': 'multipart/form-data' }, body: 'whatever',
    });
    assert.equal(noBoundary.status, 400);
    assert.equal(((await noBoundary.json()) as { error: string }).error, 'invalid_multipart');
  });

  it('skips a field without a name and refuses a field in a charset it cannot read, without crashing', async () => {
    const raw = (part: string): Promise<Sent> => sendTo(`${fg.url}/ext/triggers/${p.triggerId}`, { 'X-API-KEY': p.apiKey, 'x-api-wait': 'true' }, {
      contentType: 'multipart/form-data; boundary=zz',
      async *chunks() {
        yield Buffer.from(`--zz\r\n${part}\r\n--zz\r\nContent-Disposition: form-data; name="who"\r\n\r\nAnn\r\n--zz--\r\n`);
      },
    });
    const unnamed = await accepted(await raw('Content-Disposition: form-data; name=""\r\n\r\nlost'));
    assert.deepEqual(unnamed.inputs, { who: 'Ann', attachments: [] });
    expectRefused(await raw('Content-Disposition: form-data; name="x"\r\nContent-Type: text/plain; charset=x-no-such-charset\r\n\r\nvalue'),
      400, 'invalid_multipart', /charset/);
  });

  it('refuses form fields over 1 MiB in all with 413 fields_too_large', async () => {
    const half = 'x'.repeat(600 * 1024);
    expectRefused(await upload([{ name: 'a', value: half }, { name: 'b', value: half }, { name: 'f', filename: 'a.txt', size: 10 }]), 413, 'fields_too_large');
  });

  it('validates multipart inputs, attachments included, against the inputSchema: 422 naming the fields, and removes the stored files', async () => {
    const strict = await publishWorkflow(fg, {
      ...echoInputsWorkflow,
      name: 'needs-two-files',
      inputSchema: {
        type: 'object',
        required: ['customer', 'count'],
        properties: { customer: { type: 'string' }, count: { type: 'integer' }, attachments: { type: 'array', minItems: 2 } },
      },
    });
    const response = await upload([{ name: 'count', value: 'three' }, { name: 'f', filename: 'only-one.txt', contentType: 'text/plain', size: 10 }], {}, strict);
    expectRefused(response, 422, 'invalid_inputs', /customer is required/);
    assert.match(response.json<{ message: string }>().message, /count/);
    assert.match(response.json<{ message: string }>().message, /attachments/);
    // text fields are converted to the schema's types
    const ok = await accepted(await upload([
      { name: 'customer', value: 'ACME' }, { name: 'count', value: '3' },
      { name: 'f', filename: 'a.txt', contentType: 'text/plain', size: 10 }, { name: 'f', filename: 'b.txt', contentType: 'text/plain', size: 10 },
    ], { 'x-api-wait': 'true' }, strict));
    assert.equal(ok.inputs.count, 3);
  });

  it('answers 415 to multipart on the webhook trigger, storing nothing', async () => {
    const response = await sendTo(`${fg.url}/ext/webhook/${p.apiKey}/triggers/${p.triggerId}`, {},
      new MultipartBody([{ name: 'f', filename: 'a.txt', contentType: 'text/plain', size: 5 * MIB }]));
    expectRefused(response, 415, 'unsupported_media_type', /multipart/);
  });
});
