/**
 * `npm run bench:scale` (issue 48): the scale curve of flowgate on the production-shaped Temporal
 * (the embedded one on PostgreSQL), beside a raw TypeScript-SDK worker doing the same steps on the
 * same server, the same load with two gateways and two workers, two tenants (one floods, the other's
 * synchronous calls are timed against its idle ones), and the same curve on the dev server.
 *
 * Each curve is an open loop at stepped offered rates (runs/s, the three workflows in turn: one
 * template step, five, a forEach of ten items at concurrency 10), each step bounded in time and
 * count, stopping once a step is past the knee. The knee is the highest rate at which the runs'
 * trigger-to-COMPLETE p99 stays under 1 s and Temporal's schedule-to-start p99 under 200 ms.
 *
 * Knobs: BENCH_RATES (runs/s, comma-separated; 2,4,8,16), BENCH_STEP_SECONDS (10: how long each
 * rate is offered), BENCH_STEP_MAX (200 calls a step at most), BENCH_DRAIN_SECONDS (20: how long a
 * step's runs may take to close after the last call), BENCH_PAST_KNEE (1: steps run past the
 * knee), BENCH_SHARDS (4: the history shards of the production-shaped Temporal), BENCH_FLOOD (2000:
 * the flooding tenant's runs), BENCH_QUIET_CALLS (20), BENCH_ORG_MAX_RUNNING (unset: the tenants'
 * gateway runs without FLOWGATE_ORG_MAX_RUNNING), BENCH_TENANT_RATE (the loading tenant's rate when
 * no curve ran before the tenants: BENCH_PHASES=tenants), BENCH_PHASES (flowgate,raw,scale-out,tenants,dev:
 * which to run, in that order).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { Agent, request } from 'undici';
import { spread, runStep, KINDS, type Kind, type Starter, type StepFigures } from './scale-load';
import { cpuMs, percentile, quantileBetween, scrape, tableStats, total, type Metrics, type TableStats } from './scale-meters';
import { Deployment, INPUTS, makeTenant, RAW_TASK_QUEUE, startRawWorker, startTemporal, TASK_QUEUE, type Tenant, type TemporalUnderTest } from './scale-stack';
import { TEST_POSTGRES_URL } from '../support/registry-dialects';

const env = process.env;
const RATES = (env.BENCH_RATES ?? '2,4,8,16').split(',').map(Number).filter((n) => n > 0);
const STEP_SECONDS = Number(env.BENCH_STEP_SECONDS ?? 10);
const STEP_MAX = Number(env.BENCH_STEP_MAX ?? 200);
const DRAIN_SECONDS = Number(env.BENCH_DRAIN_SECONDS ?? 20);
const PAST_KNEE = Number(env.BENCH_PAST_KNEE ?? 1);
const SHARDS = Number(env.BENCH_SHARDS ?? 4);
const FLOOD = Number(env.BENCH_FLOOD ?? 2000);
const QUIET_CALLS = Number(env.BENCH_QUIET_CALLS ?? 20);
const PHASES = new Set((env.BENCH_PHASES ?? 'flowgate,raw,scale-out,tenants,dev').split(','));
const P99_LIMIT_MS = 1000;
const SCHEDULE_TO_START_LIMIT_MS = 200;

/** The processes whose CPU a step reads, by name. */
type Processes = Record<string, () => number[]>;

interface Row {
  label: string;
  figures: StepFigures;
  /** ms */
  workflowS2S?: number;
  activityS2S?: number;
  syncMatch?: number;
  cpuPerRun: Record<string, number>;
  coresUsed: Record<string, number>;
  actionsPerRun: number;
  transitionsPerRun: number;
  pgRowsPerRun: number;
  pgKiBPerRun: number;
  load: number;
  knee: boolean;
}

/** The server's metrics name a task queue with `-` made `_`; sticky queues carry the same name (partition `__sticky__`). */
const onQueue = (queue: string) => (labels: Record<string, string>): boolean => labels.taskqueue === queue.replace(/[^A-Za-z0-9]/g, '_');
const inNamespace = (labels: Record<string, string>): boolean => labels.namespace === 'default';

