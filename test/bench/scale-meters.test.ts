import assert from 'node:assert/strict';
import { parseMetrics, quantileBetween } from './scale-meters';

/** A histogram scrape of `name` with the cumulative bucket counts given (the last is +Inf). */
function scrape(name: string, counts: Array<[string, number]>): ReturnType<typeof parseMetrics> {
  return parseMetrics(counts.map(([le, count]) => `${name}_bucket{task_type="Workflow",le="${le}"} ${count}`).join('\n'));
}

describe('bench:scale meters: histogram quantiles', () => {
  const empty = scrape('s2s', [['0.1', 0], ['0.2', 0], ['0.5', 0], ['+Inf', 0]]);

  it('reads a quantile linearly inside its bucket, not as the bucket\'s upper bound', () => {
    // 100 observations: 90 under 100 ms, 10 between 100 and 200 ms: p99 is 9/10 of the way up the second bucket
    const after = scrape('s2s', [['0.1', 90], ['0.2', 100], ['0.5', 100], ['+Inf', 100]]);
    const p99 = quantileBetween(empty, after, 's2s', 0.99);
    assert.ok(p99 !== undefined && Math.abs(p99 - 0.19) < 1e-9, `p99 ${p99}`);
    assert.ok(p99 < 0.2, 'a p99 inside the 100-200 ms bucket reads under a 200 ms limit');
  });

  it('counts only what came between the two scrapes, and says Infinity past the last bound', () => {
    const before = scrape('s2s', [['0.1', 50], ['0.2', 50], ['0.5', 50], ['+Inf', 50]]);
    const after = scrape('s2s', [['0.1', 50], ['0.2', 50], ['0.5', 50], ['+Inf', 60]]);
    assert.equal(quantileBetween(before, after, 's2s', 0.5), Infinity);
    assert.equal(quantileBetween(before, before, 's2s', 0.99), undefined);
  });
});
