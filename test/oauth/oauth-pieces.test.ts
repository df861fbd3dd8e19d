/**
 * The pure pieces of the tool gateway's authorization server (docs/tool-gateway.md "Signing in by
 * URL"): sealed tickets, redirect URI and client ID rules, resource identifiers, PKCE S256.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { s256 } from '../../src/oauth/authorization-server';
import { checkRedirectUri, isMetadataDocumentId, redirectAllowed } from '../../src/oauth/clients';
import { OAuthError } from '../../src/oauth/errors';
import { Tickets } from '../../src/oauth/tickets';
import { OAuthResources } from '../../src/http/oauth-resource';

describe('OAuth pieces', () => {
  it('opens a ticket only for its use, its browser, unaltered and unexpired', () => {
    let now = 1_000_000;
    const key = randomBytes(32);
    const tickets = new Tickets(key, () => now);
    const ticket = tickets.seal('request', 'browser-a', 60, { clientId: 'c' });
    assert.deepEqual(tickets.open('request', 'browser-a', ticket), { clientId: 'c' });
    assert.equal(tickets.open('consent', 'browser-a', ticket), undefined, 'another use');
    assert.equal(tickets.open('request', 'browser-b', ticket), undefined, 'another browser');
    assert.equal(new Tickets(randomBytes(32), () => now).open('request', 'browser-a', ticket), undefined, 'another key');
    const raw = Buffer.from(ticket, 'base64url');
    raw[20] = (raw[20] ?? 0) ^ 1;
    assert.equal(tickets.open('request', 'browser-a', raw.toString('base64url')), undefined, 'altered');
    assert.ok(!Buffer.from(ticket, 'base64url').toString('latin1').includes('clientId'), 'not readable');
    assert.equal(tickets.open('request', 'browser-a', 42), undefined);
    now += 61_000;
    assert.equal(tickets.open('request', 'browser-a', ticket), undefined, 'expired');
  });

  it('takes exact redirect URIs: https, loopback http, native schemes; never a fragment, script or remote http', () => {
    for (const ok of ['https://app.example/cb', 'http://127.0.0.1:3000/cb', 'http://localhost/cb', 'http://[::1]:8/cb', 'cursor://anysphere.cursor-mcp/oauth/callback']) assert.equal(checkRedirectUri(ok), ok);
    for (const bad of ['http://app.example/cb', 'https://app.example/cb#x', 'javascript:alert(1)', 'data:text/html,x', 'relative/cb', '', 7]) {
      assert.throws(() => checkRedirectUri(bad), (e: unknown) => e instanceof OAuthError && e.code === 'invalid_redirect_uri', String(bad));
    }
  });

  it('matches redirect URIs exactly, but a loopback IP literal on any port (RFC 8252)', () => {
    const registered = ['https://app.example/cb', 'http://127.0.0.1/callback'];
    assert.equal(redirectAllowed(registered, 'https://app.example/cb'), true);
    assert.equal(redirectAllowed(registered, 'https://app.example/cb2'), false);
    assert.equal(redirectAllowed(registered, 'https://app.example:8443/cb'), false);
    assert.equal(redirectAllowed(registered, 'http://127.0.0.1:53682/callback'), true);
    assert.equal(redirectAllowed(registered, 'http://127.0.0.1:53682/other'), false);
    assert.equal(redirectAllowed(registered, 'http://localhost:53682/callback'), false);
  });

  it('reads a client ID as a metadata document URL only when it is https with a path (http too when private networks are allowed)', () => {
    assert.equal(isMetadataDocumentId('https://client.example/oauth/client.json', false), true);
    assert.equal(isMetadataDocumentId('https://client.example/', false), false);
    assert.equal(isMetadataDocumentId('http://127.0.0.1:8/client.json', false), false);
    assert.equal(isMetadataDocumentId('http://127.0.0.1:8/client.json', true), true);
    assert.equal(isMetadataDocumentId('fgc_abc', true), false);
    assert.equal(isMetadataDocumentId('https://user:pw@client.example/c.json', false), false);
  });

  it('names the gateway and each server as resources, and accepts a token of either at a server', () => {
    const resources = new OAuthResources('https://fg.example', { toolsBasePath: '/tools' });
    assert.equal(resources.gateway, 'https://fg.example/tools');
    assert.equal(resources.metadataUrlOf('mcp'), 'https://fg.example/.well-known/oauth-protected-resource/tools/mcp');
    assert.deepEqual(resources.acceptedAt('mcp'), ['https://fg.example/tools/mcp', 'https://fg.example/tools']);
    assert.equal(resources.isResource('https://fg.example/tools/mcp'), true);
    assert.equal(resources.isResource('https://fg.example/tools'), true);
    assert.equal(resources.isResource('https://fg.example/tools/mcp/x'), false);
    assert.equal(resources.isResource('https://other.example/tools/mcp'), false);
    const atRoot = new OAuthResources('https://fg.example', { toolsBasePath: '/' });
    assert.equal(atRoot.server('mcp'), 'https://fg.example/mcp');
  });

  it('computes the PKCE S256 challenge of RFC 7636 appendix B', () => {
    assert.equal(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'), 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
    assert.equal(s256('x'.repeat(43)), createHash('sha256').update('x'.repeat(43)).digest('base64url'));
  });
});
