import assert from 'node:assert/strict';
import { assertAddressAllowed, assertUrlAllowed, guardedLookup, isPrivateAddress, OutboundRefusedError } from '../../src/net/address-policy';

describe('isPrivateAddress', () => {
  const privateAddresses = [
    '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1',
    '100.127.255.255', '169.254.169.254', '0.0.0.0', '224.0.0.1', '255.255.255.255',
    '192.0.0.8', '192.0.2.1', '192.88.99.1', '198.18.0.1', '198.19.255.255', '198.51.100.7', '203.0.113.9', '240.0.0.1',
    '::1', '::', '[::1]', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd12:3456::1', 'ff02::1', 'fec0::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '0:0:0:0:0:ffff:c0a8:0101',
    '::127.0.0.1', '::ffff:0:10.0.0.1',
    '64:ff9b::10.0.0.1', '2002:0a00:0001::1', '64:ff9b:1::8.8.8.8', '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:2::1', '2001:10::1', '2001:20::1', '100::1', '2001:db8::1',
  ];
  for (const ip of privateAddresses) {
    it(`counts ${ip} as private`, () => {
      assert.equal(isPrivateAddress(ip), true);
    });
  }

  const publicAddresses = ['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1',
    '192.0.1.1', '198.20.0.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '::8.8.8.8',
    '64:ff9b::8.8.8.8', '2002:0808:0808::1', '2001:db9::1', '2001:30::1'];
  for (const ip of publicAddresses) {
    it(`counts ${ip} as public`, () => {
      assert.equal(isPrivateAddress(ip), false);
    });
  }

  it('fails closed on text that is not a plain IP address', () => {
    for (const text of ['example.com', '1.2.3', '1.2.3.256', '0x7f000001', '2130706433', '017700000001', '', '::g']) {
      assert.equal(isPrivateAddress(text), true, text);
    }
  });
});

describe('assertAddressAllowed', () => {
  it('names the host and the address it refuses', () => {
    assert.throws(() => assertAddressAllowed('10.1.2.3', { allowPrivateNetwork: false }, 'internal.example'),
      (error: unknown) => error instanceof OutboundRefusedError && error.address === '10.1.2.3'
        && /internal\.example \(10\.1\.2\.3\)/.test(error.message));
  });

  it('uses a stricter isBlockedAddress when given, and nothing when private networks are allowed', () => {
    const isBlockedAddress = (ip: string): boolean => ip === '8.8.8.8';
    assert.throws(() => assertAddressAllowed('8.8.8.8', { allowPrivateNetwork: false, isBlockedAddress }), OutboundRefusedError);
    assertAddressAllowed('127.0.0.1', { allowPrivateNetwork: false, isBlockedAddress });
    assertAddressAllowed('127.0.0.1', { allowPrivateNetwork: true });
  });
});

describe('assertUrlAllowed', () => {
  const policy = { allowPrivateNetwork: false };

  it('refuses schemes other than http and https', () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://example.com/', 'data:text/plain,x']) {
      assert.throws(() => assertUrlAllowed(new URL(url), policy), OutboundRefusedError);
    }
  });

  it('refuses private IP literals, including bracketed and IPv4-mapped IPv6 forms', () => {
    for (const url of ['http://127.0.0.1/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'https://[fe80::1]/', 'http://0x7f000001/', 'http://2130706433/']) {
      assert.throws(() => assertUrlAllowed(new URL(url), policy), OutboundRefusedError, url);
    }
  });

  it('lets names through to the guarded lookup, and public literals through', () => {
    assertUrlAllowed(new URL('https://example.com/'), policy);
    assertUrlAllowed(new URL('http://8.8.8.8/'), policy);
    assertUrlAllowed(new URL('http://[2606:4700:4700::1111]/'), policy);
  });

  it('allows private literals when private networks are allowed', () => {
    assertUrlAllowed(new URL('http://127.0.0.1/'), { allowPrivateNetwork: true });
  });
});

describe('guardedLookup', () => {
  function resolve(hostname: string, all: boolean, policy = { allowPrivateNetwork: false }): Promise<unknown> {
    return new Promise((res, rej) => {
      guardedLookup(policy)(hostname, { all }, (err, address) => (err ? rej(err) : res(address)));
    });
  }

  it('refuses a name that resolves to loopback before any connection', async () => {
    await assert.rejects(resolve('localhost', false), OutboundRefusedError);
    await assert.rejects(resolve('localhost', true), OutboundRefusedError);
  });

  it('answers in the shape the caller asked for when allowed', async () => {
    const one = await resolve('localhost', false, { allowPrivateNetwork: true });
    assert.equal(typeof one, 'string');
    const all = await resolve('localhost', true, { allowPrivateNetwork: true });
    assert.ok(Array.isArray(all) && all.length > 0);
  });
});