function s2s(before: Metrics, after: Metrics, taskType: 'Workflow' | 'Activity', queue: string): number | undefined {
  // history's task_schedule_to_start_latency (seconds, recorded as a task starts), by task type; sticky queues included
  const seconds = quantileBetween(before, after, 'task_schedule_to_start_latency', 0.99, (l) => l.task_type === taskType && onQueue(queue)(l));
  return seconds === undefined ? undefined : seconds * 1000;
}

async function measureStep(label: string, rate: number, start: Starter, client: Client, temporal: TemporalUnderTest, processes: Processes, queue: string): Promise<Row> {
  const cpuBefore = Object.fromEntries(Object.entries(processes).map(([name, pids]) => [name, pids().reduce((sum, pid) => sum + cpuMs(pid), 0)]));
  const metricsBefore = await scrape(temporal.server.metricsUrl);
  const tablesBefore: TableStats = await tableStats(TEST_POSTGRES_URL, temporal.databases);
  const wallBegan = performance.now();
  const figures = await runStep({ rate, seconds: STEP_SECONDS, maxCount: STEP_MAX, drainSeconds: DRAIN_SECONDS, start, client });
  const wallMs = performance.now() - wallBegan;
  const cpuPerRun: Record<string, number> = {};
  const coresUsed: Record<string, number> = {};
  const runs = Math.max(1, figures.completed);
  for (const [name, pids] of Object.entries(processes)) {
    const spent = pids().reduce((sum, pid) => sum + cpuMs(pid), 0) - (cpuBefore[name] ?? 0);
    cpuPerRun[name] = spent / runs;
    coresUsed[name] = spent / wallMs;
  }
  // PostgreSQL publishes a backend's table counters within a second or so of its transactions
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const metricsAfter = await scrape(temporal.server.metricsUrl);
  if (env.BENCH_DUMP_METRICS) {
    const names = new Map<string, string>();
    for (const sample of metricsAfter) if (new RegExp(env.BENCH_DUMP_METRICS).test(sample.name)) names.set(sample.name, JSON.stringify(sample.labels));
    for (const [name, labels] of names) console.log(`    metric ${name} ${labels}`);
  }
  const tablesAfter = await tableStats(TEST_POSTGRES_URL, temporal.databases);
  const polls = total(metricsAfter, 'poll_success', onQueue(queue)) - total(metricsBefore, 'poll_success', onQueue(queue));
  const syncPolls = total(metricsAfter, 'poll_success_sync', onQueue(queue)) - total(metricsBefore, 'poll_success_sync', onQueue(queue));
  const row: Row = {
    label, figures, cpuPerRun, coresUsed,
    workflowS2S: s2s(metricsBefore, metricsAfter, 'Workflow', queue),
    activityS2S: s2s(metricsBefore, metricsAfter, 'Activity', queue),
    syncMatch: polls > 0 ? syncPolls / polls : undefined,
    actionsPerRun: (total(metricsAfter, 'action', inNamespace) - total(metricsBefore, 'action', inNamespace)) / runs,
    // one sample per update of a workflow's state (its value is the running total, not this update's)
    transitionsPerRun: (total(metricsAfter, 'state_transition_count_count', inNamespace) - total(metricsBefore, 'state_transition_count_count', inNamespace)) / runs,
    pgRowsPerRun: (tablesAfter.rows - tablesBefore.rows) / runs,
    pgKiBPerRun: (tablesAfter.bytes - tablesBefore.bytes) / 1024 / runs,
    load: os.loadavg()[0]!,
    knee: false,
  };
  const p99 = percentile(figures.allCompleteMs, 99);
  row.knee = p99 < P99_LIMIT_MS && (row.workflowS2S ?? 0) < SCHEDULE_TO_START_LIMIT_MS && (row.activityS2S ?? 0) < SCHEDULE_TO_START_LIMIT_MS;
  printRow(row);
  return row;
}

