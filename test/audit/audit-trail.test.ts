import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { managementAction } from '../../src/http/operations';
import type { AuditRecordBody } from '../../src/contracts/audit-bodies';
import { DEFAULT_ORG_ID } from '../../src/registry';
import { asAdminOf, pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { registryDialects } from '../support/registry-dialects';
import { callTool } from '../tools/support';

const waiting = {
  name: 'audited',
  steps: [
    { name: 'Prepare', type: 'template', template: 'x' },
    { name: 'Sign-off', type: 'approval', approvers: ['ann@example.com'], timeout: '5m' },
  ],
};

interface Page { records: AuditRecordBody[]; nextCursor: string | null }

for (const backend of registryDialects({ tempDirPrefix: 'flowgate-audit-', schemaPrefix: 'flowgate_audit_' })) {
  describe(`audit trail over real HTTP (${backend.name})`, () => {
    let fg: TestFlowgate;
    before(async () => {
      fg = await startTestFlowgate({}, { database: await backend.setUp() });
    });
    after(async () => {
      await fg?.stop();
      await backend.tearDown();
    });

    const audit = async (query = '', token = fg.adminToken): Promise<{ status: number; body: Page & { error?: string; message?: string } }> => {
      const response = await fg.request(`/api/v1/audit${query}`, { headers: { Authorization: `Bearer ${token}`, 'User-Agent': 'audit-test/1' } });
      return { status: response.status, body: (await response.json()) as Page & { error?: string; message?: string } };
    };

    it('records a scripted sequence newest first, in order, with actors and outcomes, and no secret', async () => {
      const since = new Date().toISOString();
      // an API key, a workflow created and published, a trigger
      const key = await fg.admin<{ id: string; key: string }>('POST', '/api/v1/api-keys', { name: 'ops-key' });
      assert.equal(key.status, 201);
      const p = await publishWorkflow(fg, waiting);
      // a run started with the key, its approval decided through the API
      const runId = (await trigger(fg, { ...p, apiKey: key.body.key }, {})).headers.get('X-Pf-Run-Id') ?? '';
      await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED');
      const comment = `comment-${randomUUID()}`;
      const decided = await fg.request(`/ext/webhook/${key.body.key}/runs/${p.workflowId}/${runId}/approval`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'approve', approver: 'ann@example.com', comment: comment }),
      });
      assert.equal(decided.status, 200);
      // a tool called through /tools/... with a runtime token minted from the key
      const minted = await fg.request('/auth/token', { method: 'POST', headers: { 'X-API-KEY': key.body.key } });
      const runtime = ((await minted.json()) as { token: string }).token;
      const secretArgument = `find tools for secret-${randomUUID()}`;
      const called = await callTool(fg, 'mcp', runtime, 'capabilities_discover', { task: secretArgument });
      assert.equal(called.status, 200);
      assert.ok(called.body?.result, JSON.stringify(called.body));
      // a refused read and the key revoked
      assert.equal((await fg.admin('GET', '/api/v1/workflows/wf_nope')).status, 404);
      assert.equal((await fg.admin('DELETE', `/api/v1/api-keys/${key.body.id}`)).status, 204);

      const page = await audit(`?since=${encodeURIComponent(since)}&limit=500`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      const rows = page.body.records.map((r) => `${r.action} ${r.actor} ${r.outcome}`);
      const expected = [
        `api_key.revoked instance-admin success`,
        `api.read instance-admin refused`,
        `tool.called api-key:${key.body.id} success`,
        `approval.decided api-key:${key.body.id} success`,
        `api_key.created instance-admin success`, // publishWorkflow's own key
        `trigger.created instance-admin success`,
        `workflow.published instance-admin success`,
        `workflow.created instance-admin success`,
        `api_key.created instance-admin success`,
      ];
      assert.deepEqual(rows, expected);
      const [revoked, probed, tool, decision, , , published, created, keyCreated] = page.body.records;
      assert.deepEqual(probed?.target, { type: 'workflow', id: 'wf_nope' }, 'a refused read names what it probed');
      assert.deepEqual(revoked?.target, { type: 'api_key', id: key.body.id });
      assert.equal(revoked?.status, 204);
      assert.equal(revoked?.credential.kind, 'admin_token');
      assert.match(revoked?.credential.id ?? '', /^adm_[0-9a-f]{12}$/);
      assert.equal(typeof revoked?.source.userAgent, 'string');
      assert.match(revoked?.source.ip ?? '', /127\.0\.0\.1/);
      assert.deepEqual(keyCreated?.target, { type: 'api_key', id: key.body.id });
      assert.equal(keyCreated?.details.name, 'ops-key');
      assert.deepEqual(created?.target, { type: 'workflow', id: p.workflowId });
      assert.deepEqual(published?.target, { type: 'workflow', id: p.workflowId });
      assert.equal(published?.details.version, 1);
      assert.equal(decision?.actorName, 'ops-key');
      assert.deepEqual(decision?.credential, { kind: 'api_key', id: key.body.id });
      assert.deepEqual(decision?.target, { type: 'run', id: runId });
      assert.equal(decision?.details.decision, 'approve');
      assert.equal(decision?.details.via, 'api');
      assert.equal(tool?.credential.kind, 'runtime_token');
      assert.deepEqual(tool?.target, { type: 'tool', id: 'mcp/capabilities_discover' });
      assert.match(String(tool?.details.argumentsDigest), /^sha256:[0-9a-f]{64}$/);
      assert.equal(typeof tool?.details.durationMs, 'number');
      // ids sort as the records were made
      const ids = page.body.records.map((r) => r.id);
      assert.deepEqual([...ids].sort().reverse(), ids);

      // no secret anywhere: not in the API's answer, not in the stored rows
      const storedRows = await fg.registry.audit.list(DEFAULT_ORG_ID, {}, 10_000);
      assert.ok(storedRows.length >= expected.length, 'the instance administrator\'s organization holds the records');
      const stored = JSON.stringify(storedRows);
      for (const raw of [JSON.stringify(page.body), stored]) {
        for (const secret of [key.body.key, p.apiKey, fg.adminToken, runtime, secretArgument, 'secret-', 'fgk_', 'fga_', comment]) {
          assert.ok(!raw.includes(secret), `the audit trail holds ${secret}`);
        }
      }
    });

    it('records a decision through a signed approval link, with the approver as actor and never the link', async () => {
      const p = await publishWorkflow(fg, waiting);
      const runId = (await trigger(fg, p, {})).headers.get('X-Pf-Run-Id') ?? '';
      await pollStatus(fg, p, runId, (s) => s.status === 'PAUSED');
      const listed = await fg.admin<{ approvals: { approvers: { link?: string }[] }[] }>('GET', `/api/v1/runs/${runId}/approvals`);
      const link = listed.body.approvals[0]?.approvers[0]?.link ?? '';
      const token = new URL(link).pathname.split('/').pop() ?? '';
      assert.ok(token.length > 20);
      const decided = await fetch(link, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'decision=reject&comment=nope' });
      assert.equal(decided.status, 200);
      const again = await fetch(link, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'decision=approve' });
      assert.equal(again.status, 409);
      const page = await audit(`?action=approval.decided&target=${encodeURIComponent(`run:${runId}`)}`);
      assert.deepEqual(page.body.records.map((r) => [r.actor, r.credential.kind, r.details.via, r.details.decision, r.outcome, r.status]), [
        ['approver:ann@example.com', 'approval_link', 'link', 'approve', 'refused', 409],
        ['approver:ann@example.com', 'approval_link', 'link', 'reject', 'success', 200],
      ]);
      assert.match(page.body.records[0]?.credential.id ?? '', /^lnk_[0-9a-f]{12}$/);
      assert.ok(!JSON.stringify(page.body).includes(token), 'never the link');
    });

    it('shows another organization none of it, and records its refused probes in its own trail', async () => {
      const mine = await publishWorkflow(fg, waiting);
      const org = await fg.admin<{ id: string; adminToken: string }>('POST', '/api/v1/orgs', { name: `other-${randomUUID()}` });
      assert.equal(org.status, 201);
      const other = asAdminOf(fg, org.body.adminToken);
      assert.equal((await other.admin('DELETE', `/api/v1/workflows/${mine.workflowId}`)).status, 404);
      const theirs = await audit('?limit=500', org.body.adminToken);
      assert.equal(theirs.status, 200);
      assert.deepEqual(theirs.body.records.map((r) => `${r.action} ${r.outcome} ${r.status}`), ['workflow.deleted refused 404']);
      assert.equal(theirs.body.records[0]?.actor, 'admin', 'an organization\'s own admin');
      const ours = await audit(`?target=${encodeURIComponent(`workflow:${mine.workflowId}`)}`);
      assert.deepEqual(ours.body.records.map((r) => r.action), ['workflow.published', 'workflow.created'], 'their probe is not in our trail');
      // the instance administrator's org.created is in the instance administrator's trail, without the new token
      const orgs = await audit('?action=org.created');
      assert.deepEqual(orgs.body.records[0]?.target, { type: 'org', id: org.body.id });
      assert.ok(!JSON.stringify(orgs.body).includes(org.body.adminToken));
    });

    it('pages with limit and cursor, and filters by action prefix, actor, target, outcome and time', async () => {
      const start = new Date().toISOString();
      const keys: string[] = [];
      for (let i = 0; i < 5; i++) keys.push((await fg.admin<{ id: string }>('POST', '/api/v1/api-keys', { name: `k${i}` })).body.id);
      assert.equal((await fg.admin('DELETE', '/api/v1/api-keys/key_nope')).status, 404);
      const all = await audit(`?since=${encodeURIComponent(start)}&action=api_key.*`);
      assert.equal(all.body.records.length, 6);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await audit(`?since=${encodeURIComponent(start)}&action=api_key.&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(page.status, 200);
        assert.ok(page.body.records.length <= 2);
        seen.push(...page.body.records.map((r) => r.id));
        cursor = page.body.nextCursor;
        pages++;
      } while (cursor);
      assert.equal(pages, 3);
      assert.deepEqual(seen, all.body.records.map((r) => r.id));
      assert.deepEqual((await audit(`?since=${encodeURIComponent(start)}&action=api_key.created`)).body.records.map((r) => r.target?.id), [...keys].reverse());
      const refused = await audit(`?since=${encodeURIComponent(start)}&outcome=refused`);
      assert.deepEqual(refused.body.records.map((r) => `${r.action} ${r.target?.id}`), ['api_key.revoked key_nope']);
      assert.equal((await audit(`?since=${encodeURIComponent(start)}&actor=instance-admin`)).body.records.length, 6);
      assert.equal((await audit(`?since=${encodeURIComponent(start)}&actor=api-key:${keys[0]}`)).body.records.length, 0);
      assert.deepEqual((await audit(`?target=api_key:${keys[2]}`)).body.records.map((r) => r.action), ['api_key.created']);
      assert.equal((await audit(`?until=${encodeURIComponent(start)}&since=${encodeURIComponent(new Date(Date.parse(start) - 1000).toISOString())}&action=api_key.created`))
        .body.records.filter((r) => keys.includes(r.target?.id ?? '')).length, 0);
    });

    it('answers 400 to a bad query, 401 without an admin token', async () => {
      for (const query of ['?limit=0', '?limit=501', '?limit=x', '?cursor=nope', '?outcome=maybe', '?since=yesterday', '?action=API%20KEY',
        '?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', '?colour=blue']) {
        const answer = await audit(query);
        assert.equal(answer.status, 400, query);
        assert.equal(answer.body.error, 'invalid_query', query);
        assert.ok(answer.body.message, query);
      }
      assert.equal((await fg.request('/api/v1/audit')).status, 401);
      assert.equal((await audit('', 'fga_not_a_real_token_000000')).status, 401);
    });

    it('lists a record for every admin route that changes something', () => {
      const changing = fg.routes.filter((r) => r.path.startsWith('/api/v1/') && r.method !== 'GET' && r.path !== '/api/v1/oauth/callback');
      assert.ok(changing.length > 20);
      for (const route of changing) {
        assert.ok(managementAction(route.method, route.path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1')), `${route.method} ${route.path} has no audit action`);
      }
    });
  });
}
