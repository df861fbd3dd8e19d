/**
 * `forEach`: runs its steps once per item of the array `items` evaluates to, `concurrency` items
 * at a time, each item a list of its own (`<index>.<item>.<step>`, items from 1). Results come
 * back in item order (the last step's result of each item). A failed item (a step without
 * `onError: continue` failed) starts no more items; those in flight finish, then the step fails.
 * Progress shows in the step's `progress` (`12/40 done`). More than FANOUT_THRESHOLD items run in
 * child workflows instead (fan-out.ts).
 */
import { feature } from '../run/features';
import type { ForEachStep } from '../../src/common/definition';
import type { StepOutcome, StepState } from '../../src/common/run-types';
import { describeFailure, failedComposite, partOf, type CompositeDraft } from './composite';
import { evaluateIn } from './conditions';
import { holdsApproval } from '../../src/common/approval-steps';
import { chunkedForEach, FANOUT_PATCH, FANOUT_THRESHOLD, MAX_FANOUT_ITEMS } from './fan-out';
import { compactOutcomes, nestedScope, type ListScope, type RunList, type Runtime, type StepFailure } from './runtime';

/**
 * The most items a forEach runs in the run's own workflow: one whose steps hold an approval, and
 * any in runs started before large fan-outs moved to child workflows (fan-out.ts).
 */
export const MAX_FOREACH_ITEMS = 1000;

export async function forEachStep(rt: Runtime, step: ForEachStep, address: string, scope: ListScope, stepState: StepState, runList: RunList): Promise<CompositeDraft> {
  const none = { kind: 'array' as const, parts: [] };
  const evaluated = await evaluateIn(rt, step.items, scope);
  if ('error' in evaluated) return failedComposite(`items: ${evaluated.error}`, '', none);
  const items = evaluated.value === undefined ? [] : evaluated.value;
  if (!Array.isArray(items)) return failedComposite(`items must evaluate to an array; got ${items === null ? 'null' : typeof items}`, '', none);
  // Past the threshold the items run in child workflows; runs from before that replay as they ran.
  if (items.length > FANOUT_THRESHOLD && !holdsApproval(step.steps) && feature(FANOUT_PATCH)) {
    if (items.length > MAX_FANOUT_ITEMS) return failedComposite(`items has ${items.length} entries; a forEach takes at most ${MAX_FANOUT_ITEMS}`, '', none);
    return chunkedForEach(rt, step, address, scope, stepState, items);
  }
  if (items.length > MAX_FOREACH_ITEMS) return failedComposite(`items has ${items.length} entries; a forEach takes at most ${MAX_FOREACH_ITEMS}${holdsApproval(step.steps) ? ' when its steps hold an approval' : ''}`, '', none);

  const total = items.length;
  const lasts: (StepOutcome | undefined)[] = new Array<StepOutcome | undefined>(total).fill(undefined);
  let done = 0;
  let next = 0;
  let failed: { item: number; failure: StepFailure } | undefined;
  stepState.progress = `0/${total} done`;
  const workers = Math.min(step.concurrency, total);
  const worker = async (): Promise<void> => {
    while (next < total && failed === undefined) {
      const i = next++;
      const result = await runList(rt, step.steps, nestedScope(scope, address, i + 1, { item: items[i], index: i }, workers > 1));
      lasts[i] = result.last;
      done++;
      stepState.progress = `${done}/${total} done`;
      compactOutcomes(rt.state, `${address}.${i + 1}.`);
      if (result.failure && failed === undefined) failed = { item: i + 1, failure: result.failure };
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));

  const combine = { kind: 'array' as const, parts: lasts.map(partOf) };
  const stdout = `${total} item(s), ${step.concurrency} at a time: ${done} done\n`;
  if (failed) return failedComposite(`item ${failed.item}: ${describeFailure(failed.failure)}`, stdout, combine, failed.failure);
  return { status: 'COMPLETE', exitCode: 0, stdout, combine };
}
