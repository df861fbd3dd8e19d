/**
 * `branch`: the first case whose `if` holds runs its steps (list `<index>.<case>`, cases from 1);
 * none holding, `default` runs as list `<index>.<cases + 1>`, or nothing does. The step's result
 * is the last result of the list that ran (empty when none ran).
 */
import type { BranchStep } from '../../src/common/definition';
import type { StepState } from '../../src/common/run-types';
import { truthy } from '../../src/common/expressions';
import { describeFailure, failedComposite, partOf, type CompositeDraft } from './composite';
import { evaluateIn } from './conditions';
import { nestedScope, type ListScope, type RunList, type Runtime } from './runtime';

export async function branchStep(rt: Runtime, step: BranchStep, address: string, scope: ListScope, stepState: StepState, runList: RunList): Promise<CompositeDraft> {
  let chosen: { list: number; steps: BranchStep['default'] & object; why: string } | undefined;
  for (const [k, c] of step.cases.entries()) {
    const verdict = await evaluateIn(rt, c.if, scope);
    if ('error' in verdict) return failedComposite(`case ${k + 1}: if: ${verdict.error}`, '', { kind: 'single', part: null });
    if (truthy(verdict.value)) {
      chosen = { list: k + 1, steps: c.steps, why: `case ${k + 1} holds` };
      break;
    }
  }
  if (!chosen && step.default) chosen = { list: step.cases.length + 1, steps: step.default, why: 'no case holds: default' };
  if (!chosen) return { status: 'COMPLETE', exitCode: 0, stdout: 'no case holds and there is no default: nothing ran\n', combine: { kind: 'single', part: null } };

  stepState.progress = `took list ${chosen.list}`;
  const result = await runList(rt, chosen.steps, nestedScope(scope, address, chosen.list));
  const stdout = `${chosen.why}: ran list ${address}.${chosen.list}\n`;
  const combine = { kind: 'single' as const, part: partOf(result.last) };
  if (result.failure) return failedComposite(describeFailure(result.failure), stdout, combine, result.failure);
  return { status: 'COMPLETE', exitCode: 0, stdout, combine };
}
