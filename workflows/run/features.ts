/**
 * Which of the workflow code's history-changing revisions apply to this run.
 *
 * Every change that alters the commands a run issues is gated, so that an open run started
 * before the change replays: `patched(id)` records a marker in new runs and answers false when
 * replaying a run whose history has none. But each patch marker also makes the SDK upsert the
 * `TemporalChangeVersion` search attribute: one more history event and one more visibility write
 * per run, on every run, for as long as the patch stays in the code.
 *
 * Runs now carry the workflow code level their starter knew (`RunInput.engine`, ENGINE_LEVEL): a
 * revision introduced at or below that level applies with no marker, one introduced later does
 * not (nothing to ask: the input is in the history, so replay decides the same). Runs started
 * before levels existed carry none and ask `patched()` as before.
 *
 * A later revision: add it at ENGINE_LEVEL + 1, gate it with `feature(id, thatLevel)`, then raise
 * ENGINE_LEVEL. Workers must be updated before the gateways that start runs at the new level.
 */
import { patched } from '@temporalio/workflow';
import type { RunInput } from '../../src/common/run-types';
import { runLocals } from './run-locals';

/** Called first thing by the workflows that run a RunInput (runAutomation, runForEachChunk): the run's level. */
export function useEngine(input: Pick<RunInput, 'engine'>): void {
  runLocals().engineLevel = input.engine;
}

/** Whether revision `patchId` (introduced at `sinceLevel`, 1 for those before levels existed) applies. */
export function feature(patchId: string, sinceLevel = 1): boolean {
  const level = runLocals().engineLevel;
  return level === undefined ? patched(patchId) : level >= sinceLevel;
}

/**
 * Whether a revision introduced at `sinceLevel` applies, for revisions that only runs carrying a
 * level get (no patch marker for runs without one: they keep what they did).
 */
export function atLevel(sinceLevel: number): boolean {
  const level = runLocals().engineLevel;
  return level !== undefined && level >= sinceLevel;
}
