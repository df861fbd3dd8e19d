/**
 * The OpenAPI document describes the real answers of verified and shaped trigger calls (issue 51,
 * docs/webhooks.md): a verified call's 202 and a redelivery's, a shaped call's 202 (with an API key
 * and verified), a GitHub ping's and a Slack url_verification's 200, a refused signature's 401 and
 * the deliveries list; and a gateway built without the webhook receiver answers a verified or
 * shaped trigger's creation and a shaped trigger's call with 501 `not_available`, as documented.
 * The second gateway is an app over the same registry and Temporal (as ambiguous-start.test.ts
 * builds one), without `webhooks` in its dependencies.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { startBareGateway } from '../support/bare-gateway';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { type LoopbackServer } from '../support/loopback';
import { createTrigger, opensslHmac } from '../triggers/webhook-support';

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>;
  components: Record<string, unknown>;
};

const ECHO = { name: 'openapi-hook', steps: [{ name: 'Echo', type: 'template', format: 'plaintext', template: 'ok' }] };

describe('OpenAPI: verified and shaped trigger answers, and 501 not_available without the webhook receiver', () => {
  let fg: TestFlowgate;
  let p: Published;
  let doc: Doc;
  let bare: LoopbackServer | undefined;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);

  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, ECHO);
    doc = (await (await fg.request('/api/v1/openapi.json')).json()) as Doc;
  });
  after(async () => {
    await bare?.close();
    await fg?.stop();
  });

  /** Validates a real answer against the document's schema for that path, method and status; the body. */
  async function conforms(template: string, method: string, response: Response): Promise<Record<string, unknown>> {
    const text = await response.text();
    const described = doc.paths[template]?.[method]?.responses[String(response.status)];
    assert.ok(described, `${method.toUpperCase()} ${template} does not document status ${response.status} (body ${text.slice(0, 200)})`);
    const schema = described.content?.['application/json']?.schema;
    assert.ok(schema, `${method.toUpperCase()} ${template} ${response.status} documents no JSON body`);
    const body = JSON.parse(text) as Record<string, unknown>;
    const validate = ajv.compile({ ...schema, components: doc.components });
    assert.ok(validate(body), `${method.toUpperCase()} ${template} ${response.status}: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 500)}`);
    return body;
  }

  const call = (base: string, triggerId: string, body: string, headers: Record<string, string>) => fetch(`${base}/ext/triggers/${triggerId}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body,
  });
  const github = (secret: string, body: string, event = 'push', delivery = randomUUID()) => ({
    'X-GitHub-Event': event, 'X-GitHub-Delivery': delivery, 'X-Hub-Signature-256': `sha256=${opensslHmac(secret, body)}`,
  });
  const TRIGGER = '/ext/triggers/{triggerId}';

  it('describes a verified call\'s 202, a redelivery\'s, a ping\'s and a challenge\'s 200, a refusal\'s 401 and the deliveries', async () => {
    const secret = `gh-${randomUUID()}`;
    const triggerId = await createTrigger(fg, p.workflowId, { verify: { preset: 'github', secrets: [secret] } });
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const headers = github(secret, body);
    const first = await conforms(TRIGGER, 'post', await call(fg.url, triggerId, body, headers));
    assert.equal(first.replayed, false);
    const again = await call(fg.url, triggerId, body, headers);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const replayed = await conforms(TRIGGER, 'post', again);
    assert.deepEqual([replayed.replayed, replayed.runId], [true, first.runId]);
    const pingBody = JSON.stringify({ zen: 'Design for failure.' });
    const ping = await call(fg.url, triggerId, pingBody, github(secret, pingBody, 'ping'));
    assert.equal(ping.status, 200);
    assert.deepEqual(await conforms(TRIGGER, 'post', ping), { ok: true, event: 'ping' });
    const refused = await call(fg.url, triggerId, body, github('not-the-secret', body));
    assert.equal(refused.status, 401);
    assert.equal((await conforms(TRIGGER, 'post', refused)).error, 'signature_refused');

    const slackSecret = `slack-${randomUUID()}`;
    const slackId = await createTrigger(fg, p.workflowId, { verify: { preset: 'slack', secrets: [slackSecret] } });
    const challengeBody = JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 'x' });
    const ts = String(Math.floor(Date.now() / 1000));
    const challenge = await call(fg.url, slackId, challengeBody, { 'X-Slack-Request-Timestamp': ts, 'X-Slack-Signature': `v0=${opensslHmac(slackSecret, `v0:${ts}:${challengeBody}`)}` });
    assert.equal(challenge.status, 200);
    assert.deepEqual(await conforms(TRIGGER, 'post', challenge), { challenge: 'c-123' });

    const deliveries = await fg.request(`/api/v1/triggers/${triggerId}/deliveries`, { headers: { Authorization: `Bearer ${fg.adminToken}` } });
    assert.equal(deliveries.status, 200);
    const listed = await conforms('/api/v1/triggers/{id}/deliveries', 'get', deliveries) as { deliveries: { outcome: string }[] };
    assert.deepEqual(listed.deliveries.map((d) => d.outcome).sort(), ['answered', 'refused', 'verified', 'verified']);
  });

  it('describes a shaped call\'s 202, with an API key and verified', async () => {
    const shaped = await createTrigger(fg, p.workflowId, { batch: { size: 100, maxWaitSeconds: 1 } });
    const response = await call(fg.url, shaped, JSON.stringify({ n: 1 }), { 'X-API-KEY': p.apiKey, 'Idempotency-Key': 'event-1' });
    assert.equal(response.status, 202);
    assert.equal(response.headers.get('x-pf-event-id'), 'event-1');
    assert.deepEqual(await conforms(TRIGGER, 'post', response), { accepted: true, eventId: 'event-1', shaping: { mode: 'batch', key: '' } });

    const secret = `gh-${randomUUID()}`;
    const verifiedShaped = await createTrigger(fg, p.workflowId, { verify: { preset: 'github', secrets: [secret] }, debounce: { key: 'inputs.repo', quietSeconds: 1, maxWaitSeconds: 2 } });
    const body = JSON.stringify({ repo: 'a/b' });
    const delivery = randomUUID();
    const queued = await call(fg.url, verifiedShaped, body, github(secret, body, 'push', delivery));
    assert.equal(queued.status, 202);
    assert.deepEqual(await conforms(TRIGGER, 'post', queued), { accepted: true, eventId: delivery, shaping: { mode: 'debounce', key: 'a/b' } });
  });

  it('answers 501 not_available, as documented, on a gateway without the webhook receiver', async () => {
    // the services of src/app/services.ts, without `webhooks`
    bare = await startBareGateway(fg);

    for (const fields of [{ verify: { preset: 'stripe', secrets: ['whsec_abcdefgh'] } }, { debounce: { quietSeconds: 1, maxWaitSeconds: 2 } }]) {
      const created = await fetch(`${bare.url}/api/v1/triggers`, {
        method: 'POST', headers: { Authorization: `Bearer ${fg.adminToken}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ workflowId: p.workflowId, ...fields }),
      });
      assert.equal(created.status, 501, JSON.stringify(fields));
      assert.equal((await conforms('/api/v1/triggers', 'post', created)).error, 'not_available');
    }
    // a shaped trigger (made through the full gateway) called through this one
    const shaped = await createTrigger(fg, p.workflowId, { batch: { size: 2, maxWaitSeconds: 1 } });
    const refused = await call(bare.url, shaped, JSON.stringify({ n: 1 }), { 'X-API-KEY': p.apiKey });
    assert.equal(refused.status, 501);
    assert.equal((await conforms(TRIGGER, 'post', refused)).error, 'not_available');
  });
});
