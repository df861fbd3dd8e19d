/**
 * Expressions in the workflow (`if`, `items`, branch cases): JSONata over the steps this list can
 * see (src/common/expressions.ts). Results are those kept in workflow state: a result over 4 KiB
 * is cut there (`json` is then absent), and inputs passed by reference cannot be read.
 */
import { evaluateExpression, ExpressionError } from '../../src/common/expressions';
import { isInputsReference } from '../../src/common/inputs-reference';
import { buildContext } from '../../src/common/interpolate';
import { messageOf } from '../../src/common/narrow';
import { stepScopeOf, type ListScope, type Runtime } from './runtime';

export type Evaluation = { value: unknown } | { error: string };

export async function evaluateIn(rt: Runtime, expression: string, scope: ListScope): Promise<Evaluation> {
  if (isInputsReference(rt.run.inputs)) {
    return { error: "the run's inputs were too large to travel with it (stored by reference); expressions cannot read them" };
  }
  try {
    return { value: await evaluateExpression(expression, buildContext(rt.run, scope.seen, stepScopeOf(scope))) };
  } catch (err) {
    if (err instanceof ExpressionError) return { error: err.message };
    return { error: `evaluation failed: ${messageOf(err)}` };
  }
}
