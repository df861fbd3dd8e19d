import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SseParser, type SseEvent } from '../../src/net/sse';

function parseAll(chunks: string[]): SseEvent[] {
  const parser = new SseParser();
  const events = chunks.flatMap((c) => parser.push(c));
  parser.end();
  return events;
}

describe('SSE parser (src/net/sse.ts)', () => {
  it('reads id, event and multi-line data, and skips comments', () => {
    const events = parseAll([': hello\n\nid: 1-0\nevent: assistant\ndata: {"a":\ndata: 1}\n\n']);
    assert.deepEqual(events, [{ id: '1-0', lastEventId: '1-0', event: 'assistant', data: '{"a":\n1}' }]);
  });

  it('accepts CRLF, LF and CR line ends, also a CRLF split across chunks', () => {
    const events = parseAll(['id: 1\r', '\nevent: a\r\ndata: x\r', '\r\nid: 2\revent: b\rdata: y\r\r', 'data: z\n\n']);
    assert.deepEqual(events.map((e) => [e.id, e.event, e.data]), [['1', 'a', 'x'], ['2', 'b', 'y'], [undefined, 'message', 'z']]);
    assert.equal(events[2]?.lastEventId, '2', 'the last event id is sticky, as in EventSource');
  });

  it('drops one space after the colon only, takes a field without colon as empty, and ignores an id with NUL', () => {
    const events = parseAll(['data:  two spaces\ndata\nid: a\0b\n\n']);
    assert.deepEqual(events, [{ lastEventId: '', event: 'message', data: ' two spaces\n' }]);
  });

  it('dispatches no event for a block without data, and never an unfinished one', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('id: 7\nevent: x\n\n'), []);
    assert.deepEqual(parser.push('id: 8\nevent: y\ndata: half'), []);
    parser.end();
    assert.deepEqual(parser.push('data: next\n\n').map((e) => e.data), ['next']);
  });

  it('answers at finish() an event the stream ended without its blank line (a remote MCP server closing at once)', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('data: {"a":1}\n'), []);
    assert.deepEqual(parser.finish().map((e) => e.data), ['{"a":1}']);
    assert.deepEqual(parser.finish(), [], 'nothing twice');
    const cr = new SseParser();
    assert.deepEqual(cr.push('data: x\r'), []);
    assert.deepEqual(cr.finish().map((e) => e.data), ['x'], 'a CR that ended the last chunk ends the line once');
  });

  it('strips a leading BOM and reads the retry advice', () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push('\ufeffretry: 1500\ndata: x\n\n').map((e) => e.data), ['x']);
    assert.equal(parser.retryMs, 1500);
  });

  it('gives the same events however the stream is cut into chunks', () => {
    const text = ': c\r\nid: 1\r\nevent: status\r\ndata: {"s":1}\r\n\r\nevent: heartbeat\ndata: {}\n\nid: 2\rdata: a\rdata: b\r\r';
    const whole = parseAll([text]);
    assert.equal(whole.length, 3);
    fc.assert(fc.property(fc.array(fc.nat(text.length), { maxLength: 12 }), (cuts) => {
      const points = [...new Set(cuts)].sort((a, b) => a - b);
      const chunks: string[] = [];
      let start = 0;
      for (const p of points) {
        chunks.push(text.slice(start, p));
        start = p;
      }
      chunks.push(text.slice(start));
      assert.deepEqual(parseAll(chunks), whole);
    }));
  });
});
