/**
 * Runs of many steps with large results: every step still sees every earlier result whole, while
 * each activity's input (and so the run's Temporal history) stays bounded.
 */
import assert from 'node:assert/strict';
import { PREVIOUS_INLINE_BUDGET } from '../../src/common/run-types';
import { publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { clearHistory } from '../support/histories';

interface SyncBody {
  id: string;
  status: string;
  results: { stepIndex: number; result: { result: string } }[];
}

describe('long runs', () => {
  let fg: TestFlowgate;
  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  it('hands every step all earlier results whole, with activity inputs bounded by the inline budget', async function () {
    this.timeout(120_000);
    const big = Array.from({ length: 12 }, (_, i) => ({
      name: `Big ${i + 1}`, type: 'code', source: `return ${JSON.stringify(String.fromCharCode(97 + i))}.repeat(4000)`,
    }));
    const p = await publishWorkflow(fg, {
      name: 'many-big-results',
      steps: [
        ...big,
        { name: 'Check', type: 'code', source: 'return [1, 2, 12].map((i) => steps[i].result.length + steps[i].result[0]).join(",")' },
        { name: 'Template', type: 'template', template: '{{steps.1.result}}' },
      ],
    });
    const response = await trigger(fg, p, {}, { 'x-api-wait': 'true' });
    const body = (await response.json()) as SyncBody;
    assert.equal(body.status, 'COMPLETE', JSON.stringify(body).slice(0, 500));
    assert.equal(body.results[12]?.result.result, '4000a,4000b,4000l');
    assert.equal(body.results[13]?.result.result, 'a'.repeat(4000));

    const history = await clearHistory(fg, body.id);
    const inputs = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.input?.payloads ?? [])
      .map((payload) => payload.data?.length ?? 0);
    assert.equal(inputs.length, 13, 'one activity task per code step');
    const largest = Math.max(...inputs);
    assert.ok(largest < PREVIOUS_INLINE_BUDGET + 8 * 1024, `the largest activity input is ${largest} bytes`);
    // The template step ran as a local activity: the history keeps its outcome (a 4 KiB inline
    // prefix of the result), not its input.
    const local = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    assert.equal(local.length, 1);
    const recorded = Object.values(local[0]?.markerRecordedEventAttributes?.details ?? {})
      .flatMap((d) => d.payloads ?? []).reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0);
    assert.ok(recorded < 8 * 1024, `the local activity's marker holds ${recorded} bytes`);
  });
});
