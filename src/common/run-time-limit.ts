/**
 * A run's time limit is its definition's `timeoutSeconds`, kept by the workflow itself
 * (workflows/run/time-limit.ts) so that a run over its limit ends TIMEOUT with its completion
 * callback sent. Temporal's workflow execution timeout is only a backstop this much later (for a
 * worker that cannot end the run itself).
 */
export const RUN_TIME_LIMIT_MARGIN_SECONDS = 60;

/** The workflow execution timeout (ms) of a run whose own limit is `limitSeconds`. */
export function runExecutionTimeoutMs(limitSeconds: number): number {
  return (limitSeconds + RUN_TIME_LIMIT_MARGIN_SECONDS) * 1000;
}
