/**
 * The memo flowgate keeps on every run: enough to authorize and describe it without a worker.
 * Pure, so the workflow can build it for the runs it chains.
 */
import type { StepType } from './definition';
import type { RunInput, RunOrigin } from './run-types';

/** A type, not an interface: Temporal takes a memo as a Record, and a type of an object literal fits one. */
export type RunMemo = {
  orgId: string;
  automationId: string;
  automationVersion: number;
  automationName: string;
  triggerId: string;
  startedBy: string;
  started: string;
  stepMap: Record<string, number>;
  steps: { name: string; type: StepType }[];
  parentRunId?: string;
  /** the run names a completion callback URL (the URL itself is not kept here) */
  callback?: boolean;
  /** started by an operator from another run (rerun or resume) */
  origin?: RunOrigin;
  /** runs started by a trigger's schedule; their `started` is the workflow's start time (run-service view) */
  type?: 'SCHEDULE';
  /** the schedule revision (registry) whose action started the run */
  scheduleRevision?: number;
  /** set by the workflow when the run ends TIMEOUT (Temporal's status is then Failed): run lists read it */
  endedAs?: 'TIMEOUT';
  /** started by a task-augmented workflow-tool call: the MCP task's ttl (ms); past it the task is unknown (the run stays) */
  taskTtlMs?: number;
  /** the source commit the run's version was applied from (definitions as code) */
  sourceCommit?: string;
  /** how many concurrency limits the run takes a slot of before it starts (RunInput.slots; issue 36) */
  slots?: number;
};

export function buildRunMemo(input: Omit<RunInput, 'runId'>): RunMemo {
  return {
    orgId: input.orgId, automationId: input.automationId, automationVersion: input.automationVersion,
    automationName: input.automationName, triggerId: input.triggerId, startedBy: input.startedBy, started: input.started,
    stepMap: input.stepMap, steps: input.definition.steps.map((s) => ({ name: s.name, type: s.type })),
    ...(input.parentRunId ? { parentRunId: input.parentRunId } : {}),
    ...(input.callback ? { callback: true } : {}),
    ...(input.origin ? { origin: input.origin } : {}),
    ...(input.type ? { type: input.type } : {}),
    ...(input.slots ? { slots: input.slots.claims.length } : {}),
    ...(input.sourceCommit ? { sourceCommit: input.sourceCommit } : {}),
  };
}