const ms = (v: number | undefined): string => (v === undefined ? '-' : Number.isFinite(v) ? v.toFixed(0) : '∞');

function printRow(r: Row): void {
  const f = r.figures;
  const errors = [...f.errors].map(([what, n]) => `${n}x ${what}`).join('; ');
  console.log(`  ${r.label} @ ${f.rate}/s: ${f.completed}/${f.offered} completed, ${f.completedPerSecond.toFixed(1)} runs/s; run p99 ${ms(percentile(f.allCompleteMs, 99))} ms; ${r.knee ? 'within' : 'PAST'} the knee's limits (load ${r.load.toFixed(1)})`);
  for (const kind of KINDS) console.log(`    ${kind.padEnd(10)} answer p50/p95/p99 ${spread(f.byKind[kind].answerMs)} ms, COMPLETE ${spread(f.byKind[kind].completeMs)} ms`);
  console.log(`    schedule-to-start p99: workflow ${ms(r.workflowS2S)} ms, activity ${ms(r.activityS2S)} ms; sync match ${r.syncMatch === undefined ? '-' : `${(r.syncMatch * 100).toFixed(0)}%`}`);
  console.log(`    CPU ms per run: ${Object.entries(r.cpuPerRun).map(([n, v]) => `${n} ${v.toFixed(1)}`).join(', ')} (cores used: ${Object.entries(r.coresUsed).map(([n, v]) => `${n} ${v.toFixed(2)}`).join(', ')})`);
  console.log(`    per run: ${r.actionsPerRun.toFixed(1)} actions, ${r.transitionsPerRun.toFixed(1)} state transitions, ${r.pgRowsPerRun.toFixed(0)} PostgreSQL rows, ${r.pgKiBPerRun.toFixed(0)} KiB${errors ? `; errors: ${errors}` : ''}`);
}

/** Steps through RATES until PAST_KNEE steps past the knee; the rows. */
async function curve(label: string, start: Starter, client: Client, temporal: TemporalUnderTest, processes: Processes, queue: string): Promise<Row[]> {
  console.log(`\n${label}`);
  const rows: Row[] = [];
  let past = 0;
  for (const rate of RATES) {
    const row = await measureStep(label, rate, start, client, temporal, processes, queue);
    rows.push(row);
    if (!row.knee && ++past >= PAST_KNEE) break;
  }
  const knee = [...rows].reverse().find((r) => r.knee);
  const last = rows.at(-1)!;
  const busiest = Object.entries(last.coresUsed).sort((a, b) => b[1] - a[1])[0];
  console.log(`  knee (${label}): ${knee ? `${knee.figures.rate} runs/s offered, ${knee.figures.completedPerSecond.toFixed(1)} completed/s` : `below ${RATES[0]} runs/s`}; at ${last.figures.rate}/s the busiest process is ${busiest?.[0]} at ${busiest?.[1].toFixed(2)} cores, ours together ${Object.values(last.coresUsed).reduce((a, b) => a + b, 0).toFixed(2)} of the machine's ${os.cpus().length} (load average ${last.load.toFixed(1)})`);
  return rows;
}

function flowgateStarter(deployment: Deployment, tenant: Tenant): Starter {
  let next = 0;
  return async (kind: Kind) => {
    const gateways = deployment.gateways();
    const gateway = gateways[next++ % gateways.length]!;
    const response = await fetch(`${gateway.url}/ext/triggers/${tenant.triggers[kind]}`, {
      method: 'POST', headers: { 'X-API-KEY': tenant.apiKey, 'Content-Type': 'application/json' }, body: INPUTS,
    });
    const runId = response.headers.get('X-Pf-Run-Id');
    await response.arrayBuffer();
    if (response.status !== 200 || !runId) throw new Error(`trigger answered ${response.status}`);
    return runId;
  };
}

const RAW_TYPES: Record<Kind, string> = { 'one-step': 'rawScaleOne', 'five-step': 'rawScaleFive', 'forEach-10': 'rawScaleForEach' };

