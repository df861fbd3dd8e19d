/**
 * Verified triggers (issue 51, docs/webhooks.md) through the real gateway and a real Temporal:
 * signatures made by each provider's own library (@octokit/webhooks-methods, stripe's test
 * header, standardwebhooks) or by openssl as the docs show (Slack, the generic preset) start
 * runs; a changed byte, a stale timestamp or a wrong secret is 401 naming the check, and starts
 * nothing; both secrets verify during a rotation; a redelivery answers the run of the first; a
 * GitHub ping and a Slack url_verification are answered without a run.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { eventually } from '../support/eventually';
import { createTrigger, inputsOf, opensslHmac, post, runsOf } from './webhook-support';

/** @octokit/webhooks-methods is ES modules only (no `require` export): imported dynamically. */
async function githubSign(secret: string, body: string): Promise<string> {
  const { sign } = await import('@octokit/webhooks-methods');
  return sign(secret, body);
}

const ECHO = { name: 'hook', steps: [{ name: 'Echo', type: 'template', format: 'plaintext', template: 'ok' }] };

describe('verified triggers: signature presets, deliveries, rotation', () => {
  let fg: TestFlowgate;
  let p: Published;
  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, ECHO);
  });
  after(async () => {
    await fg?.stop();
  });

  it('github: a delivery signed by @octokit/webhooks-methods starts one run, sent three times; a changed byte, a wrong secret are 401; ping has no run', async () => {
    const secret = `gh-${randomUUID()}`;
    const triggerId = await createTrigger(fg, p.workflowId, { verify: { preset: 'github', secrets: [secret] } });
    const body = JSON.stringify({ ref: 'refs/heads/main', commits: [{ id: 'abc' }] });
    const delivery = randomUUID();
    const headers = { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': delivery, 'X-Hub-Signature-256': await githubSign(secret, body) };
    const answers = [await post(fg, triggerId, body, headers), await post(fg, triggerId, body, headers), await post(fg, triggerId, body, headers)];
    assert.deepEqual(answers.map((a) => a.status), [202, 202, 202]);
    const runId = answers[0]?.json.runId;
    assert.equal(typeof runId, 'string');
    for (const a of answers) {
      assert.equal(a.json.runId, runId, 'every answer names the one run');
      assert.equal(a.headers.get('x-pf-run-id'), runId);
    }
    assert.deepEqual(answers.map((a) => a.json.replayed), [false, true, true]);

    const changed = body.replace('abc', 'abd');
    const tampered = await post(fg, triggerId, changed, { ...headers, 'X-GitHub-Delivery': randomUUID() });
    assert.equal(tampered.status, 401);
    assert.equal(tampered.json.code ?? tampered.json.error, 'signature_refused');
    assert.match(JSON.stringify(tampered.json), /signature_mismatch/);
    assert.doesNotMatch(JSON.stringify(tampered.json), new RegExp(await githubSign(secret, changed)), 'the expected signature is never shown');
    const wrong = await post(fg, triggerId, body, { ...headers, 'X-GitHub-Delivery': randomUUID(), 'X-Hub-Signature-256': await githubSign('not-the-secret', body) });
    assert.equal(wrong.status, 401);
    const unsigned = await post(fg, triggerId, body, { 'X-GitHub-Event': 'push' });
    assert.equal(unsigned.status, 401);
    assert.match(JSON.stringify(unsigned.json), /missing_signature/);

    const pingBody = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    const ping = await post(fg, triggerId, pingBody, { 'X-GitHub-Event': 'ping', 'X-GitHub-Delivery': randomUUID(), 'X-Hub-Signature-256': await githubSign(secret, pingBody) });
    assert.equal(ping.status, 200);
    assert.equal(ping.json.runId, undefined);

    assert.deepEqual(await eventually(async () => {
      const runs = await runsOf(fg.client, triggerId);
      return runs.length > 0 ? runs : undefined;
    }, 'the run is listed'), [runId]);
    assert.deepEqual(await inputsOf(fg.client, String(runId)), JSON.parse(body));
    // the refusals are kept with the trigger, audited and counted
    const deliveries = await fg.admin<{ deliveries: { outcome: string; reason: string | null }[] }>('GET', `/api/v1/triggers/${triggerId}/deliveries`);
    assert.equal(deliveries.status, 200);
    assert.equal(deliveries.body.deliveries.filter((d) => d.outcome === 'refused').length, 3);
    assert.ok(deliveries.body.deliveries.some((d) => d.outcome === 'answered' && /ping/.test(d.reason ?? '')));
    const audit = await fg.audit.list('org_default', { action: 'webhook.refused', target: `trigger:${triggerId}` }, 10).catch(() => undefined);
    if (audit) assert.equal(audit.records.length, 3);
    assert.match(await fg.metrics.text(), /flowgate_webhook_deliveries_total\{preset="github",outcome="refused",check="signature_mismatch"\} 2/);
    // the secret is never shown again
    const listed = await fg.admin<{ triggers: { id: string }[] }>('GET', `/api/v1/triggers?workflowId=${p.workflowId}`);
    assert.doesNotMatch(JSON.stringify(listed.body), new RegExp(secret));
  });

  it('github: both secrets verify during a rotation, the old one no longer after it', async () => {
    const [oldSecret, newSecret] = [`old-${randomUUID()}`, `new-${randomUUID()}`];
    const triggerId = await createTrigger(fg, p.workflowId, { verify: { preset: 'github', secrets: [oldSecret] } });
    const send = async (secret: string) => {
      const body = JSON.stringify({ n: randomUUID() });
      return post(fg, triggerId, body, { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': randomUUID(), 'X-Hub-Signature-256': await githubSign(secret, body) });
    };
    assert.equal((await send(newSecret)).status, 401);
    assert.equal((await fg.admin('PUT', `/api/v1/triggers/${triggerId}/verify/secrets`, { secrets: [newSecret, oldSecret] })).status, 200);
    assert.equal((await send(oldSecret)).status, 202);
    assert.equal((await send(newSecret)).status, 202);
    assert.equal((await fg.admin('PUT', `/api/v1/triggers/${triggerId}/verify/secrets`, { secrets: [newSecret] })).status, 200);
    assert.equal((await send(oldSecret)).status, 401);
    assert.equal((await send(newSecret)).status, 202);
  });

  it('stripe: a header from stripe\'s generateTestHeaderString starts a run named by the event id; stale or changed is 401', async () => {
    const secret = `whsec_${randomUUID().replace(/-/g, '')}`;
    const triggerId = await createTrigger(fg, p.workflowId, { verify: { preset: 'stripe', secrets: [secret] } });
    const stripe = new Stripe('sk_test_unused');
    const payload = JSON.stringify({ id: `evt_${randomUUID().replace(/-/g, '')}`, object: 'event', type: 'invoice.paid', data: { object: { id: 'in_1' } } });
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret });
    const first = await post(fg, triggerId, payload, { 'Stripe-Signature': header });
    assert.equal(first.status, 202);
    const again = await post(fg, triggerId, payload, { 'Stripe-Signature': stripe.webhooks.generateTestHeaderString({ payload, secret }) });
    assert.equal(again.json.runId, first.json.runId, 'the event id is the idempotency key');
    const stale = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(Date.now() / 1000) - 3600 });
    const refused = await post(fg, triggerId, payload, { 'Stripe-Signature': stale });
    assert.equal(refused.status, 401);
    assert.match(JSON.stringify(refused.json), /stale_timestamp/);
    const changed = await post(fg, triggerId, payload.replace('in_1', 'in_2'), { 'Stripe-Signature': header });
    assert.equal(changed.status, 401);
  });

  it('standard-webhooks: a signature from the standardwebhooks package starts a run; webhook-id deduplicates; stale is 401', async () => {
    const secret = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
    const triggerId = await createTrigger(fg, p.workflowId, { verify: { preset: 'standard-webhooks', secrets: [secret] } });
    const body = JSON.stringify({ type: 'user.created', data: { id: 7 } });
    const id = `msg_${randomUUID()}`;
    const at = new Date();
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body) };
    const first = await post(fg, triggerId, body, headers);
    assert.equal(first.status, 202);
    assert.equal((await post(fg, triggerId, body, headers)).json.runId, first.json.runId);
    const old = new Date(Date.now() - 3600_000);
    const stale = await post(fg, triggerId, body, { 'webhook-id': `msg_${randomUUID()}`, 'webhook-timestamp': String(Math.floor(old.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, old, body) });
    assert.equal(stale.status, 401);
    assert.match(JSON.stringify(stale.json), /stale_timestamp/);
  });

  it('slack: the openssl recipe verifies; url_verification is answered with its challenge and no run; a stale timestamp is 401', async () => {
    const secret = `slack-${randomUUID()}`;
    const triggerId = await createTrigger(fg, p.workflowId, { verify: { preset: 'slack', secrets: [secret] } });
    const signed = (body: string, ts = Math.floor(Date.now() / 1000)) => ({
      'X-Slack-Request-Timestamp': String(ts), 'X-Slack-Signature': `v0=${opensslHmac(secret, `v0:${ts}:${body}`)}`,
    });
    const challenge = JSON.stringify({ token: 't', challenge: 'c-123', type: 'url_verification' });
    const answered = await post(fg, triggerId, challenge, signed(challenge));
    assert.equal(answered.status, 200);
    assert.deepEqual(answered.json, { challenge: 'c-123' });
    const event = JSON.stringify({ type: 'event_callback', event_id: `Ev${randomUUID()}`, event: { type: 'app_mention', text: 'hi' } });
    const started = await post(fg, triggerId, event, signed(event));
    assert.equal(started.status, 202);
    const retried = await post(fg, triggerId, event, { ...signed(event), 'X-Slack-Retry-Num': '1' });
    assert.equal(retried.json.runId, started.json.runId, 'Slack\'s retry of an event is the same run');
    const stale = await post(fg, triggerId, event, signed(event, Math.floor(Date.now() / 1000) - 600));
    assert.equal(stale.status, 401);
    assert.match(JSON.stringify(stale.json), /stale_timestamp/);
    const runs = await eventually(async () => {
      const listed = await runsOf(fg.client, triggerId);
      return listed.length > 0 ? listed : undefined;
    }, 'the run is listed');
    assert.deepEqual(runs, [started.json.runId]);
  });

  it('hmac: a base64 signature with a prefix and a timestamp header, made by openssl, verifies; one changed byte is 401', async () => {
    const secret = `generic-${randomUUID()}`;
    const triggerId = await createTrigger(fg, p.workflowId, {
      verify: { preset: 'hmac', secrets: [secret], header: 'X-Signature', algorithm: 'sha512', encoding: 'base64', prefix: 'sha512=', timestampHeader: 'X-Timestamp', deliveryIdHeader: 'X-Delivery' },
    });
    const body = 'name=Ada&amount=12';
    const ts = String(Math.floor(Date.now() / 1000));
    const headers = { 'X-Timestamp': ts, 'X-Signature': `sha512=${opensslHmac(secret, `${ts}.${body}`, { algorithm: 'sha512', base64: true })}`, 'X-Delivery': randomUUID() };
    const ok = await post(fg, triggerId, body, headers, 'application/x-www-form-urlencoded');
    assert.equal(ok.status, 202);
    assert.deepEqual(await inputsOf(fg.client, String(ok.json.runId)), { name: 'Ada', amount: '12' });
    const changed = await post(fg, triggerId, body.replace('12', '13'), headers, 'application/x-www-form-urlencoded');
    assert.equal(changed.status, 401);
    assert.match(JSON.stringify(changed.json), /signature_mismatch/);
  });

  it('an API key still calls a verified trigger; a verified trigger without a signature or key is 401', async () => {
    const triggerId = await createTrigger(fg, p.workflowId, { verify: { preset: 'github', secrets: [`k-${randomUUID()}`] } });
    const withKey = await fg.request(`/ext/triggers/${triggerId}`, { method: 'POST', headers: { 'X-API-KEY': p.apiKey, 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(withKey.status, 200);
    const bad = await fg.admin('POST', '/api/v1/triggers', { workflowId: p.workflowId, verify: { preset: 'github', secrets: ['short'] } });
    assert.equal(bad.status, 400);
  });
});
