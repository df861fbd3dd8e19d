/**
 * Property-based test of both trigger endpoints (fast-check): random methods, credentials, content
 * types, bodies (JSON, text, bytes, forms, multipart with hostile file names and executable
 * content), query strings and headers. Whatever arrives: no 5xx, every error is `{error, message}`
 * without a run, a refused request stores nothing, and the runs that exist are exactly those that
 * were answered with a run ID.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import fc from 'fast-check';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { filesUnder } from '../support/multipart';

const BOUNDARY = 'fuzzb0undary';
const printable = (max: number): fc.Arbitrary<string> => fc.stringMatching(new RegExp(`^[\\x20-\\x7e]{0,${max}}$`));

const fileContent = fc.oneof(
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  fc.constantFrom(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 1, 2]), Buffer.from('#!/bin/sh\necho'), Buffer.from('MZ\x90'), Buffer.from('%PDF-1.4'), Buffer.alloc(0)),
);

const multipartBody = fc.array(fc.oneof(
  fc.record({ name: printable(12), value: fc.string({ maxLength: 40 }), charset: fc.option(fc.oneof(fc.constantFrom('utf-8', 'latin1', 'utf-16le', 'base64'), printable(12)), { nil: undefined }) }),
  fc.record({
    name: printable(12),
    filename: fc.oneof(printable(30), fc.constantFrom('../../etc/passwd', 'photo.jpg', 'run.sh', '', '..', 'a/b\\c.txt', 'x.exe')),
    contentType: fc.option(fc.constantFrom('image/jpeg', 'text/plain', 'application/x-sh', 'application/octet-stream'), { nil: undefined }),
    content: fileContent,
  }),
), { maxLength: 6 }).map((parts) => {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const clean = (s: string): string => s.replace(/["\r\n]/g, '_');
    let head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${clean(part.name)}"`;
    if ('filename' in part) {
      head += `; filename="${clean(part.filename)}"${part.contentType ? `\r\nContent-Type: ${part.contentType}` : ''}`;
      chunks.push(Buffer.from(`${head}\r\n\r\n`), part.content, Buffer.from('\r\n'));
    } else {
      const type = part.charset === undefined ? '' : `\r\nContent-Type: text/plain; charset=${part.charset.replace(/[\r\n]/g, '')}`;
      chunks.push(Buffer.from(`${head}${type}\r\n\r\n${part.value}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
});

const body = fc.option(fc.oneof(
  fc.json().map((s) => Buffer.from(s)),
  fc.dictionary(printable(10), fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.boolean())).map((o) => Buffer.from(JSON.stringify(o))),
  fc.string({ maxLength: 200 }).map((s) => Buffer.from(s)),
  fc.uint8Array({ maxLength: 500 }).map((b) => Buffer.from(b)),
  fc.array(fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })), { maxLength: 6 }).map((pairs) => Buffer.from(new URLSearchParams(pairs).toString())),
  multipartBody,
), { nil: undefined });

const contentType = fc.option(fc.oneof(
  fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/x-www-form-urlencoded', `multipart/form-data; boundary=${BOUNDARY}`,
    'multipart/form-data', 'text/plain', 'application/xml', 'application/vnd.api+json', 'application/json; charset=latin1', 'multipart/mixed'),
  printable(40),
), { nil: undefined });

const request = fc.record({
  endpoint: fc.constantFrom('api', 'webhook'),
  method: fc.constantFrom('GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
  key: fc.constantFrom('valid', 'valid', 'valid', 'unknown', 'missing'),
  trigger: fc.constantFrom('valid', 'valid', 'valid', 'unknown'),
  query: fc.option(fc.array(fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })), { maxLength: 4 }), { nil: undefined }),
  contentType,
  body,
  wait: fc.option(fc.constantFrom('true', 'false', 'maybe', ''), { nil: undefined }),
  prefer: fc.option(fc.oneof(fc.constantFrom('wait=1', 'wait=0', 'wait=abc', 'respond-async, wait=2', 'wait=99999'), printable(30)), { nil: undefined }),
  idempotencyKey: fc.option(printable(20), { nil: undefined }),
  contentEncoding: fc.option(fc.constantFrom('gzip', 'identity', 'br'), { nil: undefined }),
});

describe('trigger endpoints under random requests (fast-check)', () => {
  let fg: TestFlowgate;
  let p: Published;

  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, {
      name: 'fuzzed',
      inputSchema: { type: 'object', properties: { n: { type: 'integer' }, attachments: { type: 'array', maxItems: 4 } } },
      steps: [{ name: 'Say', type: 'template', format: 'plaintext', template: 'n={{inputs.n}}' }],
    });
  });
  after(async () => {
    await fg?.stop();
  });

  it('never answers 5xx, answers every error as {error, message} without a run, and stores nothing for a refused request', async function () {
    this.timeout(300_000);
    const started = new Set<string>();
    // What trigger calls store (step outputs of earlier async runs land elsewhere, at their own pace).
    const stored = (): string[] => ['attachments', 'inputs'].flatMap((dir) => filesUnder(path.join(fg.dataDir, 'blobs', dir))).sort();
    await fc.assert(fc.asyncProperty(request, async (r) => {
      const key = r.key === 'valid' ? p.apiKey : r.key === 'unknown' ? `fgk_${'z'.repeat(43)}` : '';
      const triggerId = r.trigger === 'valid' ? p.triggerId : 'trg_nosuchtrigger1';
      const query = r.query ? `?${new URLSearchParams(r.query).toString()}` : '';
      const pathname = r.endpoint === 'api' ? `/ext/triggers/${triggerId}${query}` : `/ext/webhook/${encodeURIComponent(key || 'nokey')}/triggers/${triggerId}${query}`;
      const headers: Record<string, string> = {};
      if (r.endpoint === 'api' && key) headers['X-API-KEY'] = key;
      if (r.contentType !== undefined) headers['Content-Type'] = r.contentType;
      if (r.wait !== undefined) headers['x-api-wait'] = r.wait;
      if (r.prefer !== undefined) headers.Prefer = r.prefer;
      if (r.idempotencyKey !== undefined) headers['Idempotency-Key'] = r.idempotencyKey;
      if (r.contentEncoding !== undefined) headers['Content-Encoding'] = r.contentEncoding;
      const sendsBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';

      const before = stored();
      const response = await fg.request(pathname, { method: r.method, headers, body: sendsBody ? r.body : undefined });
      const text = await response.text();
      const runId = response.headers.get('X-Pf-Run-Id');
      assert.ok(response.status < 500, `${response.status} ${text}`);
      if (response.status >= 400) {
        assert.equal(runId, null, `an error started run ${runId}`);
        if (r.method !== 'HEAD') {
          const parsed = JSON.parse(text) as Record<string, unknown>;
          assert.deepEqual(Object.keys(parsed).sort(), ['error', 'message'], text);
          assert.equal(typeof parsed.error, 'string');
          assert.equal(typeof parsed.message, 'string');
        }
        assert.deepEqual(stored(), before, 'a refused request left files behind');
      } else if (runId) {
        assert.ok([200, 202].includes(response.status), `${response.status} ${text}`);
        started.add(runId);
      }
      assert.deepEqual(stored().filter((f) => f.endsWith('.partial')), []);
    }), { numRuns: Number(process.env.FUZZ_RUNS ?? 250) });

    // The runs that exist are exactly those answered with a run ID (visibility may lag a moment).
    let listed = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const runs = await fg.admin<{ runs: { runId: string }[] }>('GET', `/api/v1/runs?workflowId=${p.workflowId}&limit=1000`);
      listed = new Set(runs.body.runs.map((run) => run.runId));
      if (listed.size >= started.size) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.deepEqual([...listed].sort(), [...started].sort());
  });
});
