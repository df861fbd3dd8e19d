/**
 * A large `forEach` (more than FANOUT_THRESHOLD items): its items run in child workflows
 * (`runForEachChunk`, workflows/for-each-chunk.ts) of CHUNK_ITEMS items each, one chunk after
 * another, each chunk running its items `concurrency` at a time, so the run's own history grows by
 * a few events per chunk instead of several per inner step. Chunks report progress with the
 * `forEachProgress` signal (throttled, for-each-chunk.ts); a chunk whose history grows long
 * continues as new between items. A failed item stops its chunk starting items and no later
 * chunk starts; the failing inner step's outcome is the only inner one the run keeps (the others
 * stay in the chunk's history; every inner step's files are stored under its address as usual).
 * Child workflow IDs are `<runId>-foreach-<address>-<chunk>` (chunks from 1): deterministic, so
 * a replayed run finds its children again. Cancelling the run cancels the chunk in flight.
 */
import {
  CancellationScope, ChildWorkflowFailure, executeChild, isCancellation, ParentClosePolicy, setHandler, workflowInfo,
} from '@temporalio/workflow';
import type { ForEachStep } from '../../src/common/definition';
import type { ResultPart, RunInput, StepState } from '../../src/common/run-types';
import type { ForEachChunkInput, ForEachChunkResult, StepFailure } from '../../src/common/for-each-chunk';
import { forEachProgressSignal } from '../../src/common/workflow-contracts';
import { feature } from '../run/features';
import { childMetadata } from '../run/ui-metadata';
import { describeFailure, failedComposite, type CompositeDraft } from './composite';
import { itemScopeOf, NESTED_ITEM_SCOPE_REVISION, type ListScope, type Runtime } from './runtime';

/** A forEach over more items than this runs them in child workflows (runs started before the patch excepted). */
export const FANOUT_THRESHOLD = 100;
/** Items per child workflow. */
export const CHUNK_ITEMS = 100;
/** The most items a forEach takes in child workflows. */
export const MAX_FANOUT_ITEMS = 10_000;
/** Marks runs whose large forEach steps run in child workflows; runs before it replay in-workflow. */
export const FANOUT_PATCH = 'foreach-child-chunks';

export function chunkWorkflowId(runId: string, address: string, chunk: number): string {
  return `${runId}-foreach-${address}-${chunk}`;
}

/** Routes progress signals to the chunked forEach steps in flight (there may be several, in parallel lists). */
function progressRoutes(rt: Runtime): NonNullable<Runtime['fanOuts']> {
  if (!rt.fanOuts) {
    const routes: NonNullable<Runtime['fanOuts']> = new Map();
    rt.fanOuts = routes;
    setHandler(forEachProgressSignal, (progress) => routes.get(progress.address)?.(progress));
  }
  return rt.fanOuts;
}

export async function chunkedForEach(rt: Runtime, step: ForEachStep, address: string, scope: ListScope, stepState: StepState, items: unknown[]): Promise<CompositeDraft> {
  const total = items.length;
  const chunks = Math.ceil(total / CHUNK_ITEMS);
  const { resume: _resume, callback: _callback, ...rest } = rt.input;
  const input: RunInput = { ...rest, definition: { ...rt.input.definition, steps: [] } };
  const routes = progressRoutes(rt);
  const enclosing = feature(NESTED_ITEM_SCOPE_REVISION, 4) ? itemScopeOf(scope) : undefined;
  const parts: { part: ResultPart | null; items: number }[] = [];
  let doneBefore = 0;
  let failed: { item: number; why: string; failure?: StepFailure } | undefined;
  stepState.progress = `0/${total} done`;

  for (let k = 1; k <= chunks; k++) {
    const first = (k - 1) * CHUNK_ITEMS;
    const chunkItems = items.slice(first, first + CHUNK_ITEMS);
    if (failed) {
      parts.push({ part: null, items: chunkItems.length });
      continue;
    }
    let reported = 0;
    routes.set(address, (progress) => {
      if (progress.chunk !== k || progress.done <= reported) return;
      reported = Math.min(progress.done, chunkItems.length);
      stepState.progress = `${doneBefore + reported}/${total} done`;
    });
    const expiry = workflowInfo().executionExpirationTime;
    const chunkInput: ForEachChunkInput = {
      input, address, steps: step.steps, items: chunkItems, first, chunk: k, concurrency: step.concurrency,
      depth: scope.depth, seen: scope.seen, parentWorkflowId: workflowInfo().workflowId, ...(enclosing ? { enclosing } : {}),
    };
    try {
      const result = await executeChild<(c: ForEachChunkInput) => Promise<ForEachChunkResult>>('runForEachChunk', {
        workflowId: chunkWorkflowId(rt.run.runId, address, k),
        args: [chunkInput],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        ...childMetadata(`${address} · ${step.name}: items ${first + 1}–${first + chunkItems.length} of ${total} (chunk ${k} of ${chunks})`,
          `Chunk ${k} of ${chunks} of the forEach step ${address} (${step.name}) of run ${rt.run.runId}: ${chunkItems.length} item(s), ${step.concurrency} at a time.`),
        ...(expiry ? { workflowExecutionTimeout: Math.max(1000, expiry.getTime() - Date.now()) } : {}),
      });
      doneBefore += result.done;
      parts.push({ part: result.part, items: chunkItems.length });
      if (result.failure) {
        const { item, type, ...failure } = result.failure;
        // The inner step that failed the item shows in the run as it would in-workflow.
        rt.state.steps[failure.address] = { name: failure.name, type, status: failure.outcome.status };
        rt.state.outcomes.push(failure.outcome);
        failed = { item, why: describeFailure(failure), failure };
      }
    } catch (err) {
      // The run being cancelled propagates (the chunk is cancelled with it); a chunk that broke fails the step.
      if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
      if (!(err instanceof ChildWorkflowFailure)) throw err;
      parts.push({ part: null, items: chunkItems.length });
      failed = { item: first + 1, why: `the child workflow of items ${first + 1}–${first + chunkItems.length} failed: ${err.cause?.message ?? err.message}` };
    } finally {
      routes.delete(address);
    }
    stepState.progress = `${doneBefore}/${total} done`;
  }

  const combine = { kind: 'chunks' as const, parts };
  const stdout = `${total} item(s), ${step.concurrency} at a time, in ${chunks} child workflow(s) of up to ${CHUNK_ITEMS} items: ${doneBefore} done\n`;
  if (failed) {
    const why = failed.failure ? `item ${failed.item}: ${failed.why}` : failed.why;
    return failedComposite(why, stdout, combine, failed.failure);
  }
  return { status: 'COMPLETE', exitCode: 0, stdout, combine };
}
