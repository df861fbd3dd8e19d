/**
 * Where a definition's approvals are, read from its steps alone (no run, no expression evaluated):
 * the workflow interpreter asks whether a forEach holds one (it then runs in the run's own
 * workflow), and the workflow tools whether a call's run may wait on one (a caller that cannot
 * answer it is refused before the run starts: src/tools/servers/workflows/). Pure and
 * sandbox-safe: it imports types only.
 */
import type { ApprovalStep, Step } from './definition';

/** The first approval step in the list, nested ones included (branch cases and default, forEach, parallel branches), whatever `if` guards it. */
export function firstApproval(steps: readonly Step[]): ApprovalStep | undefined {
  for (const s of steps) {
    switch (s.type) {
      case 'approval': return s;
      case 'branch': {
        const found = [...s.cases.map((c) => c.steps), s.default ?? []].map(firstApproval).find((a) => a !== undefined);
        if (found) return found;
        break;
      }
      case 'forEach': {
        const found = firstApproval(s.steps);
        if (found) return found;
        break;
      }
      case 'parallel': {
        const found = s.branches.map((b) => firstApproval(b.steps)).find((a) => a !== undefined);
        if (found) return found;
        break;
      }
      default: break;
    }
  }
  return undefined;
}

/** Whether a step list holds an approval anywhere. */
export function holdsApproval(steps: readonly Step[]): boolean {
  return firstApproval(steps) !== undefined;
}
