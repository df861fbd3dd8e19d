/** Durations in definitions: a number and a unit, `500ms`, `30s`, `5m`, `2h`, `1d`. Pure. */
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
function isUnit(unit: string): unit is keyof typeof UNIT_MS {
  return Object.prototype.hasOwnProperty.call(UNIT_MS, unit);
}

export const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

export function durationMs(text: string): number {
  const match = DURATION_PATTERN.exec(text);
  if (!match?.[1] || !match[2] || !isUnit(match[2])) throw new Error(`not a duration: ${JSON.stringify(text)}`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2]]);
}
