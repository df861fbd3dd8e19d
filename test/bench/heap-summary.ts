/**
 * What grew between two heap snapshots, by constructor (DevTools' "Summary" view, as text): reads
 * the snapshots heap-hook.ts writes (`BENCH_HEAP_DIR`, e.g. the workflow thread's before and after
 * the paused runs of `npm run bench:compare`) and prints, for the constructors whose objects grew
 * most, the count and the self size (KiB) in each and the growth per `runs` (optional: bytes a run).
 *
 *   node dist/test/bench/heap-summary.js <before.heapsnapshot> <after.heapsnapshot> [runs] [top]
 *
 * A constructor is an object's class (`Object`, `Activator`, `Array` ...); functions count as
 * `(closure)`, strings as `(string)`, V8's internal arrays and code by their kind. The count of
 * `Activator` objects in the workflow thread is the number of runs it holds (one per cached run).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const SnapshotSchema = z.object({
  snapshot: z.object({ meta: z.object({ node_fields: z.array(z.string()), node_types: z.array(z.unknown()) }) }),
  // millions of entries: checked as arrays, not item by item
  nodes: z.custom<number[]>((value) => Array.isArray(value)),
  strings: z.custom<string[]>((value) => Array.isArray(value)),
});

/** Per group: how many objects and their self size (bytes). */
export type HeapGroups = Map<string, { count: number; bytes: number }>;

const KINDS = z.array(z.string());

/** The group an object of V8 node type `type` and name `name` counts in. */
function groupOf(type: string, name: string): string {
  if (type === 'object' || type === 'native') return name === '' ? '(anonymous object)' : name.slice(0, 80);
  if (type === 'closure') return '(closure)';
  if (type.includes('string')) return '(string)';
  if (type === 'array' || type === 'hidden' || type === 'code') return `(${type}) ${name.slice(0, 60)}`;
  return `(${type})`;
}

/** The objects of a snapshot grouped by constructor. */
export function heapGroups(file: string): HeapGroups {
  const snapshot = SnapshotSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  const fields = snapshot.snapshot.meta.node_fields;
  const types = KINDS.parse(snapshot.snapshot.meta.node_types[0]);
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field));
  if (typeAt === undefined || nameAt === undefined || sizeAt === undefined || Math.min(typeAt, nameAt, sizeAt) < 0) throw new Error(`${file}: not a V8 heap snapshot`);
  const groups: HeapGroups = new Map();
  const { nodes, strings } = snapshot;
  for (let at = 0; at < nodes.length; at += fields.length) {
    const key = groupOf(types[nodes[at + typeAt] ?? 0] ?? '', strings[nodes[at + nameAt] ?? 0] ?? '');
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += nodes[at + sizeAt] ?? 0;
    groups.set(key, group);
  }
  return groups;
}

/** The table of the `top` groups that grew most (bytes) from `before` to `after`. */
export function growthTable(before: HeapGroups, after: HeapGroups, runs: number, top: number): string[] {
  const none = { count: 0, bytes: 0 };
  const rows = [...new Set([...before.keys(), ...after.keys()])].map((key) => {
    const a = before.get(key) ?? none;
    const b = after.get(key) ?? none;
    return { key, a, b, grown: b.bytes - a.bytes };
  }).sort((x, y) => y.grown - x.grown);
  const total = (groups: HeapGroups): number => [...groups.values()].reduce((sum, group) => sum + group.bytes, 0);
  const perRun = (bytes: number): string => (runs > 0 ? ` ${(bytes / runs).toFixed(0).padStart(8)} B/run` : '');
  const kib = (bytes: number): string => (bytes / 1024).toFixed(1).padStart(10);
  const lines = [`${'constructor'.padEnd(60)} ${'count before'.padStart(12)} ${'after'.padStart(9)} ${'KiB before'.padStart(10)} ${'after'.padStart(10)} ${'grown'.padStart(10)}${runs > 0 ? '     per run' : ''}`];
  for (const row of rows.slice(0, top)) {
    lines.push(`${row.key.padEnd(60)} ${String(row.a.count).padStart(12)} ${String(row.b.count).padStart(9)} ${kib(row.a.bytes)} ${kib(row.b.bytes)} ${kib(row.grown)}${perRun(row.grown)}`);
  }
  const grown = total(after) - total(before);
  lines.push(`${'(all)'.padEnd(60)} ${''.padStart(12)} ${''.padStart(9)} ${kib(total(before))} ${kib(total(after))} ${kib(grown)}${perRun(grown)}`);
  return lines;
}

if (require.main === module) {
  const [beforeFile, afterFile, runs = '0', top = '25'] = process.argv.slice(2);
  if (!beforeFile || !afterFile) {
    console.error('usage: node dist/test/bench/heap-summary.js <before.heapsnapshot> <after.heapsnapshot> [runs] [top]');
    process.exit(2);
  }
  for (const line of growthTable(heapGroups(beforeFile), heapGroups(afterFile), Number(runs), Number(top))) console.log(line);
}
