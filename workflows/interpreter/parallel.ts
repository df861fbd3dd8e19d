/**
 * `parallel`: runs its branches' step lists at once (list `<index>.<branch>`, from 1). `all` waits
 * for every list and fails if one failed; `first` ends with the first list that completes and
 * cancels the others (their unfinished steps show SKIPPED), failing only when every list failed.
 * The result is a JSON array of each list's last result (null for a list that did not finish).
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { ParallelStep } from '../../src/common/definition';
import type { StepState } from '../../src/common/run-types';
import { describeFailure, failedComposite, partOf, type CompositeDraft } from './composite';
import { nestedScope, settleUnfinished, type ListOutcome, type ListScope, type RunList, type Runtime } from './runtime';

export async function parallelStep(rt: Runtime, step: ParallelStep, address: string, scope: ListScope, stepState: StepState, runList: RunList): Promise<CompositeDraft> {
  const total = step.branches.length;
  let done = 0;
  let winner: number | undefined;
  stepState.progress = `0/${total} done`;
  const scopes = step.branches.map(() => new CancellationScope({ cancellable: true }));
  const results = await Promise.all(step.branches.map(async (branch, j): Promise<ListOutcome | undefined> => {
    try {
      const result = await scopes[j]!.run(() => runList(rt, branch.steps, nestedScope(scope, address, j + 1, undefined, total > 1)));
      done++;
      stepState.progress = `${done}/${total} done`;
      if (step.mode === 'first' && !result.failure && winner === undefined) {
        winner = j;
        scopes.forEach((s, k) => k !== j && s.cancel());
      }
      return result;
    } catch (err) {
      // A list cancelled because another won; the run's own cancellation propagates.
      if (winner !== undefined && isCancellation(err)) {
        settleUnfinished(rt.state, `${address}.${j + 1}.`, 'SKIPPED');
        return undefined;
      }
      throw err;
    }
  }));

  const lists = results.map((r, j) => `list ${j + 1}: ${r === undefined ? 'cancelled' : r.failure ? 'failed' : 'complete'}`).join(', ');
  const stdout = `${step.mode === 'first' && winner !== undefined ? `list ${winner + 1} finished first; ` : ''}${lists}\n`;
  const combine = { kind: 'array' as const, parts: results.map((r) => partOf(r?.last)) };
  const failures = results.flatMap((r) => (r?.failure ? [r.failure] : []));
  if (step.mode === 'first' ? winner === undefined : failures.length > 0) {
    const first = failures[0];
    return failedComposite(first ? describeFailure(first) : 'no branch completed', stdout, combine, first);
  }
  return { status: 'COMPLETE', exitCode: 0, stdout, combine };
}
