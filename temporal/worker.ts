/**
 * The worker wiring: the one place that joins workflows and activities.
 */
import path from 'node:path';
import { bundleWorkflowCode, Worker, type NativeConnection, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createActivities, type ActivityDependencies } from '../activities';

export const WORKFLOWS_PATH = path.join(__dirname, '..', 'workflows', 'index.js');

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** Bundles the workflows once per process; restarting a worker reuses the bundle. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined } });
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
  deps: ActivityDependencies;
}

export async function createWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities(options.deps),
    shutdownGraceTime: '5s',
    maxCachedWorkflows: options.maxCachedWorkflows,
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
  });
}
