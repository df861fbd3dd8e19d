/**
 * The fast layer's harness: a Worker with the real workflows bundle and typed fake activities
 * (fake-activities.ts) on its own task queue of the suite's Temporal dev server
 * (test/setup/root-hooks.ts). No gateway, no registry, no HTTP: a test starts a workflow with the
 * client, reads its state with the workflow contracts' queries and its result from Temporal.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker, type InjectedSinks } from '@temporalio/worker';
import type { Activities } from '../../../activities';
import type { MetricsSinks } from '../../../src/common/metrics-sinks';
import type { AlertSinks } from '../../../src/common/alerts';
import { runExecutionTimeoutMs } from '../../../src/common/run-time-limit';
import { ENGINE_LEVEL, type RunInput, type RunSummary } from '../../../src/common/run-types';
import { stateQuery, WORKFLOW_TYPES, type RunAutomationWorkflow } from '../../../src/common/workflow-contracts';
import { createLogger, silentLogger } from '../../../src/observability/logger';
import { ensureSearchAttributes } from '../../../temporal/client';
import { installRuntimeLogger } from '../../../temporal/runtime';
import { workflowBundle } from '../../../temporal/worker';
import { temporalAddress } from '../../setup/root-hooks';
export { eventually } from '../../support/eventually';
import { stepFileKey } from '../../../activities/run-step';
import { FAKE_ORG, fakeActivities, FakeWorld, runInputOf } from './fake-activities';

const noMetrics: InjectedSinks<MetricsSinks & AlertSinks> = {
  flowgateAlerts: { runEnded: { fn: () => undefined, callDuringReplay: false }, approvalWaiting: { fn: () => undefined, callDuringReplay: false } },
  flowgateMetrics: {
    runStarted: { fn: () => undefined, callDuringReplay: false },
    runEnded: { fn: () => undefined, callDuringReplay: false },
    approvalWaiting: { fn: () => undefined, callDuringReplay: false },
  },
};

/** A run's end: its summary (a failed run's comes from the failure's details) and the failure's message. */
export interface RunEnd {
  summary: RunSummary;
  /** the failure's message, when the run failed or timed out */
  error?: string;
  /** the failure's type (STEP_FAILED, RUN_TIMEOUT, …) */
  failureType?: string;
}

export class FastWorker {
  /** replaced per test (`beforeEach`); the activities read it at call time */
  world = new FakeWorld();
  /** activities a test answers itself, read at call time like `world` */
  overrides: Partial<Activities> = {};
  private running?: Promise<void>;

  private constructor(readonly client: Client, readonly taskQueue: string, private readonly connection: Connection,
    private readonly nativeConnection: NativeConnection, private readonly worker: Worker) {}

  static async start(): Promise<FastWorker> {
    // The SDK's own logs, as a test flowgate routes them (one Runtime per process: the first one installed wins).
    installRuntimeLogger(process.env.FLOWGATE_TEST_LOG ? createLogger('debug') : silentLogger);
    const address = temporalAddress();
    const nativeConnection = await NativeConnection.connect({ address });
    const connection = await Connection.connect({ address });
    const client = new Client({ connection, namespace: 'default' });
    // chained runs carry flowgate's search attributes, registered as flowgate registers them at start
    await ensureSearchAttributes(client, 'default');
    const started: { self?: FastWorker } = {};
    const current = (): Activities => {
      if (!started.self) throw new Error('the fast worker is not started');
      return fakeActivities(started.self.world, started.self.overrides);
    };
    // Each activity looks its fake up when called, so a test can swap the world between runs.
    const template = fakeActivities(new FakeWorld());
    const activities = Object.fromEntries(Object.keys(template).map((name) =>
      [name, (...args: unknown[]) => (current()[name as keyof Activities] as (...a: unknown[]) => unknown)(...args)]));
    const taskQueue = `fast-${randomUUID()}`;
    const worker = await Worker.create({
      connection: nativeConnection, namespace: 'default', taskQueue,
      workflowBundle: await workflowBundle(), activities, sinks: noMetrics,
      shutdownGraceTime: '1s', maxHeartbeatThrottleInterval: '400ms',
    });
    const self = new FastWorker(client, taskQueue, connection, nativeConnection, worker);
    started.self = self;
    self.running = worker.run();
    return self;
  }

  /** Starts a run of `definition` (parsed as a publish would) at today's engine level. */
  async startRun(definition: unknown, inputs: Record<string, unknown> = {}, fields: Partial<Omit<RunInput, 'definition'>> = {}): Promise<WorkflowHandle<RunAutomationWorkflow>> {
    const runId = fields.runId ?? `run_fast_${randomUUID()}`;
    const input: RunInput = { ...runInputOf(this.world, definition, { inputs, ...fields }), runId, engine: fields.engine ?? ENGINE_LEVEL };
    return this.client.workflow.start<RunAutomationWorkflow>(WORKFLOW_TYPES.runAutomation, {
      workflowId: runId, taskQueue: this.taskQueue, args: [input], workflowExecutionTimeout: runExecutionTimeoutMs(input.definition.timeoutSeconds),
    });
  }

  /** Runs `definition` to its end. */
  async run(definition: unknown, inputs: Record<string, unknown> = {}, fields: Partial<Omit<RunInput, 'definition'>> = {}): Promise<RunEnd & { runId: string }> {
    const handle = await this.startRun(definition, inputs, fields);
    return { runId: handle.workflowId, ...(await runEnd(handle)) };
  }

  /** The text of a step's output.txt (`address` is a step index or a nested step's path). */
  output(runId: string, address: number | string): string {
    return this.world.blobs.text(stepFileKey(FAKE_ORG, runId, address, 'output.txt'));
  }

  async stop(): Promise<void> {
    this.worker.shutdown();
    await this.running;
    await this.connection.close();
    await this.nativeConnection.close();
  }
}

/** Waits for a run's end: a failed run ends with its summary in the failure's details. */
export async function runEnd(handle: WorkflowHandle<RunAutomationWorkflow>): Promise<RunEnd> {
  try {
    return { summary: await handle.result() };
  } catch (err) {
    if (!(err instanceof WorkflowFailedError) || !(err.cause instanceof ApplicationFailure)) throw err;
    const summary = err.cause.details?.[0] as RunSummary | undefined;
    if (!summary) throw err;
    return { summary, error: err.cause.message, failureType: err.cause.type ?? undefined };
  }
}

/** The run's state as the `state` query answers it (what the gateway's status shows). */
export function stateOf(handle: WorkflowHandle<RunAutomationWorkflow>) {
  return handle.query(stateQuery);
}
