/**
 * The http step's Idempotency-Key: `<runId>:<stepIndex>` by default, the same on every attempt of
 * the step (a step in flight when a worker dies is sent again: at-least-once), so a
 * non-idempotent upstream can tell a repeat; a step may name its own key or send none.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { runHttpStep } from '../../activities/steps/http/http-step';
import { HttpStepSchema } from '../../activities/steps/http/schema';
import type { InterpolationContext } from '../../src/common/interpolate';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback } from '../support/loopback';

/** An upstream on loopback that notes each request's Idempotency-Key (undefined: none sent). */
async function keyRecorder(): Promise<{ url: string; keys: (string | undefined)[]; close(): Promise<void> }> {
  const keys: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    keys.push(req.headers['idempotency-key'] as string | undefined);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}'));
  });
  const listening = await listenOnLoopback(server);
  return { url: listening.url, keys, close: listening.close };
}

const context: InterpolationContext = {
  inputs: { order: 'A-17' }, steps: {},
  run: { id: 'run-1', automationId: 'a1', automationVersion: 1, triggerId: 't1', started: '2024-01-01T00:00:00Z' },
};

describe('the http step Idempotency-Key', function () {
  this.timeout(120_000);
  let upstream: Awaited<ReturnType<typeof keyRecorder>>;
  let fg: TestFlowgate | undefined;
  beforeEach(async () => {
    upstream = await keyRecorder();
  });
  afterEach(async () => {
    await upstream.close();
    await fg?.stop();
    fg = undefined;
  });

  it('reaches the upstream of a run as <runId>:<stepIndex>', async () => {
    fg = await startTestFlowgate();
    const p = await publishWorkflow(fg, {
      name: 'pays', steps: [
        { name: 'Say', type: 'template', template: 'hi' },
        { name: 'Charge', type: 'http', method: 'POST', url: `${upstream.url}/charges`, body: { order: '{{inputs.order}}' } },
      ],
    });
    const response = await trigger(fg, p, { order: 'A-17' }, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200, await response.clone().text());
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.deepEqual(upstream.keys, [`${runId}:2`]);
  });

  it('sends the step\'s own key (interpolated) or none, and a header the step sets wins', async () => {
    const allowed = { allowPrivateNetwork: true, idempotencyKey: 'run-1:1' };
    await runHttpStep(HttpStepSchema.parse({ name: 'c', type: 'http', url: upstream.url }), context, allowed);
    await runHttpStep(HttpStepSchema.parse({ name: 'c', type: 'http', url: upstream.url, idempotencyKey: 'order-{{inputs.order}}' }), context, allowed);
    await runHttpStep(HttpStepSchema.parse({ name: 'c', type: 'http', url: upstream.url, idempotencyKey: false }), context, allowed);
    await runHttpStep(HttpStepSchema.parse({ name: 'c', type: 'http', url: upstream.url, headers: { 'Idempotency-Key': 'mine' } }), context, allowed);
    assert.deepEqual(upstream.keys, ['run-1:1', 'order-A-17', undefined, 'mine']);
  });
});