function rawStarter(client: Client): Starter {
  return async (kind: Kind) => {
    const handle = await client.workflow.start(RAW_TYPES[kind], { taskQueue: RAW_TASK_QUEUE, workflowId: `raw-${randomUUID()}`, args: ['bench'] });
    return handle.workflowId;
  };
}

function settings(temporal: TemporalUnderTest, shape: string): void {
  console.log(`settings: ${shape}; history shards ${temporal.databases.length > 0 ? SHARDS : 1}; fairness ${temporal.server.fairness ? 'on' : 'off'}; Temporal's PostgreSQL pool 20 connections a store; `
    + `worker: the TypeScript SDK's default slots and pollers, FLOWGATE_WORKER_CACHED_WORKFLOWS default; Node ${process.version}; eager start for synchronous calls only (these are asynchronous); `
    + `rates ${RATES.join(',')} runs/s, ${STEP_SECONDS} s or ${STEP_MAX} calls a step, ${DRAIN_SECONDS} s drain; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)} at start`);
}

async function main(): Promise<void> {
  const temporal = await startTemporal('postgres', SHARDS);
  const connection = await Connection.connect({ address: temporal.server.address });
  const client = new Client({ connection, namespace: 'default' });
  const temporalPid = (): number[] => [temporal.server.pid()].flatMap((p) => (p === undefined ? [] : [p]));
  const deployment = await Deployment.create(temporal.server.address);
  const rows: Record<string, Row[]> = {};
  try {
    settings(temporal, 'the production-shaped Temporal (PostgreSQL)');
    await deployment.add('worker');
    const gateway = await deployment.add('gateway');
    const tenant = await makeTenant(gateway.url!, deployment.secrets.FLOWGATE_ADMIN_TOKEN);
    const fgProcesses: Processes = { gateway: () => deployment.pids('gateway'), worker: () => deployment.pids('worker'), temporal: temporalPid, generator: () => [process.pid] };
    if (PHASES.has('flowgate')) rows.flowgate = await curve('flowgate, 1 gateway + 1 worker', flowgateStarter(deployment, tenant), client, temporal, fgProcesses, TASK_QUEUE);
    if (PHASES.has('raw')) {
      const raw = await startRawWorker(temporal.server.address);
      try {
        rows.raw = await curve('raw TypeScript SDK worker', rawStarter(client), client, temporal, { worker: () => (raw.pid ? [raw.pid] : []), temporal: temporalPid, generator: () => [process.pid] }, RAW_TASK_QUEUE);
      } finally {
        raw.kill('SIGTERM');
      }
    }
    if (PHASES.has('scale-out')) {
      await deployment.add('worker');
      await deployment.add('gateway');
      rows.scaleOut = await curve('flowgate, 2 gateways + 2 workers', flowgateStarter(deployment, tenant), client, temporal, fgProcesses, TASK_QUEUE);
    }
    printRatios(rows);
    // the quiet tenant at the knee: of the deployment the tenants share (two gateways and two
    // workers once scale-out ran), else BENCH_TENANT_RATE
    const kneeRate = kneeOf(PHASES.has('scale-out') ? rows.scaleOut : rows.flowgate)?.figures.rate ?? (env.BENCH_TENANT_RATE ? Number(env.BENCH_TENANT_RATE) : undefined);
    if (PHASES.has('tenants')) await tenants(deployment, client, kneeRate);
  } finally {
    await deployment.stop();
    await connection.close();
    await temporal.stop();
  }
  if (PHASES.has('dev')) await devServerLine();
}

/** The curve's knee: its highest step within the limits. */
function kneeOf(list: Row[] | undefined): Row | undefined {
  return [...(list ?? [])].reverse().find((r) => r.knee);
}

