/**
 * The worker wiring: the one place that joins workflows and activities.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } from '@temporalio/interceptors-opentelemetry-v2';
import { bundleWorkflowCode, Worker, type InjectedSinks, type NativeConnection, type WorkerInterceptors, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createActivities, type ActivityDependencies } from '../activities';
import type { DataConverter } from '@temporalio/common';
import { FAILURE_CONVERTER_PATH } from '../src/crypto/run-data-converter';
import type { FlowgateMetrics } from '../src/observability/metrics';
import type { Tracing } from '../src/observability/tracing';
import type { AlertSinks } from '../src/common/alerts';
import type { AlertNotifier } from '../src/runs/alerts';

export const WORKFLOWS_PATH = path.join(__dirname, '..', 'workflows', 'index.js');
/** Counts runs started and ended (the `flowgateMetrics` sink). */
export const METRICS_INTERCEPTORS_PATH = path.join(__dirname, '..', 'workflows', 'run', 'metrics-interceptors.js');
/** Temporal's OpenTelemetry workflow interceptors, gated by engine level: only in the bundle of a worker that traces. */
const OTEL_WORKFLOW_INTERCEPTORS_PATH = path.join(__dirname, '..', 'workflows', 'run', 'tracing-interceptors.js');

/** src/common as built (this file runs from dist/temporal/): the pure modules the workflows share with Node code. */
const COMMON_DIR = path.join(__dirname, '..', 'src', 'common');

/**
 * The modules loaded once into the reusable V8 context and shared by every run, instead of once
 * per run that the worker caches (the SDK evaluates every module a run imports again for that run,
 * and keeps them while the run is cached): jsonata, every module of src/common and every module of
 * workflows/ (through its entry and the metrics interceptors, which import the rest). Only modules
 * without per-run state belong here. The SDK freezes them (a run cannot change what another
 * reads), but a module-level variable a function assigns is not frozen: src/common and workflows/
 * keep none that depends on a run (expressions.ts keeps the shared jsonata it loaded; what a run
 * keeps beside its workflow function's variables lives on its own global object,
 * workflows/run/run-locals.ts). The tracing interceptors (workflows/run/tracing-interceptors.ts,
 * only in the bundle of a worker that traces) keep run state and stay per run.
 * Modules a cached run evaluates for itself: 164 with zod in the bundle, 69 without, 39 with
 * src/common shared, none with workflows/ shared too; the raw SDK worker of bench:compare: 9.
 */
export function sharedWorkflowModules(): string[] {
  const common = readdirSync(COMMON_DIR).filter((file) => file.endsWith('.js')).sort().map((file) => path.join(COMMON_DIR, file))
    // the schema modules (definition.ts, step-schema.ts, priority-schema.ts): no workflow uses them,
    // and preloading them would bring zod into the bundle (test/workflows/bundle.test.ts)
    .filter((file) => !readFileSync(file, 'utf8').includes('require("zod")'));
  return ['jsonata', ...common, WORKFLOWS_PATH, METRICS_INTERCEPTORS_PATH];
}

const bundles = new Map<boolean, Promise<WorkflowBundleWithSourceMap>>();
const quiet = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Bundles the workflows once per process (and flavour); restarting a worker reuses the bundle. */
export function workflowBundle(options: { tracing?: boolean } = {}): Promise<WorkflowBundleWithSourceMap> {
  const tracing = options.tracing ?? false;
  let bundle = bundles.get(tracing);
  if (!bundle) {
    bundle = bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH, logger: quiet,
      workflowInterceptorModules: [METRICS_INTERCEPTORS_PATH, ...(tracing ? [OTEL_WORKFLOW_INTERCEPTORS_PATH] : [])],
      // failures' messages and stack traces become sealed payloads in the sandbox too (src/common/failure-converter.ts)
      failureConverterPath: FAILURE_CONVERTER_PATH,
      // jsonata was the first (each cached run that used an expression kept its own copy: 1,000
      // paused runs went from +141..+184 to +69..+100 MiB); jsonata keeps no module-level state,
      // and reads Date and Math.random at call time
      preloadModules: sharedWorkflowModules(),
    });
    bundles.set(tracing, bundle);
  }
  return bundle;
}

/**
 * The longest a heartbeat waits before it is sent. The default (80% of the heartbeat timeout,
 * 8 s for steps) would also delay a cancellation by that long, since the server hands it to an
 * activity only in the answer to a heartbeat; a cancelled run's `http` step must stop within a
 * second. Costs one small call per running step every 400 ms.
 */
