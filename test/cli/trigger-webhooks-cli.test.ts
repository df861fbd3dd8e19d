/**
 * `flowgate triggers create --verify …`, `triggers deliveries` and `triggers secrets` (docs/cli.md,
 * docs/webhooks.md) against a real gateway: the secret comes from an environment variable and is
 * never printed; the trigger verifies GitHub deliveries signed with it (openssl, as the docs show);
 * a refusal shows in the deliveries with its reason; a rotation through the CLI verifies with both
 * secrets, then with the new one alone.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { publishWorkflow, startTestFlowgate, type Published, type TestFlowgate } from '../support/flowgate';
import { runCli, type CliResult } from '../support/cli-run';
import { opensslHmac, post } from '../triggers/webhook-support';

const ECHO = { name: 'cli-hook', steps: [{ name: 'Echo', type: 'template', format: 'plaintext', template: 'ok' }] };

describe('flowgate triggers: verified and shaped triggers (CLI)', () => {
  let fg: TestFlowgate;
  let p: Published;
  let home: string;
  before(async () => {
    fg = await startTestFlowgate();
    p = await publishWorkflow(fg, ECHO);
    home = mkdtempSync(path.join(os.tmpdir(), 'flowgate-hook-cli-'));
  });
  after(async () => {
    await fg?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const cli = (args: string[], env: Record<string, string> = {}): Promise<CliResult> => runCli(args, { url: fg.url, token: fg.adminToken, home, env });

  /** A GitHub push signed with `secret` as docs/webhooks.md's openssl recipe signs it. */
  const push = (triggerId: string, secret: string) => {
    const body = JSON.stringify({ ref: 'refs/heads/main', n: randomUUID() });
    return post(fg, triggerId, body, { 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': randomUUID(), 'X-Hub-Signature-256': `sha256=${opensslHmac(secret, body)}` });
  };

  it('creates a github trigger from --secret-env without printing the secret, lists its deliveries and rotates its secrets', async () => {
    const first = `first-${randomUUID()}`;
    const second = `second-${randomUUID()}`;
    const created = await cli(['--json', 'triggers', 'create', p.workflowId, '--name', 'gh', '--verify', 'github', '--secret-env', 'GH_SECRET', '--events', 'push,ping'], { GH_SECRET: first });
    assert.equal(created.code, 0, created.stderr);
    assert.ok(!created.stdout.includes(first) && !created.stderr.includes(first), 'the secret is never printed');
    const trigger = JSON.parse(created.stdout) as { id: string; verify: { preset: string; events: string[] } };
    assert.deepEqual(trigger.verify, { preset: 'github', events: ['push', 'ping'] });
    // the human output is the ID alone
    const plain = await cli(['triggers', 'create', p.workflowId, '--verify', 'github', '--secret-env', 'GH_SECRET'], { GH_SECRET: first });
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^\S+\n$/);
    assert.ok(!plain.stdout.includes(first));

    assert.equal((await push(trigger.id, first)).status, 202);
    const refused = await push(trigger.id, 'not-the-secret');
    assert.equal(refused.status, 401);

    const deliveries = await cli(['triggers', 'deliveries', trigger.id]);
    assert.equal(deliveries.code, 0, deliveries.stderr);
    const lines = deliveries.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^AT\s+OUTCOME\s+REASON\s+DELIVERYID\s+RUNID$/);
    assert.match(lines[1] ?? '', /refused\s+signature_mismatch: /, 'newest first, with the check that failed');
    assert.match(lines[2] ?? '', /verified\s+-\s+\S+\s+\S+/);
    const json = await cli(['--json', 'triggers', 'deliveries', trigger.id, '--limit', '1']);
    assert.equal((JSON.parse(json.stdout) as { deliveries: unknown[] }).deliveries.length, 1);

    // rotation: both, then the new one alone
    const both = await cli(['triggers', 'secrets', trigger.id, '--secret-env', 'NEW', '--secret-env', 'OLD'], { NEW: second, OLD: first });
    assert.equal(both.code, 0, both.stderr);
    assert.equal(both.stdout, `${trigger.id} now holds 2 secret(s)\n`);
    assert.deepEqual([(await push(trigger.id, first)).status, (await push(trigger.id, second)).status], [202, 202]);
    const file = path.join(home, 'secret.txt');
    writeFileSync(file, `${second}\n`);
    const alone = await cli(['--json', 'triggers', 'secrets', trigger.id, '--secret-file', file]);
    assert.equal(alone.code, 0, alone.stderr);
    assert.deepEqual(JSON.parse(alone.stdout), { id: trigger.id, secrets: 1 });
    assert.ok(!alone.stdout.includes(second));
    assert.deepEqual([(await push(trigger.id, first)).status, (await push(trigger.id, second)).status], [401, 202]);

    // the rotation is audited without the secrets
    const audit = await cli(['--json', 'audit', '--action', 'trigger.secrets_replaced', '--target', `trigger:${trigger.id}`]);
    assert.equal(audit.code, 0, audit.stderr);
    assert.equal((JSON.parse(audit.stdout) as { records: unknown[] }).records.length, 2);
    assert.ok(!audit.stdout.includes(first) && !audit.stdout.includes(second));
  });

  it('creates hmac, stripe and shaped triggers from options; refuses a secret missing or on the wrong preset with a usage error', async () => {
    const hmac = await cli(['--json', 'triggers', 'create', p.workflowId, '--verify', 'hmac', '--secret-env', 'S', '--signature-header', 'X-Sig',
      '--prefix', 'sha256=', '--timestamp-header', 'X-Ts', '--tolerance', '120', '--delivery-id-header', 'X-Id'], { S: 'generic-secret-1' });
    assert.equal(hmac.code, 0, hmac.stderr);
    assert.deepEqual((JSON.parse(hmac.stdout) as { verify: unknown }).verify, {
      preset: 'hmac', header: 'X-Sig', algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=', timestampHeader: 'X-Ts', toleranceSeconds: 120, deliveryIdHeader: 'X-Id',
    });
    const stripe = await cli(['--json', 'triggers', 'create', p.workflowId, '--verify', 'stripe', '--secret-env', 'S', '--debounce', '2', '--max-wait', '30', '--key', 'inputs.data.object.customer'], { S: 'whsec_stripe123' });
    assert.equal(stripe.code, 0, stripe.stderr);
    const shaped = JSON.parse(stripe.stdout) as { verify: { preset: string }; debounce: unknown };
    assert.equal(shaped.verify.preset, 'stripe');
    assert.deepEqual(shaped.debounce, { key: 'inputs.data.object.customer', quietSeconds: 2, maxWaitSeconds: 30, collect: 'all' });
    const batch = await cli(['--json', 'triggers', 'create', p.workflowId, '--batch', '10', '--max-wait', '5']);
    assert.equal(batch.code, 0, batch.stderr);
    assert.deepEqual((JSON.parse(batch.stdout) as { batch: unknown }).batch, { size: 10, maxWaitSeconds: 5 });

    const noSecret = await cli(['triggers', 'create', p.workflowId, '--verify', 'github']);
    assert.equal(noSecret.code, 64);
    assert.match(noSecret.stderr, /--secret-env/);
    const unset = await cli(['triggers', 'create', p.workflowId, '--verify', 'github', '--secret-env', 'NOPE']);
    assert.equal(unset.code, 64);
    assert.match(unset.stderr, /NOPE/);
    const wrong = await cli(['triggers', 'create', p.workflowId, '--verify', 'slack', '--secret-env', 'S', '--events', 'push'], { S: 'slack-secret-1' });
    assert.equal(wrong.code, 64);
    assert.ok(!wrong.stderr.includes('slack-secret-1'));
    const both = await cli(['triggers', 'create', p.workflowId, '--debounce', '1', '--batch', '2']);
    assert.equal(both.code, 64);
    // a secret the server refuses (too short): exit 1 with the server's reason, never the value
    const short = await cli(['triggers', 'create', p.workflowId, '--verify', 'github', '--secret-env', 'S'], { S: 'tiny' });
    assert.equal(short.code, 1);
    assert.match(short.stderr, /8 characters/);
    assert.ok(!short.stderr.includes('tiny'));
  });
});
