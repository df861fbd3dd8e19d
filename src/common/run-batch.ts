/**
 * Bulk actions on runs selected by a filter (issue 54): the shapes the gateway, the batch workflow
 * (workflows/run-batch.ts) and its activities (activities/run-batch.ts) share. Sandbox-safe: types
 * and constants only.
 */
import type { RunStatus } from './run-types';

export const BATCH_ACTIONS = ['cancel', 'rerun', 'resume', 'pause', 'unpause'] as const;
export type BatchAction = (typeof BATCH_ACTIONS)[number];

/** Which runs a batch acts on; every field given must match (docs/operations.md). */
export interface BatchFilter {
  workflowId?: string;
  triggerId?: string;
  status?: RunStatus;
  /** started at or after this instant (ISO 8601) */
  startedAfter?: string;
  /** started before this instant (ISO 8601) */
  startedBefore?: string;
  /** the run's error message contains this text (case-insensitive); only ended runs have one */
  errorContains?: string;
  /**
   * fields of the run's inputs: each dotted path (`customer.id`, `items.0.sku`) must hold exactly
   * this value. Temporal visibility cannot read inputs (they may be sealed): the candidates the
   * other fields select are read one by one, at most INPUT_SCAN_MAX of them
   */
  input?: Record<string, InputMatch>;
}

/** A value an input field is matched against (equality). */
export type InputMatch = string | number | boolean | null;

/** The most candidate runs whose inputs a selection reads (docs/operations.md, "Bulk actions"). */
export const INPUT_SCAN_MAX = 2000;

/** The value at a dotted path of `inputs` (undefined: there is none). */
export function inputAt(inputs: unknown, path: string): unknown {
  let at: unknown = inputs;
  for (const key of path.split('.')) {
    if (typeof at !== 'object' || at === null || !Object.hasOwn(at, key)) return undefined;
    at = Object.getOwnPropertyDescriptor(at, key)?.value;
  }
  return at;
}

/** Whether `inputs` hold every field of `match`. */
export function inputsMatch(inputs: unknown, match: Record<string, InputMatch>): boolean {
  return Object.entries(match).every(([path, value]) => inputAt(inputs, path) === value);
}

/** How many runs a batch takes when it names no `limit`, and the most it may name. */
export const BATCH_LIMIT_DEFAULT = 100;
export const BATCH_LIMIT_MAX = 1000;
/** A batch that would touch more runs than this needs `confirm: true` (the answer without it is 409 confirmation_required). */
export const BATCH_CONFIRM_ABOVE = 20;
/** How many runs a batch acts on at once. */
export const BATCH_CONCURRENCY = 5;

/** What the batch workflow is started with (its workflow ID is the batch ID). */
export interface BatchInput {
  batchId: string;
  orgId: string;
  action: BatchAction;
  filter: BatchFilter;
  limit: number;
  /** who asked (`member:<id>`, `admin`): the actor of pauses, and the audit trail's */
  by: string;
  reason?: string;
  /** ISO 8601 UTC: when the gateway accepted it */
  requested: string;
}

/** What became of the action on one run. */
export interface BatchRunOutcome {
  runId: string;
  /** succeeded: the action was taken; refused: the run does not allow it (a code says why); failed: an error */
  outcome: 'succeeded' | 'refused' | 'failed';
  /** rerun and resume: the new run */
  newRunId?: string;
  code?: string;
  message?: string;
}

export interface BatchState {
  batchId: string;
  action: BatchAction;
  filter: BatchFilter;
  limit: number;
  by: string;
  requested: string;
  /** LISTING: selecting the runs; RUNNING: acting on them; COMPLETE: every selected run has its outcome */
  status: 'LISTING' | 'RUNNING' | 'COMPLETE';
  /** the runs selected (known once LISTING is over) */
  total: number;
  succeeded: number;
  refused: number;
  failed: number;
  /** one per run acted on so far, in the order they finished */
  outcomes: BatchRunOutcome[];
}

/** A batch ID: `batch-` and a UUID; the gateway refuses any other as unknown. */
export const BATCH_ID = /^batch-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
