/**
 * A `tool` step with `until`: a durable poll. The tool is called (the runStep activity, as any
 * tool step), its JSON result judged; while the condition is false the workflow sleeps on a
 * Temporal timer — the step and run show PAUSED with `waitingOn: {kind: 'timer', resumeAt}` — and
 * calls again. Between calls no worker holds anything, so a wait of an hour survives restarts of
 * every worker. Ends with the last call's outcome once the condition holds, that call's failure if
 * it failed, or TIMEOUT once `maxWaitSeconds` pass.
 * Timeouts: each call has the step's `timeoutMs`; the whole wait `maxWaitSeconds` (default 3600).
 */
import { sleep } from '@temporalio/workflow';
import type { ToolStep } from '../../activities/steps/tool/schema';
import type { Step } from '../../src/common/definition';
import type { Until } from '../../src/common/step-schema';
import type { StepOutcome } from '../../src/common/run-types';
import { judgeUntil } from '../../src/common/until';
import type { StepDraft } from './step-draft';
import type { Pauser } from './timers';
import { shortDuration } from '../../src/common/run-labels';
import { summary } from '../run/ui-metadata';

export const DEFAULT_POLL_SECONDS = 5;
export const DEFAULT_MAX_WAIT_SECONDS = 3600;
const EXIT_TIMEOUT = 124;

export interface PollCalls {
  /** one call of the tool, recorded as the step's outcome */
  callTool(): Promise<StepOutcome>;
  /** records a draft as the step's outcome (the poll's own failure) */
  record(draft: StepDraft): Promise<StepOutcome>;
}

/** A `tool` step with `until`, which the workflow runs itself between its calls. */
export function isPollingToolStep(step: Step): step is ToolStep & { until: Until } {
  return step.type === 'tool' && step.until !== undefined;
}

export async function pollToolStep(step: ToolStep & { until: Until }, stepIndex: number, calls: PollCalls, pauser: Pauser): Promise<StepOutcome> {
  const pollMs = (step.pollSeconds ?? DEFAULT_POLL_SECONDS) * 1000;
  const maxWaitSeconds = step.maxWaitSeconds ?? DEFAULT_MAX_WAIT_SECONDS;
  const giveUpAt = Date.now() + maxWaitSeconds * 1000;
  for (let attempt = 1; ; attempt++) {
    const outcome = await calls.callTool();
    if (outcome.status !== 'COMPLETE') return outcome;
    const verdict = judgeUntil(step.until, outcome.result, outcome.truncated);
    if ('error' in verdict) {
      return calls.record({ status: 'FAILED', resultType: outcome.resultType, result: outcome.result, exitCode: 1, stdout: `${verdict.error}\n`, error: verdict.error });
    }
    if (verdict.met) return outcome;
    const shown = `${step.until.path} = ${JSON.stringify(verdict.value) ?? 'undefined'}`;
    if (Date.now() + pollMs > giveUpAt) {
      const error = `${shown} after ${attempt} calls: not one of ${JSON.stringify(step.until.in)} within ${maxWaitSeconds} s`;
      return calls.record({ status: 'TIMEOUT', resultType: outcome.resultType, result: outcome.result, exitCode: EXIT_TIMEOUT, stdout: `${error}\n`, error });
    }
    const resumeAt = new Date(Date.now() + pollMs).toISOString();
    pauser.pause({ kind: 'timer', stepIndex, resumeAt });
    try {
      await sleep(pollMs, summary(pauser.label(`poll again in ${shortDuration(pollMs)} (call ${attempt + 1})`)));
    } finally {
      pauser.resume();
    }
  }
}
