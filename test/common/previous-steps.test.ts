import assert from 'node:assert/strict';
import { inlinePrefix, PREVIOUS_INLINE_BUDGET, previousSteps, RESULT_INLINE_LIMIT, type StepOutcome } from '../../src/common/run-types';

function outcome(stepIndex: number, result: string, truncated = false): StepOutcome {
  const file = { key: `runs/o/r/steps/${stepIndex}/output.txt`, mimeType: 'text/plain', size: result.length };
  return {
    stepIndex, status: 'COMPLETE', resultType: 'plaintext', result, truncated, exitCode: 0, duration: 5,
    files: { 'output.txt': file, 'stdout.txt': { ...file, key: `runs/o/r/steps/${stepIndex}/stdout.txt` } },
  };
}

describe('previousSteps', () => {
  it('keeps only what interpolation needs: no file keys, durations or errors', () => {
    assert.deepEqual(previousSteps([outcome(1, 'one')]), [{ stepIndex: 1, exitCode: 0, resultType: 'plaintext', result: 'one', truncated: false }]);
  });

  it('inlines the latest results within the budget and marks the older ones for reloading', () => {
    const third = Math.floor(PREVIOUS_INLINE_BUDGET / 3);
    const steps = [1, 2, 3, 4, 5].map((i) => outcome(i, String(i).repeat(third)));
    const compact = previousSteps(steps);
    assert.deepEqual(compact.map((s) => s.stepIndex), [1, 2, 3, 4, 5], 'every earlier step is listed, in order');
    assert.deepEqual(compact.map((s) => s.truncated), [true, true, false, false, false]);
    assert.deepEqual(compact.map((s) => s.result.length), [0, 0, third, third, third]);
    assert.ok(compact.reduce((n, s) => n + s.result.length, 0) <= PREVIOUS_INLINE_BUDGET);
  });

  it('passes a result already cut in workflow state as truncated, and a small one after a big one inline', () => {
    const compact = previousSteps([outcome(1, 'cut', true), outcome(2, 'x'.repeat(PREVIOUS_INLINE_BUDGET + 1)), outcome(3, 'small')]);
    assert.deepEqual(compact.map((s) => [s.truncated, s.result]), [[true, ''], [true, ''], [false, 'small']]);
  });

  it('keeps the input of the 200th step of a run of 4 KiB results small', () => {
    const steps = Array.from({ length: 199 }, (_, i) => outcome(i + 1, 'r'.repeat(4096)));
    const size = JSON.stringify(previousSteps(steps)).length;
    assert.ok(size < PREVIOUS_INLINE_BUDGET + 199 * 120, `${size} bytes`);
  });
});

describe('inlinePrefix', () => {
  it('keeps a short result whole and cuts a long one at the limit', () => {
    assert.equal(inlinePrefix('short'), 'short');
    assert.equal(inlinePrefix('x'.repeat(RESULT_INLINE_LIMIT + 10)).length, RESULT_INLINE_LIMIT);
  });

  it('never keeps half of a character outside the Basic Multilingual Plane', () => {
    const text = `${'x'.repeat(RESULT_INLINE_LIMIT - 1)}😀tail`; // the emoji's high surrogate sits at the limit
    const cut = inlinePrefix(text);
    assert.equal(cut, 'x'.repeat(RESULT_INLINE_LIMIT - 1));
    assert.equal(Buffer.from(cut, 'utf8').toString('utf8'), cut, 'no lone surrogate');
  });
});
