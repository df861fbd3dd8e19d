/**
 * Where a V8 CPU profile's time went: `node dist/test/bench/profile-summary.js <file.cpuprofile>
 * [top=25] [--since=<seconds>] [--callers=<function>]`. Reads a `--cpu-prof` profile (as `BENCH_CPU_PROF` makes of the
 * flowgate process in `npm run bench:compare`) and prints, as shares of the sampled time:
 *
 * - by place: V8's own entries (`(garbage collector)`, `(program)`, `(idle)`), Node's internals
 *   (`node:*`), each npm package (`undici`, `koa`, `@temporalio/*`, ...) and each folder of
 *   flowgate's own code (`src/tools`, `src/http`, ...), by self time;
 * - the top functions by self time (the time spent in the function itself);
 * - the top functions of flowgate's own code by total time (itself and what it called), each
 *   counted once per sample however deep it recurses.
 *
 * `--since` leaves out the first seconds (start-up, registration) so the load's samples count alone;
 * `--callers` also prints which stacks (three frames up) a function's self time came from.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const ProfileSchema = z.object({
  nodes: z.array(z.object({
    id: z.number(),
    callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
    children: z.array(z.number()).optional(),
  })),
  startTime: z.number(),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
});

type Frame = z.infer<typeof ProfileSchema>['nodes'][number]['callFrame'];

/** Which place a frame belongs to: a V8 entry, a Node internal, an npm package, or a folder of flowgate's code. */
export function placeOf(frame: Frame): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : rest[0] ?? url;
  }
  const own = /\/dist[^/]*\/((?:src|activities|workflows|temporal|test)(?:\/[^/]+)?)\//.exec(url);
  if (own?.[1]) return own[1];
  return url.replace(/^file:\/\//, '');
}

/** A frame's name for the tables: function, file and line. */
function nameOf(frame: Frame): string {
  const file = frame.url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules|dist[^/]*)\//, '$1/');
  return `${frame.functionName || '(anonymous)'} ${file}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
}

function main(): void {
  const [file, ...rest] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary <file.cpuprofile> [top] [--since=<seconds>]');
  const top = Number(rest.find((arg) => /^\d+$/.test(arg)) ?? 25);
  // --callers=<function name>: the stacks (three frames up) its self time came from
  const callersOf = rest.find((arg) => arg.startsWith('--callers='))?.slice('--callers='.length);
  const callers = new Map<string, number>();
  const since = Number(rest.find((arg) => arg.startsWith('--since='))?.slice('--since='.length) ?? 0) * 1e6;
  const profile = ProfileSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const places = new Map<string, number>();
  let time = profile.startTime;
  let sampled = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    time += delta;
    if (time - profile.startTime < since) return;
    const node = byId.get(id);
    if (!node) return;
    sampled += delta;
    const name = nameOf(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + delta);
    const place = placeOf(node.callFrame);
    places.set(place, (places.get(place) ?? 0) + delta);
    if (callersOf !== undefined && node.callFrame.functionName === callersOf) {
      const chain: string[] = [];
      for (let at = parent.get(id); at !== undefined && chain.length < 3; at = parent.get(at)) chain.push(nameOf(byId.get(at)!.callFrame));
      const key = chain.join(' < ');
      callers.set(key, (callers.get(key) ?? 0) + delta);
    }
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame || !/\/dist[^/]*\/(src|activities|temporal)\//.test(frame.url)) continue;
      const key = nameOf(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + delta);
    }
  });
  const busy = sampled - (places.get('(idle)') ?? 0);
  const share = (us: number, of: number): string => `${((100 * us) / of).toFixed(1).padStart(5)}%`;
  const table = (title: string, entries: Map<string, number>, of: number): void => {
    console.log(`\n${title}`);
    for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${share(us, of)}  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`);
  };
  console.log(`${file}: ${(sampled / 1e6).toFixed(1)} s sampled${since ? ` after the first ${since / 1e6} s` : ''}, ${(busy / 1e6).toFixed(1)} s not idle; shares of the time not idle`);
  places.delete('(idle)');
  self.delete(nameOf({ functionName: '(idle)', url: '', lineNumber: -1 }));
  table('by place (self time)', places, busy);
  table('functions by self time', self, busy);
  table("flowgate's own functions by total time (itself and what it called)", total, busy);
  if (callersOf !== undefined) table(`where ${callersOf}'s self time came from (three callers up)`, callers, busy);
}

if (require.main === module) main();
