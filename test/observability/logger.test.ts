import assert from 'node:assert/strict';
import { createLogger, type LogLevel } from '../../src/observability/logger';

function capture(level: LogLevel = 'debug', base = {}) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger(level, base, (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return { log, lines };
}

describe('createLogger', () => {
  it('writes one JSON object per line with time, level and message', () => {
    const { log, lines } = capture();
    log.info('started', { port: 8080 });
    assert.equal(lines.length, 1);
    const [line] = lines;
    assert.equal(line?.level, 'info');
    assert.equal(line?.msg, 'started');
    assert.equal(line?.port, 8080);
    assert.ok(typeof line?.time === 'string' && !Number.isNaN(Date.parse(line.time)));
  });

  it('redacts fields named like secrets, whatever their case', () => {
    const { log, lines } = capture();
    const secrets = {
      apiKey: 'fgk_live_1', token: 'tok_2', password: 'hunter2', authorization: 'Bearer abc', secret: 's3',
      Authorization: 'Bearer def', adminToken: 'fga_3', TEMPORAL_API_KEY: 'tk_4', signingSecret: 's5',
    };
    log.warn('careless', secrets);
    const [line] = lines;
    for (const name of Object.keys(secrets)) assert.equal(line?.[name], '[redacted]', name);
    assert.doesNotMatch(JSON.stringify(lines), /fgk_live_1|tok_2|hunter2|Bearer|s3|fga_3|tk_4|s5/);
  });

  it('keeps identifiers whose names end in Id', () => {
    const { log, lines } = capture();
    log.info('key used', { keyId: 'key_1', apiKeyId: 'key_2', tokenId: 'tok_3', requestId: 'req_4' });
    assert.deepEqual({ keyId: lines[0]?.keyId, apiKeyId: lines[0]?.apiKeyId, tokenId: lines[0]?.tokenId, requestId: lines[0]?.requestId },
      { keyId: 'key_1', apiKeyId: 'key_2', tokenId: 'tok_3', requestId: 'req_4' });
  });

  it('redacts secrets passed as base fields of the logger', () => {
    const { log, lines } = capture('info', { apiKey: 'fgk_base' });
    log.info('x');
    assert.equal(lines[0]?.apiKey, '[redacted]');
  });

  it('writes an Error as its name, message and stack', () => {
    const { log, lines } = capture();
    log.error('failed', { error: new TypeError('boom') });
    const error = lines[0]?.error as { name: string; message: string; stack: string };
    assert.equal(error.name, 'TypeError');
    assert.equal(error.message, 'boom');
    assert.match(error.stack, /TypeError: boom/);
  });

  it('drops messages below its level', () => {
    const { log, lines } = capture('warn');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    assert.deepEqual(lines.map((l) => [l.level, l.msg]), [['warn', 'w'], ['error', 'e']]);
  });

  it('writes every level at debug', () => {
    const { log, lines } = capture('debug');
    log.debug('d');
    log.info('i');
    assert.deepEqual(lines.map((l) => l.level), ['debug', 'info']);
  });

  it('makes children that merge their fields over the parent\'s, with the call\'s fields winning', () => {
    const { log, lines } = capture('info', { service: 'gateway', scope: 'parent' });
    const child = log.child({ requestId: 'req_1', scope: 'child' });
    child.info('handled', { status: 200 });
    child.info('overridden', { scope: 'call' });
    log.info('parent');
    assert.deepEqual(lines.map(({ time: _time, ...rest }) => rest), [
      { level: 'info', msg: 'handled', service: 'gateway', scope: 'child', requestId: 'req_1', status: 200 },
      { level: 'info', msg: 'overridden', service: 'gateway', scope: 'call', requestId: 'req_1' },
      { level: 'info', msg: 'parent', service: 'gateway', scope: 'parent' },
    ]);
  });

  it('makes children that keep the parent\'s level and redaction', () => {
    const { log, lines } = capture('warn');
    const child = log.child({ token: 'tok_child' });
    child.info('dropped');
    child.warn('kept');
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.token, '[redacted]');
  });
});
