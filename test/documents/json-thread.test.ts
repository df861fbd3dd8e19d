import assert from 'node:assert/strict';
import { jsonShape, jsonText, OFF_THREAD_STRING_BYTES, parseJsonOffThread, stringContentExceeds } from '../../src/documents/json-thread';

const shape = (text: string, maxDepth = 64, maxStructure = 1000): string => jsonShape(Buffer.from(text, 'utf8'), maxDepth, maxStructure);

describe('the JSON thread', () => {
  describe('jsonShape', () => {
    it('counts nesting like jsonDepthExceeds: objects and arrays, not brackets inside strings', () => {
      assert.equal(shape('[[[1]]]', 3), 'ok');
      assert.equal(shape('[[[1]]]', 2), 'too-deep');
      assert.equal(shape('{"a":{"b":[]}}', 3), 'ok');
      assert.equal(shape('{"a":{"b":[{}]}}', 3), 'too-deep');
      assert.equal(shape('["[[[[", "{{{{"]', 1), 'ok');
      assert.equal(shape('[1],[2],[3]', 1), 'ok', 'siblings do not add up');
    });

    it('skips string contents, escaped quotes and backslashes included, and counts everything else', () => {
      assert.equal(shape(JSON.stringify({ a: 'x'.repeat(5000) }), 64, 7), 'ok', '{"a":"…"} is 7 bytes outside the strings\' contents');
      assert.equal(shape(JSON.stringify({ a: 'x'.repeat(5000) }), 64, 6), 'too-structured');
      assert.equal(shape(JSON.stringify(['say "[[[" \\', '\\"', 'é ü 😀 [']), 1, 100), 'ok', 'escapes and multi-byte characters stay inside their strings');
      assert.equal(shape(JSON.stringify(['\\', '[[[']), 1), 'ok', 'a string ending in an escaped backslash closes');
      assert.equal(shape(`[${'0,'.repeat(600)}0]`), 'too-structured');
      assert.equal(shape(`[${' '.repeat(2000)}]`), 'too-structured', 'whitespace is structure too');
      assert.equal(shape('["unterminated'), 'ok', 'not a validator: JSON.parse refuses it');
    });
  });

  describe('parseJsonOffThread', () => {
    it('parses on the thread what the shape allows and answers why it refused the rest', async () => {
      const value = { jsonrpc: '2.0', id: 1, params: { data: 'b'.repeat(100_000), list: [1, 2, { deep: ['é😀'] }], __proto__key: null } };
      assert.deepEqual(await parseJsonOffThread(Buffer.from(JSON.stringify(value)), { maxDepth: 64, maxStructureBytes: 4096 }), { kind: 'parsed', value });
      assert.deepEqual(await parseJsonOffThread(Buffer.from('[[[[]]]]'), { maxDepth: 3, maxStructureBytes: 4096 }), { kind: 'too-deep' });
      assert.deepEqual(await parseJsonOffThread(Buffer.from('[1,2,3,4,5]'), { maxDepth: 3, maxStructureBytes: 5 }), { kind: 'too-structured' });
      assert.deepEqual(await parseJsonOffThread(Buffer.from('{"a":'), { maxDepth: 3, maxStructureBytes: 4096 }), { kind: 'invalid' });
      // a slice of a larger buffer is copied, not moved: the larger one stays whole
      const pool = Buffer.from('xx[1,"two"]yy');
      assert.deepEqual(await parseJsonOffThread(pool.subarray(2, 11), { maxDepth: 3, maxStructureBytes: 4096 }), { kind: 'parsed', value: [1, 'two'] });
      assert.equal(pool.toString(), 'xx[1,"two"]yy');
    });

    it('runs the jobs of concurrent callers, each answered with its own value', async () => {
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => parseJsonOffThread(Buffer.from(JSON.stringify({ i })), { maxDepth: 4, maxStructureBytes: 100 })));
      assert.deepEqual(answers, Array.from({ length: 6 }, (_, i) => ({ kind: 'parsed', value: { i } })));
    });
  });

  describe('jsonText', () => {
    it('writes small values here, as a string, and values with long strings on the thread, as UTF-8 bytes', async () => {
      const small = { a: [1, 'b', null], c: 'é😀' };
      assert.equal(await jsonText(small), JSON.stringify(small));
      const large = { prompt: { text: 'ünïcode 😀 "quoted" \\ \n', images: [{ data: 'A'.repeat(OFF_THREAD_STRING_BYTES) }] }, n: 1.5 };
      const written = await jsonText(large);
      assert.ok(Buffer.isBuffer(written));
      assert.equal(written.toString('utf8'), JSON.stringify(large));
    });

    it('counts string content, keys included, and stops at the bound', () => {
      assert.equal(stringContentExceeds({ ab: 'cde' }, 5), false);
      assert.equal(stringContentExceeds({ ab: 'cdef' }, 5), true);
      assert.equal(stringContentExceeds([[['xxxxxx']], 1, null, true], 5), true);
      assert.equal(stringContentExceeds(42, 0), false);
    });
  });
});
