/**
 * A run's time limit is its definition's `timeoutSeconds`, kept by the workflow itself
 * (workflows/run/time-limit.ts) so that a run over its limit ends TIMEOUT with its completion
 * callback sent. Temporal's workflow execution timeout is only a backstop this much later (for a
 * worker that cannot end the run itself).
 */
import { HOLD_MAX_WAIT_SECONDS } from './run-holds';

export const RUN_TIME_LIMIT_MARGIN_SECONDS = 60;

/** The workflow execution timeout (ms) of a run whose own limit is `limitSeconds`. */
export function runExecutionTimeoutMs(limitSeconds: number): number {
  return (limitSeconds + RUN_TIME_LIMIT_MARGIN_SECONDS) * 1000;
}

/**
 * How long a run may live before its limit starts counting and then end: its own limit, the most
 * it may wait for concurrency slots, and for a run started under a paused workflow or trigger the
 * most it may wait for the unpause (HOLD_MAX_WAIT_SECONDS).
 */
export function runLifetimeSeconds(input: { definition: { timeoutSeconds: number }; slots?: { maxWaitSeconds: number }; hold?: object }): number {
  return input.definition.timeoutSeconds + (input.slots?.maxWaitSeconds ?? 0) + (input.hold ? HOLD_MAX_WAIT_SECONDS : 0);
}
