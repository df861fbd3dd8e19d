/**
 * What a run hands the child workflows of a large forEach (`runForEachChunk`) and what they answer
 * (workflows/interpreter/fan-out.ts runs them, workflows/for-each-chunk.ts is one).
 */
import type { Step } from './definition';
import type { ItemScope, ResultPart, RunInput, StepOutcome, StepState, VisibleStep } from './run-types';

/** The step that failed a list (one without `onError: continue`). */
export interface StepFailure {
  address: string;
  name: string;
  outcome: StepOutcome;
}

export interface ChunkProgress {
  /** the forEach step's address */
  address: string;
  /** from 1 */
  chunk: number;
  /** items of the chunk done so far */
  done: number;
}

export interface ForEachChunkInput {
  /** the run's input, without its definition's steps, resume outcomes or callback (a chunk needs none) */
  input: RunInput;
  /** the forEach step's address */
  address: string;
  steps: Step[];
  /** this chunk's items */
  items: unknown[];
  /** the position of items[0] in the whole array, from 0 */
  first: number;
  /** from 1 */
  chunk: number;
  concurrency: number;
  /** depth of the list holding the forEach step */
  depth: number;
  /** the steps visible at the forEach step */
  seen: VisibleStep[];
  /** the forEach item the forEach step sits in, if any: the items' `outer` (runs from engine level 4) */
  enclosing?: ItemScope;
  /** where progress signals go */
  parentWorkflowId: string;
  /** set when a chunk continued as new: where it stands */
  carried?: { next: number; done: number; parts: (ResultPart | null)[] };
}

export interface ChunkFailure extends StepFailure {
  /** the failed item's number, from 1, in the whole array */
  item: number;
  type: StepState['type'];
}

export interface ForEachChunkResult {
  /** items of the chunk that ran */
  done: number;
  /** the chunk's results as a JSON array (one entry per item of the chunk, null for none) */
  part: ResultPart | null;
  /** the first item of the chunk that failed */
  failure?: ChunkFailure;
}