function printRatios(rows: Record<string, Row[]>): void {
  const fg = kneeOf(rows.flowgate);
  const raw = kneeOf(rows.raw);
  if (fg && raw) {
    const first = (list: Row[] | undefined): Row | undefined => list?.[0];
    const f0 = first(rows.flowgate)!;
    const r0 = first(rows.raw)!;
    const cpu = (r: Row): number => (r.cpuPerRun.gateway ?? 0) + (r.cpuPerRun.worker ?? 0) + (r.cpuPerRun.temporal ?? 0);
    console.log(`\nratio to raw Temporal on the same server: knee ${fg.figures.rate} vs ${raw.figures.rate} runs/s (${(fg.figures.rate / raw.figures.rate).toFixed(2)}x); `
      + `at ${f0.figures.rate}/s CPU per run (gateway+worker+temporal) ${cpu(f0).toFixed(1)} vs ${cpu(r0).toFixed(1)} ms (${(cpu(f0) / cpu(r0)).toFixed(2)}x); `
      + `actions per run ${f0.actionsPerRun.toFixed(1)} vs ${r0.actionsPerRun.toFixed(1)}; state transitions ${f0.transitionsPerRun.toFixed(1)} vs ${r0.transitionsPerRun.toFixed(1)}`);
    const actions = f0.actionsPerRun;
    if (actions > 0) console.log(`a Temporal Cloud namespace's default 500 actions/s buys about ${(500 / actions).toFixed(0)} flowgate runs/s of this mix`);
  }
}

/**
 * The quiet tenant's own HTTP client: two tenants are two callers, each with its connections. Sharing
 * the generator's one pool, a quiet call made just after the flood's 2,000 found every idle
 * connection taken and opened a new one, which waited in the gateway's full listen backlog (TCP's
 * retries: seconds), so the quiet tenant's p99 measured the shared client, not flowgate.
 */
const quietClient = new Agent({ keepAliveTimeout: 60_000 });

/** A synchronous one-step call of the quiet tenant: ms until its answer. */
async function syncCall(base: string, tenant: Tenant): Promise<number> {
  const began = performance.now();
  // a call the gateway did not even accept (its backlog full of the flood's connections) counts as unanswered
  const response = await request(`${base}/ext/triggers/${tenant.triggers['one-step']}`, {
    method: 'POST', headers: { 'X-API-KEY': tenant.apiKey, 'Content-Type': 'application/json', 'x-api-wait': 'true' }, body: INPUTS, dispatcher: quietClient,
  }).catch(() => undefined);
  if (!response) return Infinity;
  await response.body.arrayBuffer();
  return response.statusCode === 200 ? performance.now() - began : Infinity;
}

/**
 * One tenant loads the deployment, the other's synchronous calls are timed against its idle ones:
 * first at the knee (the loading tenant offers the knee's rate of the curve's mix for twice a
 * step's time, the quiet tenant's calls spread over it), then in a flood (FLOOD runs at once, far
 * past the knee).
 */
