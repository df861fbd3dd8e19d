/**
 * Temporal at its limit (issue 48): a Temporal that answers RESOURCE_EXHAUSTED (here a namespace
 * rate limit of a few requests a second, as a Temporal Cloud namespace at its actions per second, or
 * a busy shard) makes a trigger call a `503 temporal_busy` with `Retry-After` in the contract's error
 * shape, never a 500. On a Temporal of this test's own, with `frontend.namespaceRPS` set low.
 */
import assert from 'node:assert/strict';
import { ServiceError } from '@temporalio/client';
import { temporalRefusal } from '../../src/http/temporal-errors';
import type { EmbeddedTemporal } from '../../temporal/embedded';
import { startTestTemporal } from '../setup/root-hooks';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';

/** Requests a second the namespace accepts: enough for the worker's polls to go on, far fewer than the burst. */
const NAMESPACE_RPS = 5;
const BURST = 60;

function grpcFailure(code: number): ServiceError {
  return new ServiceError('refused', { cause: Object.assign(new Error('grpc'), { code }) });
}

describe('Temporal at its limit (RESOURCE_EXHAUSTED)', function () {
  this.timeout(180_000);
  let temporal: EmbeddedTemporal | undefined;
  let fg: TestFlowgate | undefined;

  after(async () => {
    await fg?.stop();
    await temporal?.stop();
  });

  it('maps RESOURCE_EXHAUSTED to 503 temporal_busy and UNAVAILABLE to 503 temporal_unavailable, both with Retry-After; others pass', () => {
    const busy = temporalRefusal(grpcFailure(8));
    assert.deepEqual([busy?.status, busy?.code, busy?.options.headers?.['Retry-After']], [503, 'temporal_busy', '1']);
    const down = temporalRefusal(grpcFailure(14));
    assert.deepEqual([down?.status, down?.code, down?.options.headers?.['Retry-After']], [503, 'temporal_unavailable', '5']);
    assert.equal(temporalRefusal(grpcFailure(3)), undefined);
    assert.equal(temporalRefusal(new Error('other')), undefined);
  });

  it(`a burst of ${BURST} trigger calls over the namespace's rate: each answers 200 or 503 with Retry-After and {error, message}, none 500`, async () => {
    temporal = await startTestTemporal({ dynamicConfig: { 'frontend.namespaceRPS': NAMESPACE_RPS, 'frontend.namespaceBurstRatio': 1 } });
    // the gateway's own retries of a refused call stop soon, as they do for an unreachable Temporal
    fg = await startTestFlowgate({ TEMPORAL_ADDRESS: temporal.address, FLOWGATE_TEMPORAL_UNREACHABLE_MS: '200', FLOWGATE_MAX_CONNECTIONS_PER_ADDRESS: '0' });
    const p = await publishWorkflow(fg, { name: 'busy', steps: [{ name: 'Hello', type: 'template', format: 'plaintext', template: 'hi' }] });
    const flowgate = fg;
    const answers = await Promise.all(Array.from({ length: BURST }, async () => {
      const response = await trigger(flowgate, p, {});
      const text = await response.text();
      const body: Record<string, unknown> = response.status === 503 ? JSON.parse(text) : {};
      return { status: response.status, retryAfter: response.headers.get('Retry-After'), body };
    }));
    const statuses = answers.map((a) => a.status);
    assert.ok(statuses.every((s) => s === 200 || s === 503), `statuses: ${statuses.join(', ')}`);
    const refused = answers.filter((a) => a.status === 503);
    assert.ok(refused.length > 0, `the burst was over the namespace's rate, yet nothing was refused: ${statuses.join(', ')}`);
    // Which 503 a refused start gets depends on timing: temporal_busy when Temporal refused it, temporal_unavailable
    // when the check whether it started anyway was refused too (the mapping itself is the test above).
    for (const a of refused) {
      // a start refused and then unconfirmed (the check whether it exists refused too) is temporal_unavailable with its run ID
      assert.ok(a.body.error === 'temporal_busy' || a.body.error === 'temporal_unavailable', JSON.stringify(a.body));
      assert.equal(typeof a.body.message, 'string');
      assert.ok(a.retryAfter && Number(a.retryAfter) >= 1, `Retry-After: ${a.retryAfter}`);
    }
  });
});
