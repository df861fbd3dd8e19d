/**
 * A verified trigger's page in the console over real HTTP (docs/webhooks.md#in-the-console): the
 * preset and its options, the secret count and never a secret, the last deliveries (verified, or
 * refused with the check), the secrets form that rotates (CSRF as every console form, audited as
 * the API's `trigger.secrets_replaced`), and another organization's trigger answering 404.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { consoleHttp } from '../support/console-http';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { createTrigger, opensslHmac, post as postHook } from '../triggers/webhook-support';

describe('console: a verified trigger\'s page over HTTP (preset, deliveries, rotation)', () => {
  let fg: TestFlowgate;
  let p: Published;
  let otherToken: string;
  const { signIn, get, post } = consoleHttp(() => fg, '/console/workflows');

  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, { name: 'console-hook', steps: [{ name: 'Echo', type: 'template', format: 'plaintext', template: 'ok' }] });
    const org = await fg.admin<{ adminToken: string }>('POST', '/api/v1/orgs', { name: 'other-hook' });
    otherToken = org.body.adminToken;
  });
  after(async () => {
    await fg?.stop();
  });

  const push = (triggerId: string, secret: string) => {
    const body = JSON.stringify({ ref: 'refs/heads/main', n: randomUUID() });
    return postHook(fg, triggerId, body, { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': randomUUID(), 'X-Hub-Signature-256': `sha256=${opensslHmac(secret, body)}` });
  };

  it('shows the preset, the deliveries with their reasons, and rotates the secrets through a CSRF-checked form', async () => {
    const first = `first-${randomUUID()}`;
    const second = `second-${randomUUID()}`;
    const triggerId = await createTrigger(fg, p.workflowId, { name: 'gh-hook', verify: { preset: 'github', secrets: [first], events: ['push'] } });
    const verified = await push(triggerId, first);
    assert.equal(verified.status, 202);
    const runId = String(verified.json.runId);
    assert.equal((await push(triggerId, 'not-the-secret')).status, 401);

    const s = await signIn(fg.adminToken);
    // the workflow's page links the trigger's page and names its preset
    const workflowPage = await (await get(s, `/console/workflows/${p.workflowId}`)).text();
    assert.ok(workflowPage.includes(`href="/console/triggers/${triggerId}"`));
    assert.match(workflowPage, /Verified: <strong>github<\/strong>/);

    const response = await get(s, `/console/triggers/${triggerId}`);
    assert.equal(response.status, 200);
    const page = await response.text();
    assert.match(page, /Preset <strong>github<\/strong>/);
    assert.match(page, /<code>events<\/code>: <code>push<\/code>/);
    assert.match(page, /Holds one secret/);
    assert.ok(!page.includes(first), 'the secret is never shown');
    assert.match(page, /<tr data-outcome="refused">.*?<strong>refused<\/strong><\/td>\s*<td>signature_mismatch: /s);
    assert.match(page, new RegExp(`<tr data-outcome="verified">[\\s\\S]*?/console/runs/${runId}`));
    assert.match(page, /id="rotate"/);

    // without the CSRF token: 403, nothing changes
    const forged = await post({ cookie: s.cookie }, `/console/triggers/${triggerId}/secrets`, { secret: second });
    assert.equal(forged.status, 403);
    assert.equal((await push(triggerId, first)).status, 202);
    // a secret too short: 400 naming the rule, not the value
    const short = await post(s, `/console/triggers/${triggerId}/secrets`, { secret: 'tiny' });
    assert.equal(short.status, 400);
    const shortPage = await short.text();
    assert.match(shortPage, /at least 8 characters/);
    assert.ok(!shortPage.includes('value="tiny"'));

    // the rotation: both verify, then the new one alone
    const both = await post(s, `/console/triggers/${triggerId}/secrets`, { secret: second, previousSecret: first });
    assert.equal(both.status, 303);
    assert.equal(both.headers.get('location'), `/console/triggers/${triggerId}?done=secrets`);
    const after = await (await get(s, `/console/triggers/${triggerId}?done=secrets`)).text();
    assert.match(after, /The secrets were replaced/);
    assert.match(after, /Holds 2 secrets/);
    assert.ok(!after.includes(first) && !after.includes(second));
    assert.deepEqual([(await push(triggerId, first)).status, (await push(triggerId, second)).status], [202, 202]);
    assert.equal((await post(s, `/console/triggers/${triggerId}/secrets`, { secret: second })).status, 303);
    assert.deepEqual([(await push(triggerId, first)).status, (await push(triggerId, second)).status], [401, 202]);

    // audited as the API's action, refused ones too, never with a secret
    const audit = await fg.admin<{ records: { action: string; outcome: string; details: unknown }[] }>('GET', `/api/v1/audit?action=trigger.secrets_replaced&target=trigger:${triggerId}`);
    assert.equal(audit.status, 200);
    assert.equal(audit.body.records.length, 4, 'the forged and the refused posts are recorded too');
    assert.equal(audit.body.records.filter((r) => r.outcome === 'success').length, 2);
    assert.ok(!JSON.stringify(audit.body).includes(first) && !JSON.stringify(audit.body).includes(second));
  });

  it('shows an API key trigger without a form, and answers 404 for another organization\'s trigger', async () => {
    const triggerId = await createTrigger(fg, p.workflowId, { batch: { size: 5, maxWaitSeconds: 10 } });
    const s = await signIn(fg.adminToken);
    const page = await (await get(s, `/console/triggers/${triggerId}`)).text();
    assert.match(page, /No preset: called with an API key/);
    assert.match(page, /Batch: one run per 5 calls/);
    assert.match(page, /No deliveries yet/);
    assert.ok(!page.includes('id="rotate"'));
    assert.equal((await post(s, `/console/triggers/${triggerId}/secrets`, { secret: 'a-long-enough-secret' })).status, 409);

    const other = await signIn(otherToken);
    assert.equal((await get(other, `/console/triggers/${triggerId}`)).status, 404);
    assert.equal((await post(other, `/console/triggers/${triggerId}/secrets`, { secret: 'a-long-enough-secret' })).status, 404);
  });
});
