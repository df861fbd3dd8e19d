/** Latency figures for the benchmarks: one line of count, mean and percentiles per series. */

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Prints `label: n=… mean=… p50=… p95=… p99=… max=…` in milliseconds, `decimals` places each. */
export function reportLatency(label: string, samples: number[], decimals: number): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  const ms = (n: number | undefined): string => `${n?.toFixed(decimals)}ms`;
  console.log(`${label}: n=${samples.length} mean=${ms(mean)} p50=${ms(percentile(sorted, 50))} p95=${ms(percentile(sorted, 95))} p99=${ms(percentile(sorted, 99))} max=${ms(sorted[sorted.length - 1])}`);
}
