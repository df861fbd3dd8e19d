/** What a construct (branch, forEach, parallel) produced, before recordComposite stores it. */
import type { RecordCompositeRequest, ResultPart, StepOutcome } from '../../src/common/run-types';
import type { StepFailure } from './runtime';

export type CompositeDraft = Omit<RecordCompositeRequest, 'run' | 'stepIndex' | 'stepPath' | 'duration'>;

export function partOf(outcome: StepOutcome | undefined): ResultPart | null {
  return outcome ? { key: outcome.files['output.txt'].key, resultType: outcome.resultType } : null;
}

/** The construct fails as its inner step did (TIMEOUT stays TIMEOUT), naming it. */
export function failedComposite(why: string, stdout: string, combine: CompositeDraft['combine'], failure?: StepFailure): CompositeDraft {
  const status = failure?.outcome.status === 'TIMEOUT' ? 'TIMEOUT' : 'FAILED';
  const exitCode = failure && failure.outcome.exitCode !== 0 ? failure.outcome.exitCode : 1;
  return { status, exitCode, error: why, stdout: `${stdout}${why}\n`, combine };
}

export function describeFailure(failure: StepFailure): string {
  const { outcome } = failure;
  return `step ${failure.address} (${failure.name}) ${outcome.status === 'TIMEOUT' ? 'exceeded its time limit' : 'failed'}: ${outcome.error ?? `exit code ${outcome.exitCode}`}`;
}
