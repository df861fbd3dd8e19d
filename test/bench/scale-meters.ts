/**
 * What `npm run bench:scale` reads besides its own clocks: CPU time of a process (/proc), the
 * Temporal server's own Prometheus metrics (schedule-to-start, sync matches, actions, state
 * transitions) and PostgreSQL's table statistics (rows written, bytes on disk). Each is a snapshot;
 * a step's figure is the difference of two.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';

/** utime + stime of a process and all its threads, in ms; 0 when it is gone. */
export function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the fields after the command name, which is in parentheses and may hold spaces
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return 0;
  }
}

/** One Prometheus sample: name, labels, value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export type Metrics = Sample[];

export function parseMetrics(text: string): Metrics {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

export async function scrape(url: string): Promise<Metrics> {
  const response = await fetch(url);
  return parseMetrics(await response.text());
}

type Filter = (labels: Record<string, string>) => boolean;
const any: Filter = () => true;

/** The sum of every sample named `name` whose labels pass `filter`. */
export function total(metrics: Metrics, name: string, filter: Filter = any): number {
  return metrics.filter((s) => s.name === name && filter(s.labels)).reduce((sum, s) => sum + s.value, 0);
}

/**
 * The quantile `q` (0..1) of histogram `name` between two scrapes, in the metric's unit: linear
 * between the bounds of the bucket it falls in, as Prometheus' `histogram_quantile` reads it (the
 * bucket's upper bound alone read every p99 between 100 and 200 ms as 200, never under a 200 ms
 * limit). Infinity when it falls in the last (`+Inf`) bucket.
 */
export function quantileBetween(before: Metrics, after: Metrics, name: string, q: number, filter: Filter = any): number | undefined {
  const buckets = (m: Metrics): Map<number, number> => {
    const byLe = new Map<number, number>();
    for (const s of m) {
      if (s.name !== `${name}_bucket` || !filter(s.labels)) continue;
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      byLe.set(le, (byLe.get(le) ?? 0) + s.value);
    }
    return byLe;
  };
  const a = buckets(before);
  const b = buckets(after);
  const bounds = [...b.keys()].sort((x, y) => x - y);
  const count = (b.get(Infinity) ?? 0) - (a.get(Infinity) ?? 0);
  if (count <= 0) return undefined;
  const rank = q * count;
  let lower = 0;
  let below = 0;
  for (const le of bounds) {
    const upTo = (b.get(le) ?? 0) - (a.get(le) ?? 0);
    if (upTo >= rank) {
      if (le === Infinity) return Infinity;
      const inBucket = upTo - below;
      return inBucket > 0 ? lower + (le - lower) * ((rank - below) / inBucket) : le;
    }
    lower = le;
    below = upTo;
  }
  return Infinity;
}

/** Rows written and bytes held by the tables of the databases named. */
export interface TableStats {
  rows: number;
  bytes: number;
}

export async function tableStats(baseUrl: string, databases: string[]): Promise<TableStats> {
  let rows = 0;
  let bytes = 0;
  for (const database of databases) {
    const url = new URL(baseUrl);
    url.pathname = `/${database}`;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      const result = await client.query<{ rows: string; bytes: string }>(
        `select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) as rows,
                coalesce(sum(pg_total_relation_size(relid)), 0) as bytes
           from pg_stat_user_tables`);
      rows += Number(result.rows[0]?.rows ?? 0);
      bytes += Number(result.rows[0]?.bytes ?? 0);
    } finally {
      await client.end();
    }
  }
  return { rows, bytes };
}

/** p-th percentile (0..100) of `values` (nearest rank); NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
