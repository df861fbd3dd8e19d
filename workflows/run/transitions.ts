/**
 * Step status changes of a run, recorded as they happen, for the live status stream (SSE ids are
 * their `seq`). Each step's `status` becomes an accessor that logs every change, so any code that
 * sets a step's status is recorded without knowing about it. Pure bookkeeping in workflow memory:
 * no commands, so histories recorded before it replay unchanged (replay rebuilds the same log).
 */
import type { RunState, StepStatus, StepTransition } from '../../src/common/run-types';

/** Transitions kept in state (a polling `tool` step pauses and resumes on every poll). */
export const TRANSITIONS_KEPT = 1000;

export function trackTransitions(state: RunState): void {
  const log: StepTransition[] = [];
  state.transitions = log;
  let seq = 0;
  for (const [key, step] of Object.entries(state.steps)) {
    let status: StepStatus = step.status;
    Object.defineProperty(step, 'status', {
      enumerable: true,
      configurable: true,
      get: () => status,
      set: (next: StepStatus) => {
        if (next === status) return;
        status = next;
        log.push({ seq: ++seq, stepIndex: Number(key), status: next, at: new Date().toISOString() });
        if (log.length > TRANSITIONS_KEPT) log.splice(0, log.length - TRANSITIONS_KEPT);
      },
    });
  }
}