async function tenants(deployment: Deployment, client: Client, kneeRate: number | undefined): Promise<void> {
  const limit = env.BENCH_ORG_MAX_RUNNING;
  const gateway = limit ? await deployment.add('gateway', { FLOWGATE_ORG_MAX_RUNNING: limit }) : deployment.gateways()[0]!;
  const base = gateway.url!;
  console.log(`\ntwo tenants: one offers the knee's rate, then floods with ${FLOOD} runs at once; the other makes ${QUIET_CALLS} synchronous one-step calls idle, at the knee and in the flood${limit ? ` (FLOWGATE_ORG_MAX_RUNNING=${limit})` : ''}`);
  const flooding = await makeTenant(base, deployment.secrets.FLOWGATE_ADMIN_TOKEN, 'flooding');
  const quiet = await makeTenant(base, deployment.secrets.FLOWGATE_ADMIN_TOKEN, 'quiet');
  for (let i = 0; i < 3; i++) await syncCall(base, quiet);
  const idle: number[] = [];
  for (let i = 0; i < QUIET_CALLS; i++) idle.push(await syncCall(base, quiet));
  const ratio = (v: number[]): string => `${(percentile(v, 99) / percentile(idle, 99)).toFixed(1)}x its idle p99; target 3x`;
  if (kneeRate === undefined) {
    console.log('  at the knee: not measured (no knee: run the flowgate or scale-out phase first, or set BENCH_TENANT_RATE)');
  } else {
    const seconds = STEP_SECONDS * 2;
    const load = runStep({ rate: kneeRate, seconds, maxCount: Math.ceil(kneeRate * seconds), drainSeconds: DRAIN_SECONDS, start: flowgateStarter(deployment, flooding), client });
    const atKnee: number[] = [];
    const began = performance.now();
    for (let i = 0; i < QUIET_CALLS; i++) {
      const due = began + ((i + 0.5) * seconds * 1000) / QUIET_CALLS;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      atKnee.push(await syncCall(base, quiet));
    }
    const figures = await load;
    const p = (v: number[], q: number): string => ms(percentile(v, q));
    console.log(`  at the knee (the other organization offers ${kneeRate} runs/s of the curve's mix for ${seconds} s: ${figures.completed}/${figures.offered} completed, run p99 ${ms(percentile(figures.allCompleteMs, 99))} ms): `
      + `quiet tenant idle p50 ${p(idle, 50)} ms, p99 ${p(idle, 99)} ms; at the knee p50 ${p(atKnee, 50)} ms, p99 ${p(atKnee, 99)} ms (${ratio(atKnee)}); ${atKnee.filter((v) => !Number.isFinite(v)).length} of ${QUIET_CALLS} not answered 200`);
  }
  const statuses = new Map<number, number>();
  const floodBegan = performance.now();
  const flood = Promise.all(Array.from({ length: FLOOD }, async () => {
    const response = await fetch(`${base}/ext/triggers/${flooding.triggers['one-step']}`, {
      method: 'POST', headers: { 'X-API-KEY': flooding.apiKey, 'Content-Type': 'application/json' }, body: INPUTS,
    }).catch(() => undefined);
    await response?.arrayBuffer();
    const status = response?.status ?? 0;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  })).then(() => performance.now() - floodBegan);
  const loaded: number[] = [];
  for (let i = 0; i < QUIET_CALLS; i++) loaded.push(await syncCall(base, quiet));
  const acceptedMs = await flood;
  const p = (v: number[], q: number): string => ms(percentile(v, q));
  console.log(`  in a flood of ${FLOOD} runs at once (far past the knee): quiet tenant idle p50 ${p(idle, 50)} ms, p99 ${p(idle, 99)} ms; during the flood p50 ${p(loaded, 50)} ms, p99 ${p(loaded, 99)} ms `
    + `(${ratio(loaded)}); ${loaded.filter((v) => !Number.isFinite(v)).length} of ${QUIET_CALLS} not answered 200`);
  console.log(`  the quiet tenant's calls during the flood, in order (ms): ${loaded.map((v) => ms(v)).join(' ')}`);
  console.log(`  the flood's ${FLOOD} calls answered within ${(acceptedMs / 1000).toFixed(1)} s: ${[...statuses].map(([s, n]) => `${n}x ${s}`).join(', ')}`);
}

/** The flowgate curve once more on the dev server (SQLite), one gateway and one worker. */
async function devServerLine(): Promise<void> {
  const temporal = await startTemporal('dev', 1);
  const connection = await Connection.connect({ address: temporal.server.address });
  const client = new Client({ connection, namespace: 'default' });
  const deployment = await Deployment.create(temporal.server.address);
  try {
    settings(temporal, '\nthe dev server (SQLite)');
    await deployment.add('worker');
    const gateway = await deployment.add('gateway');
    const tenant = await makeTenant(gateway.url!, deployment.secrets.FLOWGATE_ADMIN_TOKEN);
    const processes: Processes = { gateway: () => deployment.pids('gateway'), worker: () => deployment.pids('worker'), temporal: () => [temporal.server.pid()].flatMap((p) => (p === undefined ? [] : [p])), generator: () => [process.pid] };
    await curve('flowgate on the dev server, 1 gateway + 1 worker', flowgateStarter(deployment, tenant), client, temporal, processes, TASK_QUEUE);
  } finally {
    await deployment.stop();
    await connection.close();
    await temporal.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
