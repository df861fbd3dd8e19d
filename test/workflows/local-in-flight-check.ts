/**
 * Workflow interceptors for replay tests only (bundled by concurrent-templates.test.ts): two local
 * activities in flight at once fail the replay. Runs from engine level 4 never have that (a
 * template step side by side is an activity task: workflows/interpreter/run-list.ts,
 * TEMPLATE_ALONGSIDE_REVISION); earlier runs may.
 */
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';

const where = (request: { stepIndex?: unknown; stepPath?: unknown } | undefined): string => String(request?.stepPath ?? request?.stepIndex);

export const interceptors: WorkflowInterceptorsFactory = () => {
  // the factory runs once per workflow execution
  const inFlight = new Set<string>();
  return {
    outbound: [{
      scheduleLocalActivity: (input, next) => {
        const step = where(input.args[0] as Parameters<typeof where>[0]);
        if (inFlight.size > 0) throw new Error(`local activities in flight together: ${[...inFlight].join(', ')} and ${step}`);
        inFlight.add(step);
        return next(input).finally(() => inFlight.delete(step));
      },
    }],
  };
};
