import type { ResultType } from '../../src/common/run-types';

/**
 * What a step executor produced, before it is stored. Executors are plain async functions of the
 * step and its interpolation context; they never touch Temporal or the blob store, so they can be
 * tested alone. A step that ran and failed is a value here (status FAILED/TIMEOUT, non-zero
 * exitCode), never a thrown error: a throw means the infrastructure failed and Temporal retries.
 */
export interface StepExecution {
  status: 'COMPLETE' | 'FAILED' | 'TIMEOUT';
  /** the whole result text (becomes output.txt) */
  result: string;
  resultType: ResultType;
  /** 0 on success; 1 a failure; 124 a step over its time limit; 137 over its memory limit */
  exitCode: number;
  /** the step's log (becomes stdout.txt) */
  stdout: string;
  /** why it failed, one sentence for a person */
  error?: string;
}

export const EXIT_FAILURE = 1;
export const EXIT_TIMEOUT = 124;
export const EXIT_OUT_OF_MEMORY = 137;
