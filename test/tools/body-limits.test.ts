import assert from 'node:assert/strict';
import type { TestFlowgate } from '../support/flowgate';
import { rawPost as post, runtimeToken, startToolFlowgate, type RawAnswer } from './support';

const MIB = 1024 * 1024;

/** A tools/call of codeagent_list_models whose arguments carry `pad`, the JSON text given. */
function listModelsWith(padJson: string): string {
  return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"codeagent_list_models","arguments":{"PCID":"pc_none","pad":${padJson}}}}`;
}

describe('tool gateway body limits', () => {
  let fg: TestFlowgate;
  let token: string;

  before(async () => {
    // 8 MiB of large bodies at once: codeagent's own limit (about 110 MiB) is cut to that here
    fg = await startToolFlowgate({ FLOWGATE_TOOLS_LARGE_BODIES_MB: '8' });
    token = (await runtimeToken(fg)).token;
  });
  after(async () => {
    await fg?.stop();
  });

  it('answers 413 with a JSON-RPC error naming the limit and the server, from Content-Length, before the body is sent', async () => {
    const mcp = post(fg, 'mcp', token, { declared: 4 * MIB + 1, chunks: [], end: false });
    const refused = await mcp.answer;
    mcp.request.destroy();
    assert.equal(refused.status, 413);
    assert.equal(refused.body?.error?.code, -32000);
    assert.equal(refused.body?.error?.message, 'the body is larger than 4194304 bytes (4 MiB), the most /mcp takes');

    const codeagent = post(fg, 'codeagent', token, { declared: 8 * MIB + 1, chunks: [], end: false });
    const cut = await codeagent.answer;
    codeagent.request.destroy();
    assert.equal(cut.status, 413);
    assert.equal(cut.body?.error?.message, 'the body is larger than 8388608 bytes (8 MiB), the most /codeagent takes', 'no more than the process may hold');
  });

  it('counts a body streamed without Content-Length, and answers 413 once it passes the limit', async () => {
    const chunk = Buffer.alloc(MIB, 0x20);
    const refused = await post(fg, 'mcp', token, { chunks: [chunk, chunk, chunk, chunk, Buffer.from('  ')] }).answer;
    assert.equal(refused.status, 413);
    assert.match(refused.body?.error?.message ?? '', /larger than 4194304 bytes \(4 MiB\), the most \/mcp takes/);
  });

  it('takes a body over 4 MiB on codeagent: parsed off the event loop, then answered like any call', async () => {
    const answer = await post(fg, 'codeagent', token, { chunks: [listModelsWith(JSON.stringify('x'.repeat(6 * MIB)))] }).answer;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body?.error?.code, -32000);
    assert.match(answer.body?.error?.message ?? '', /no connection pc_none/, 'the call was made: the body was read and parsed');
  });

  it('refuses a large body that is large otherwise than through its strings (413), nests too deep (400) or is not JSON (400), without parsing it', async () => {
    const numbers = await post(fg, 'codeagent', token, { chunks: [listModelsWith(`[${'0,'.repeat(2.5 * MIB)}0]`)] }).answer;
    assert.equal(numbers.status, 413);
    assert.equal(numbers.body?.error?.code, -32000);
    assert.match(numbers.body?.error?.message ?? '', /may be large only through its strings .*: at most 4194304 bytes outside them/);

    const deep = await post(fg, 'codeagent', token, { chunks: [listModelsWith(`[${JSON.stringify('y'.repeat(5 * MIB))},${'['.repeat(70)}${']'.repeat(70)}]`)] }).answer;
    assert.equal(deep.status, 400);
    assert.equal(deep.body?.error?.code, -32600);
    assert.match(deep.body?.error?.message ?? '', /nests deeper than 64 levels/);

    const broken = await post(fg, 'codeagent', token, { chunks: [listModelsWith(`"${'z'.repeat(5 * MIB)}`)] }).answer;
    assert.equal(broken.status, 400);
    assert.equal(broken.body?.error?.code, -32700);
  });

  it('answers 503 with Retry-After while the large bodies it holds leave no room, and takes them again once they are gone', async () => {
    // the first caller declares 6 MiB and sends a little: its share is held while it reads
    const holder = post(fg, 'codeagent', token, { declared: 6 * MIB, chunks: ['{"jsonrpc":"2.0",'], end: false });
    holder.answer.catch(() => undefined);
    const body = listModelsWith(JSON.stringify('w'.repeat(6 * MIB - 200)));
    let busy: RawAnswer | undefined;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      busy = await post(fg, 'codeagent', token, { declared: Buffer.byteLength(body), chunks: [body] }).answer;
      if (busy.status === 503) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(busy?.status, 503, JSON.stringify(busy?.body));
    assert.equal(busy?.headers['retry-after'], '2');
    assert.match(busy?.body?.error?.message ?? '', /busy: .*FLOWGATE_TOOLS_LARGE_BODIES_MB.*retry in 2 s/);
    const streamed = await post(fg, 'codeagent', token, { chunks: [body] }).answer;
    assert.equal(streamed.status, 503, 'a streamed body asks for its share when it passes 4 MiB');
    assert.equal((await post(fg, 'mcp', token, { chunks: ['{"jsonrpc":"2.0","id":1,"method":"ping"}'] }).answer).status, 200, 'small bodies need no share');

    holder.request.destroy();
    let taken: RawAnswer | undefined;
    const again = Date.now() + 10_000;
    while (Date.now() < again) {
      taken = await post(fg, 'codeagent', token, { declared: Buffer.byteLength(body), chunks: [body] }).answer;
      if (taken.status !== 503) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(taken?.status, 200, 'the caller that went away gave its share back');
  });
});
