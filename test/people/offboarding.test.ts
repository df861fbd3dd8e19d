/**
 * Offboarding (docs/people-and-roles.md "Offboarding: what ends with a member") over real HTTP: an
 * admin member rotates the organization's admin token, creates an API key and issues another
 * member's personal access token; another admin sees what removing them would end, removes them,
 * and everything they minted is refused (401) while what others minted keeps working. The answer
 * says the organization has no admin token left; another admin mints one. The audit trail names
 * the member as the minter of the token, and the token's own records lead back to that mint.
 */
import assert from 'node:assert/strict';
import { asAdminOf, startTestFlowgate, type TestFlowgate } from '../support/flowgate';

interface AuditRecordBody {
  action: string;
  actor: string;
  actorName: string | null;
  credential: { kind: string; id: string };
  target: { type: string; id: string | null } | null;
  outcome: string;
  details: Record<string, unknown>;
}

describe('offboarding: what a member minted ends with them', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  /** A management call with any bearer token (an admin token, a personal access token). */
  const call = <T>(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => asAdminOf(fg, token).admin<T>(method, path, body);
  const runtimeTokenStatus = async (apiKey: string): Promise<number> => (await fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': apiKey } })).status;

  it('an admin member rotates the organization\'s admin token, is removed, and the token is refused; the audit trail names them as its minter', async () => {
    const org = await fg.admin<{ id: string; adminToken: string; adminTokenId: string }>('POST', '/api/v1/orgs', { name: 'acme-offboarding' });
    assert.equal(org.status, 201, JSON.stringify(org.body));
    assert.match(org.body.adminTokenId, /^adm_[0-9a-f]{12}$/);
    const orgToken = org.body.adminToken;

    // people, with the organization's admin token (which no member minted)
    const member = async (email: string, role: string): Promise<{ id: string; token: string }> => {
      const created = await call<{ id: string }>(orgToken, 'POST', '/api/v1/members', { email, role });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const issued = await call<{ token: string }>(orgToken, 'POST', `/api/v1/members/${created.body.id}/tokens`);
      assert.equal(issued.status, 201);
      return { id: created.body.id, token: issued.body.token };
    };
    const ann = await member('ann@acme.example', 'admin');
    const carl = await member('carl@acme.example', 'admin');
    const bob = await call<{ id: string }>(orgToken, 'POST', '/api/v1/members', { email: 'bob@acme.example', role: 'viewer' });

    // Ann rotates the organization's admin token: the old one ends, the new one is hers
    const rotated = await call<{ adminToken: string; adminTokenId: string }>(ann.token, 'POST', '/api/v1/admin-token/rotate');
    assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
    const annsAdminToken = rotated.body.adminToken;
    assert.match(rotated.body.adminTokenId, /^adm_[0-9a-f]{12}$/);
    assert.equal((await call(orgToken, 'GET', '/api/v1/workflows')).status, 401, 'rotation ends the previous token');
    // a change made with the token she minted: its record carries the token's id
    const made = await call<{ id: string }>(annsAdminToken, 'POST', '/api/v1/workflows', { name: 'made-with-anns-token', steps: [{ name: 'Hi', type: 'template', template: 'hi' }] });
    assert.equal(made.status, 201, JSON.stringify(made.body));

    // an API key and another member's token, minted by Ann; and a key Carl creates
    const annsKey = await call<{ id: string; key: string }>(ann.token, 'POST', '/api/v1/api-keys', { name: 'anns-script' });
    assert.equal(annsKey.status, 201);
    const carlsKey = await call<{ id: string; key: string }>(carl.token, 'POST', '/api/v1/api-keys', { name: 'carls-script' });
    const bobsToken = await call<{ token: string; tokenId: string }>(ann.token, 'POST', `/api/v1/members/${bob.body.id}/tokens`);
    assert.equal(bobsToken.status, 201);
    assert.match(bobsToken.body.tokenId, /^pat_[0-9a-f]{12}$/);
    assert.equal(await runtimeTokenStatus(annsKey.body.key), 200);
    assert.equal((await call(bobsToken.body.token, 'GET', '/api/v1/workflows')).status, 200);
    const keys = await call<{ apiKeys: { id: string; memberId: string | null }[] }>(carl.token, 'GET', '/api/v1/api-keys');
    assert.equal(keys.body.apiKeys.find((k) => k.id === annsKey.body.id)?.memberId, ann.id, 'a key names the member who created it');

    // before removing her: what would end
    const preview = await call<{
      adminTokens: { id: string }[]; apiKeys: { id: string; name: string }[]; personalAccessTokens: { id: string }[];
      issuedTokens: { id: string; memberId: string }[]; adminTokensLeftAfterRemoval: number;
    }>(carl.token, 'GET', `/api/v1/members/${ann.id}/credentials`);
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.deepEqual(preview.body.adminTokens.map((t) => t.id), [rotated.body.adminTokenId]);
    assert.deepEqual(preview.body.apiKeys.map((k) => `${k.id} ${k.name}`), [`${annsKey.body.id} anns-script`]);
    assert.equal(preview.body.personalAccessTokens.length, 1);
    assert.deepEqual(preview.body.issuedTokens.map((t) => `${t.id} ${t.memberId}`), [`${bobsToken.body.tokenId} ${bob.body.id}`]);
    assert.equal(preview.body.adminTokensLeftAfterRemoval, 0);
    assert.equal((await call(bobsToken.body.token, 'GET', `/api/v1/members/${ann.id}/credentials`)).status, 403, 'members.manage only');

    // Carl removes Ann: the answer says what ended, and that no admin token is left
    const removed = await call<{
      endedAdminTokens: string[]; endedApiKeys: string[]; endedMemberTokens: string[]; adminTokensLeft: number; warning?: string;
    }>(carl.token, 'DELETE', `/api/v1/members/${ann.id}`);
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.deepEqual(removed.body.endedAdminTokens, [rotated.body.adminTokenId]);
    assert.deepEqual(removed.body.endedApiKeys, [annsKey.body.id]);
    assert.equal(removed.body.endedMemberTokens.length, 2);
    assert.ok(removed.body.endedMemberTokens.includes(bobsToken.body.tokenId));
    assert.equal(removed.body.adminTokensLeft, 0);
    assert.match(removed.body.warning ?? '', /no admin token reaches the organization/);

    // everything she minted is refused; what others minted works
    assert.equal((await call(annsAdminToken, 'GET', '/api/v1/workflows')).status, 401, 'the admin token she minted ended with her');
    assert.equal((await call(ann.token, 'GET', '/api/v1/workflows')).status, 401);
    assert.equal((await call(bobsToken.body.token, 'GET', '/api/v1/workflows')).status, 401, 'the token she issued to Bob ended (she saw it)');
    assert.equal(await runtimeTokenStatus(annsKey.body.key), 401, 'her API key is revoked');
    assert.equal(await runtimeTokenStatus(carlsKey.body.key), 200);
    assert.equal((await call(carl.token, 'GET', '/api/v1/workflows')).status, 200);
    assert.equal((await fg.admin('GET', '/api/v1/workflows')).status, 200, 'the instance bootstrap token is no member\'s');

    // the audit trail: the mint names Ann, the token's own record leads back to it, the removal lists what ended
    const audit = await call<{ records: AuditRecordBody[] }>(carl.token, 'GET', '/api/v1/audit?limit=100');
    assert.equal(audit.status, 200);
    const mint = audit.body.records.find((r) => r.action === 'admin_token.rotated');
    assert.ok(mint, 'the rotation is recorded');
    assert.equal(mint.actor, `member:${ann.id}`);
    assert.equal(mint.actorName, 'ann@acme.example');
    assert.equal(mint.credential.kind, 'member_token');
    assert.equal(mint.details.adminTokenId, rotated.body.adminTokenId, 'the record of the mint names the minted token');
    const used = audit.body.records.find((r) => r.action === 'workflow.created' && r.target?.id === made.body.id);
    assert.equal(used?.credential.id, rotated.body.adminTokenId, 'a record made with the token leads back to its mint');
    const keyMint = audit.body.records.find((r) => r.action === 'api_key.created' && r.target?.id === annsKey.body.id);
    assert.equal(keyMint?.actor, `member:${ann.id}`);
    const issued = audit.body.records.find((r) => r.action === 'member_token.issued' && r.details.tokenId === bobsToken.body.tokenId);
    assert.equal(issued?.actor, `member:${ann.id}`);
    const removal = audit.body.records.find((r) => r.action === 'member.removed');
    assert.equal(removal?.actor, `member:${carl.id}`);
    assert.deepEqual(removal?.details.endedAdminTokens, [rotated.body.adminTokenId]);
    assert.deepEqual(removal?.details.endedApiKeys, [annsKey.body.id]);
    assert.equal(removal?.details.adminTokensLeft, 0);
    for (const record of audit.body.records) {
      const raw = JSON.stringify(record);
      for (const secret of [annsAdminToken, ann.token, annsKey.body.key, bobsToken.body.token]) assert.ok(!raw.includes(secret), `no secret in ${record.action}`);
    }

    // the organization gets a token again: another admin member rotates (the new one is Carl's)
    const again = await call<{ adminToken: string }>(carl.token, 'POST', '/api/v1/admin-token/rotate');
    assert.equal(again.status, 201);
    assert.equal((await call(again.body.adminToken, 'GET', '/api/v1/workflows')).status, 200);
    const carls = await call<{ adminTokens: unknown[]; adminTokensLeftAfterRemoval: number }>(again.body.adminToken, 'GET', `/api/v1/members/${carl.id}/credentials`);
    assert.equal(carls.body.adminTokens.length, 1);
    assert.equal(carls.body.adminTokensLeftAfterRemoval, 0);
  });

  it('removing a member of the default organization who rotated its token leaves the bootstrap token', async () => {
    const dana = await fg.admin<{ id: string }>('POST', '/api/v1/members', { email: 'dana@example.com', role: 'admin' });
    const token = await fg.admin<{ token: string }>('POST', `/api/v1/members/${dana.body.id}/tokens`);
    const rotated = await call<{ adminToken: string }>(token.body.token, 'POST', '/api/v1/admin-token/rotate');
    assert.equal(rotated.status, 201);
    const removed = await fg.admin<{ endedAdminTokens: string[]; adminTokensLeft: number; warning?: string }>('DELETE', `/api/v1/members/${dana.body.id}`);
    assert.equal(removed.status, 200);
    assert.equal(removed.body.endedAdminTokens.length, 1);
    assert.equal(removed.body.adminTokensLeft, 1, 'the instance administrator\'s bootstrap token still reaches the default organization');
    assert.equal(removed.body.warning, undefined);
    assert.equal((await call(rotated.body.adminToken, 'GET', '/api/v1/workflows')).status, 401);
    assert.equal((await fg.admin('GET', '/api/v1/workflows')).status, 200);
  });
});
