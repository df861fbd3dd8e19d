import type { RecordStepRequest } from '../../src/common/run-types';

/** Interpolates a value (a string, or a JSON-like value leaf by leaf) over the run's whole context. */
export type Renderer = (value: unknown) => Promise<unknown>;

/** What a workflow-side step produced, before recordStep stores it. */
export type StepDraft = Omit<RecordStepRequest, 'run' | 'stepIndex' | 'duration'>;

export function completed(result: string, stdout: string, resultType: StepDraft['resultType'] = 'plaintext'): StepDraft {
  return { status: 'COMPLETE', resultType, result, exitCode: 0, stdout };
}

export function failed(error: string, stdout = `${error}\n`, result = ''): StepDraft {
  return { status: 'FAILED', resultType: 'plaintext', result, exitCode: 1, stdout, error };
}
