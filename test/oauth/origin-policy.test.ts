/**
 * The Origin and Host rules (src/http/origin-policy.ts) for listeners the integration tests cannot
 * have: a gateway on a non-loopback address, with and without a public URL (origin.test.ts runs
 * real gateways, which listen on loopback).
 */
import assert from 'node:assert/strict';
import { isOAuthPath, OriginPolicy } from '../../src/http/origin-policy';

const NONE = { allowedOrigins: [], allowedHosts: [] };
/** A request's headers as the policy reads them. */
const request = (headers: Record<string, string>) => ({ get: (name: string): string => headers[name] ?? '' });

describe('OriginPolicy', () => {
  it('behind a public URL, on 0.0.0.0: only the public host, not a loopback name nor the listener\'s address', () => {
    const policy = new OriginPolicy('https://flowgate.example.com', { host: '0.0.0.0', publicUrl: 'https://flowgate.example.com', ...NONE });
    assert.equal(policy.refusal(request({ Host: 'flowgate.example.com', Origin: 'https://flowgate.example.com' })), undefined);
    assert.equal(policy.refusal(request({ Host: 'FLOWGATE.example.com:443' })), undefined);
    for (const host of ['localhost:8080', '127.0.0.1', '10.0.0.5:8080', '0.0.0.0:8080']) {
      assert.match(policy.refusal(request({ Host: host }))?.message ?? '', /^forbidden: Host /, host);
    }
  });

  it('on 0.0.0.0 without a public URL: no name of its own, so no Host check (FLOWGATE_ALLOWED_HOSTS turns it on); the Origin check stands', () => {
    const derived = 'http://0.0.0.0:8080';
    const policy = new OriginPolicy(derived, { host: '0.0.0.0', ...NONE });
    assert.equal(policy.refusal(request({ Host: '10.0.0.5:8080' })), undefined);
    assert.match(policy.refusal(request({ Host: '10.0.0.5:8080', Origin: 'http://10.0.0.5:8080' }))?.message ?? '', /^forbidden: Origin /);
    const named = new OriginPolicy(derived, { host: '0.0.0.0', allowedOrigins: [], allowedHosts: ['flowgate.internal'] });
    assert.equal(named.refusal(request({ Host: 'flowgate.internal' })), undefined);
    assert.match(named.refusal(request({ Host: '10.0.0.5:8080' }))?.message ?? '', /^forbidden: Host /);
  });

  it('FLOWGATE_ALLOWED_HOSTS=* takes any Host and keeps the Origin rule', () => {
    const policy = new OriginPolicy('https://flowgate.example.com', { host: '0.0.0.0', publicUrl: 'https://flowgate.example.com', allowedOrigins: [], allowedHosts: ['*'] });
    assert.equal(policy.refusal(request({ Host: 'anything.example' })), undefined);
    assert.match(policy.refusal(request({ Host: 'anything.example', Origin: 'http://anything.example' }))?.message ?? '', /^forbidden: Origin /);
  });

  it('knows the OAuth paths as the routers match them', () => {
    for (const path of ['/oauth/token', '/OAuth/register', '/%6fauth/authorize', '/oauth', '/.well-known/oauth-protected-resource/tools/mcp', '/.well-known/oauth-authorization-server']) {
      assert.equal(isOAuthPath(path), true, path);
    }
    for (const path of ['/oauthx', '/api/v1/oauth/callback', '/tools/mcp', '/.well-known/openid-configuration', '/%']) assert.equal(isOAuthPath(path), false, path);
  });
});
