/**
 * The listener bounds' small parts (src/net/inbound-limits.ts); the bounds themselves are proved
 * against a real flowgate in test/http/slow-clients.test.ts.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { checkIntervalMs, clientAddress } from '../../src/net/inbound-limits';

describe('inbound limits', () => {
  it('counts an IPv4 client on a dual-stack listener (::ffff:a.b.c.d) as the same address as a.b.c.d', () => {
    const of = (remoteAddress: string | undefined): string | undefined => clientAddress({ remoteAddress } as Socket);
    assert.equal(of('::ffff:192.0.2.7'), '192.0.2.7');
    assert.equal(of('192.0.2.7'), '192.0.2.7');
    assert.equal(of('2001:db8::1'), '2001:db8::1');
    assert.equal(of('::ffff:1'), '::ffff:1');
    assert.equal(of(undefined), undefined);
  });

  it('checks the bounds every second at the defaults, and often enough for a bound of a second', () => {
    assert.equal(checkIntervalMs({ headersTimeoutMs: 20_000, bodyIdleTimeoutMs: 30_000 }), 1000);
    assert.equal(checkIntervalMs({ headersTimeoutMs: 1000, bodyIdleTimeoutMs: 2000 }), 250);
  });
});