const HEARTBEAT_THROTTLE = '400ms';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** see FLOWGATE_WORKER_CACHED_WORKFLOWS */
  maxCachedWorkflows: number;
  /**
   * the old-generation heap limit of the thread that runs the workflows (src/config/worker-memory.ts);
   * unset: V8's default, which grows with the machine's memory
   */
  workflowHeapMb?: number | undefined;
  /** FLOWGATE_WORKER_WORKFLOW_TASK_SLOTS (unset: the SDK's default) */
  workflowTaskSlots?: number | undefined;
  /** FLOWGATE_WORKER_ACTIVITY_SLOTS (unset: the SDK's default) */
  activitySlots?: number | undefined;
  deps: ActivityDependencies;
  metrics?: FlowgateMetrics;
  /** set when this process traces: workflow and activity spans join the caller's trace */
  tracing?: Tracing;
  /** the run-data codec (src/crypto/payload-codec.ts): what the worker sends Temporal is sealed, what it reads is opened */
  dataConverter?: DataConverter;
  /** told of each run that ends (not on replay): the organization's alert rules (src/runs/alerts.ts) */
  alerts?: Pick<AlertNotifier, 'runEnded' | 'approvalWaiting'>;
}

export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const { tracing } = options;
  const interceptors: WorkerInterceptors = tracing
    ? { activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })] }
    : {};
  const sinks = {
    ...(options.metrics?.sinks() ?? noMetrics),
    ...alertSinks(options.alerts),
    ...(tracing ? { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) } : {}),
  };
  const bundle = await workflowBundle({ tracing: tracing !== undefined });
  return withThreadHeapLimit(options.workflowHeapMb, () => Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowBundle: bundle,
    // one thread with one reused V8 context (the SDK's default, said here because the heap limit
    // above is that thread's): the cache, not more threads, is what grows with the open runs
    reuseV8Context: true,
    workflowThreadPoolSize: 1,
    activities: createActivities(options.deps),
    interceptors,
    sinks,
    dataConverter: options.dataConverter,
    shutdownGraceTime: '5s',
    maxCachedWorkflows: options.maxCachedWorkflows,
    // Fewer workflow task slots leave more of a backlog in Temporal's matching, which orders it
    // fairly across organizations; a task a worker has taken waits behind every other it holds.
    // Unset by default: on 2 cores 4-16 slots did not shorten a quiet organization's run behind
    // another's flood (its wait moved into matching) and slowed the flood (docs/operations.md, "Capacity").
    ...(options.workflowTaskSlots === undefined ? {} : { maxConcurrentWorkflowTaskExecutions: options.workflowTaskSlots }),
    ...(options.activitySlots === undefined ? {} : { maxConcurrentActivityTaskExecutions: options.activitySlots, maxConcurrentLocalActivityExecutions: options.activitySlots }),
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
  }));
}

/**
 * The young generation's semi-space of the workflow thread (MiB): V8 sizes the young generation at
 * three of them, so 48 MiB on top of the old generation's limit (Node 26 would give it 96 by default).
 */
const WORKFLOW_SEMI_SPACE_MB = 16;

/**
 * Runs `create` with V8's `--max-old-space-size` set to `mb` (and the semi-space above), so that
 * the workflow thread the SDK starts inside it (it takes no `resourceLimits`) gets that heap limit
 * instead of V8's default, which is the main thread's (a sixth of the machine's memory, 4 GiB on
 * 24 GiB). The flags are process-wide and read when an isolate is created, so they are cleared
 * again once the thread has answered (`Worker.create` awaits that); this process's main heap keeps
 * the limit it started with. A thread flowgate starts itself in that window (a `code` step's
 * sandbox) gets the same limit, far above what it uses.
 */
async function withThreadHeapLimit<T>(mb: number | undefined, create: () => Promise<T>): Promise<T> {
  if (mb === undefined) return create();
  v8.setFlagsFromString(`--max-old-space-size=${mb}`);
  v8.setFlagsFromString(`--max-semi-space-size=${WORKFLOW_SEMI_SPACE_MB}`);
  try {
    return await create();
  } finally {
    // 0 is each flag's own default: an isolate's limits from its resourceLimits, else the machine's memory
    v8.setFlagsFromString('--max-old-space-size=0');
    v8.setFlagsFromString('--max-semi-space-size=0');
  }
}

/** A worker without metrics still answers the workflows' sink calls. */
const noMetrics = {
  flowgateMetrics: {
    runStarted: { fn: () => undefined, callDuringReplay: false },
    runEnded: { fn: () => undefined, callDuringReplay: false },
    approvalWaiting: { fn: () => undefined, callDuringReplay: false },
  },
};

/** The workflows' `flowgateAlerts` sink: a worker without alerts answers it too. */
function alertSinks(alerts: Pick<AlertNotifier, 'runEnded' | 'approvalWaiting'> | undefined): InjectedSinks<AlertSinks> {
  return {
    flowgateAlerts: {
      runEnded: { fn: (_info, ended) => alerts?.runEnded(ended), callDuringReplay: false },
      approvalWaiting: { fn: (_info, event) => alerts?.approvalWaiting(event), callDuringReplay: false },
    },
  };
}
