/**
 * Holds on new runs (issue 54): an operator pauses a whole workflow or trigger, and every run
 * prepared meanwhile starts with `hold` in its input and waits PENDING before its first step
 * (workflows/run/operator-pause.ts) until the unpause's release fan-out
 * (workflows/release-held-runs.ts) signals it. The shapes the gateway, the release workflow and
 * its activity share. Sandbox-safe: types and constants only.
 */
import type { RunHold } from './run-types';

export const HOLD_SCOPES = ['workflow', 'trigger'] as const;
export type HoldScope = RunHold['scope'];

/**
 * How long a held run may wait before Temporal's execution timeout backstop ends it (its own time
 * limit counts from its first step): a week. A run held longer ends TIMED_OUT.
 */
export const HOLD_MAX_WAIT_SECONDS = 7 * 86_400;

/**
 * When the release fan-out looks for held runs, in seconds after the unpause: at once, then twice
 * more for a run whose start was under way at the unpause or that visibility listed late.
 */
export const RELEASE_SWEEPS_SECONDS = [0, 10, 60] as const;

/** What the release workflow is started with (its ID: releaseWorkflowId). */
export interface ReleaseInput {
  orgId: string;
  scope: HoldScope;
  /** the workflow's or the trigger's ID */
  targetId: string;
  /** ISO 8601 UTC: when the lifted hold began (only runs started since can hold it) */
  since: string;
  by: string;
}

/** One sweep's outcome (the signalHeldRuns activity). */
export interface ReleaseSweep {
  /** the open runs started since the hold began that were signalled */
  signalled: number;
  /** the workflow or trigger is paused again: the release stops (the runs it would signal hold the new pause) */
  pausedAgain: boolean;
}

export interface ReleaseResult {
  sweeps: number;
  signalled: number;
  pausedAgain: boolean;
}

/** The release workflow of one workflow's or trigger's hold: a new unpause replaces a release still sweeping. */
export function releaseWorkflowId(orgId: string, scope: HoldScope, targetId: string): string {
  return `release-${scope}-${orgId}-${targetId}`;
}
