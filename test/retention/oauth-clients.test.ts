/**
 * Dynamically registered OAuth clients are bounded (docs/tool-gateway.md "Registered clients:
 * expiry and limits"), on SQLite and PostgreSQL: the retention sweep's registry activity removes
 * a client never used 24 h after it registered, and one without a live grant 7 days after its last
 * use (a live grant keeps it; a refresh is a use); at most FLOWGATE_OAUTH_PENDING_CLIENTS unused
 * ones at once (a 429 past that, lifting as they expire, even with no sweep), and at most
 * FLOWGATE_OAUTH_CLIENTS_PER_ORG holding live grants in one organization. The clock is the
 * authorization server's and the sweep's `now`, moved instead of waited for.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRetentionActivities } from '../../activities/retention';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileBlobStore } from '../../src/blobs/blob-store';
import { hashSecret } from '../../src/crypto/secrets';
import { OAuthServer, s256, type TokenResponse } from '../../src/oauth/authorization-server';
import { OAuthError } from '../../src/oauth/errors';
import { openRegistry, type Registry } from '../../src/registry';
import { DAY_MS, HOUR_MS } from '../../src/retention/policy';
import { registryDialects } from '../support/registry-dialects';

const REDIRECT = 'http://127.0.0.1/callback';
const RESOURCE = 'http://127.0.0.1:9/tools';
const T0 = Date.parse('2027-03-01T00:00:00.000Z');

for (const dialect of registryDialects({ tempDirPrefix: 'flowgate-oauth-clients-', schemaPrefix: 'oauth_clients_' })) {
  describe(`registered OAuth clients: expiry and limits (${dialect.name})`, () => {
    let registry: Registry;
    let now = T0;
    let orgId = '';
    let blobDir = '';
    beforeEach(async () => {
      blobDir = mkdtempSync(join(tmpdir(), 'flowgate-oauth-clients-blobs-'));
      registry = await openRegistry(await dialect.setUp());
      orgId = (await registry.orgs.create('oauth-clients')).id;
      now = T0;
    });
    afterEach(async () => {
      await registry?.close();
      await dialect.tearDown();
      rmSync(blobDir, { recursive: true, force: true });
    });

    const server = (limits = { pending: 1000, perOrg: 1000 }): OAuthServer => new OAuthServer({ registry, allowPrivateNetwork: true, now: () => now, clientLimits: limits });
    const register = async (oauth: OAuthServer): Promise<string> => String((await oauth.clients.register({ redirect_uris: [REDIRECT] })).client_id);
    /** A consent and its code exchange: the client's grant, signed in with `adminToken` (or as `memberId`). */
    const signIn = async (oauth: OAuthServer, clientId: string, who: { adminToken?: string; memberId?: string; org?: string } = {}): Promise<TokenResponse> => {
      const verifier = randomBytes(32).toString('base64url');
      const code = await oauth.issueCode({
        orgId: who.org ?? orgId, clientId, resource: RESOURCE, scope: null, subject: who.memberId ? `member:${who.memberId}` : 'admin-token:adm_test',
        adminTokenHash: who.adminToken ? hashSecret(who.adminToken) : null, memberId: who.memberId ?? null,
      }, REDIRECT, s256(verifier));
      return oauth.exchangeCode({ code, codeVerifier: verifier, clientId, redirectUri: REDIRECT });
    };
    const sweep = async (at: number): Promise<unknown> => createRetentionActivities({
      blobs: createFileBlobStore(blobDir), registry, retention: { enabled: true, stepFilesDays: 30, finishedRunsDays: 30, auditDays: 365 },
    }).sweepFinishedRuns({ now: new Date(at).toISOString() });
    const kept = async (...ids: string[]): Promise<string[]> => {
      const found: string[] = [];
      for (const id of ids) if (await registry.oauth.findClient(id)) found.push(id);
      return found;
    };

    it('the retention sweep removes clients never used after 24 h, and clients without a live grant 7 days after their last use', async () => {
      const oauth = server();
      const adminToken = 'fga_oauth_clients_test_0123456789';
      await registry.orgs.addAdminToken(orgId, hashSecret(adminToken), { instanceAdmin: false });
      const member = await registry.members.create(orgId, { email: 'ann@example.com', name: null, role: 'viewer' });

      const unused = await register(oauth);
      const held = await register(oauth);
      const revoked = await register(oauth);
      const membersClient = await register(oauth);
      const heldTokens = await signIn(oauth, held, { adminToken });
      await signIn(oauth, revoked, { adminToken });
      await signIn(oauth, membersClient, { memberId: member.id });
      const [grantOfRevoked] = (await oauth.listGrants(orgId)).filter((g) => g.clientId === revoked);
      assert.ok(grantOfRevoked);
      assert.ok(await oauth.revokeOrgGrant(orgId, grantOfRevoked.id));
      assert.ok(await registry.members.remove(orgId, member.id), 'a removed member\'s grant is no longer live');
      now = T0 + 23 * HOUR_MS;
      const late = await register(oauth);

      // a day on: the client never used goes; the one registered an hour ago stays
      assert.deepEqual(await sweep(T0 + 25 * HOUR_MS), { removed: 0, auditRemoved: 0, oauthClientsRemoved: 1 });
      assert.deepEqual(await kept(unused, held, revoked, membersClient, late), [held, revoked, membersClient, late]);
      // past a week: the late one never used, and both without a live grant, go; the live grant keeps its client
      assert.deepEqual(await sweep(T0 + 8 * DAY_MS), { removed: 0, auditRemoved: 0, oauthClientsRemoved: 3 });
      assert.deepEqual(await kept(held, revoked, membersClient, late), [held]);
      assert.equal(await registry.oauth.clientInOrg(orgId, revoked, new Date(T0 + 8 * DAY_MS).toISOString()), false);

      // a refresh is a use: on day 20 it trades its refresh token (30 days), and the sweep of day 31 keeps it
      now = T0 + 20 * DAY_MS;
      await oauth.refresh({ refreshToken: heldTokens.refresh_token, clientId: held });
      assert.deepEqual(await sweep(T0 + 31 * DAY_MS), { removed: 0, auditRemoved: 0, oauthClientsRemoved: 0 });
      assert.deepEqual(await kept(held), [held]);
      // its last refresh token expired on day 50 and it was last used on day 20: it goes on day 51
      assert.deepEqual(await sweep(T0 + 51 * DAY_MS), { removed: 0, auditRemoved: 0, oauthClientsRemoved: 1 });
      assert.deepEqual(await kept(held), []);
      await assert.rejects(oauth.clients.resolve(held), (e: unknown) => e instanceof OAuthError && e.code === 'invalid_client');

      const off = createRetentionActivities({ blobs: createFileBlobStore(blobDir), registry, retention: { enabled: false, stepFilesDays: 30, finishedRunsDays: 30, auditDays: 365 } });
      assert.deepEqual(await off.sweepFinishedRuns({ now: new Date(T0 + 400 * DAY_MS).toISOString() }), { disabled: true });
    });

    it('refuses a registration past FLOWGATE_OAUTH_PENDING_CLIENTS with 429 until the oldest expires, with or without a sweep', async () => {
      const oauth = server({ pending: 3, perOrg: 1000 });
      const first = await register(oauth);
      now += HOUR_MS;
      await register(oauth);
      await register(oauth);
      const refused = await oauth.clients.register({ redirect_uris: [REDIRECT] }).then(() => undefined, (e: unknown) => e);
      assert.ok(refused instanceof OAuthError, String(refused));
      assert.equal(refused.code, 'too_many_requests');
      assert.equal(refused.status, 429);
      assert.equal(refused.retryAfterSeconds, 23 * 3600, 'the first expires 24 h after it registered, an hour ago');
      assert.match(refused.description, /3 registered clients that have not signed in yet.*FLOWGATE_OAUTH_PENDING_CLIENTS/);

      // a client that signs in leaves the pool
      await signIn(oauth, first);
      now = T0 + 2 * HOUR_MS;
      await register(oauth);
      await assert.rejects(register(oauth), (e: unknown) => e instanceof OAuthError && e.status === 429);
      // once the oldest unused ones are 24 h old, a registration removes them itself (no sweep ran)
      now = T0 + 25 * HOUR_MS + 1;
      await register(oauth);
      assert.deepEqual((await registry.oauth.pendingClients()).count, 2);
    });

    it('lets at most FLOWGATE_OAUTH_CLIENTS_PER_ORG registered clients hold live grants in one organization', async () => {
      const oauth = server({ pending: 1000, perOrg: 2 });
      const other = (await registry.orgs.create('oauth-clients-other')).id;
      const [a, b, c] = [await register(oauth), await register(oauth), await register(oauth)];
      await signIn(oauth, a);
      await signIn(oauth, b);
      const refused = await signIn(oauth, c).then(() => undefined, (e: unknown) => e);
      assert.ok(refused instanceof OAuthError, String(refused));
      assert.equal(refused.code, 'access_denied');
      assert.match(refused.description, /2 registered MCP clients signed in.*FLOWGATE_OAUTH_CLIENTS_PER_ORG/);
      await signIn(oauth, a);
      await signIn(oauth, c, { org: other });
      // a client named by a metadata document is not registered here: not counted
      await signIn(oauth, 'http://127.0.0.1:9/client.json');
      // revoking a grant frees its client's place at once
      const grantOfB = (await oauth.listGrants(orgId)).find((g) => g.clientId === b);
      assert.ok(grantOfB && await oauth.revokeOrgGrant(orgId, grantOfB.id));
      await signIn(oauth, c);
      assert.equal(await registry.oauth.countOrgClients(orgId, new Date(now).toISOString()), 2);
    });
  });
}
