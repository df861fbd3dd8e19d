/**
 * Where a definition's approvals are, read from its steps alone (no run, no expression evaluated):
 * the workflow interpreter asks whether a forEach holds one (it then runs in the run's own
 * workflow), and the workflow tools whether a call's run may wait on one (a caller that cannot
 * answer it is refused before the run starts: src/tools/servers/workflows/). Pure and
 * sandbox-safe.
 */
import type { ApprovalStep, Step } from './definition';
import { isStepOf, nestedLists } from './step-kinds';

/** The first approval step in the list, nested ones included (branch cases and default, forEach, parallel branches), whatever `if` guards it. */
export function firstApproval(steps: readonly Step[]): ApprovalStep | undefined {
  for (const s of steps) {
    if (isStepOf(s, 'approval')) return s;
    const found = nestedLists(s).map(firstApproval).find((a) => a !== undefined);
    if (found) return found;
  }
  return undefined;
}

/** Whether a step list holds an approval anywhere. */
export function holdsApproval(steps: readonly Step[]): boolean {
  return firstApproval(steps) !== undefined;
}
