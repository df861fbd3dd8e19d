/**
 * runForEachChunk: one chunk of a large forEach (workflows/interpreter/fan-out.ts), a child
 * workflow of the run (or of the chunk holding a nested large forEach).
 *
 * Input: ForEachChunkInput (the chunk's items, the item step list, the steps visible at the
 *   forEach, the forEach item it sits in). Runs the items `concurrency` at a time through the
 *   interpreter, exactly as the run would in its own workflow (same addresses, file keys and
 *   idempotency keys, `item`/`index`/`outer`, `onError` semantics: a failed item starts no more
 *   items, those in flight finish). Answers
 *   ForEachChunkResult: the count done, the chunk's results stored as one JSON array, the failure.
 * Query `state`: the chunk's own step states and outcomes (results cut, as in a run).
 * Signals sent: `forEachProgress` to the parent, every tenth of the chunk's items at most, and not
 *   more than once in two seconds.
 * Continue-as-new: once Temporal suggests it (or past CHUNK_HISTORY_EVENTS events) the chunk
 *   starts no more items, lets those in flight finish, and continues as new with where it
 *   stands, so no finished item runs again. Timeouts: the run's remaining time (set by the parent).
 */
import { continueAsNew, getExternalWorkflowHandle, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { messageOf } from '../src/common/narrow';
import type { ResultPart, RunState } from '../src/common/run-types';
import { partOf } from './interpreter/composite';
import type { ChunkFailure, ForEachChunkInput, ForEachChunkResult } from '../src/common/for-each-chunk';
import { forEachProgressSignal, stateQuery } from '../src/common/workflow-contracts';
import { runList } from './interpreter/run-list';
import { compactOutcomes, nestedScope, type ListScope, type Runtime } from './interpreter/runtime';
import { runAutomation } from './run-automation';
import { ApprovalDesk } from './steps/approval';
import { useEngine } from './run/features';

/** A chunk past this many history events continues as new between items (Temporal's own suggestion comes first). */
export const CHUNK_HISTORY_EVENTS = 10_000;
/** A chunk reports its progress at most this often (and at most every tenth of its items). */
const REPORT_MS = 2000;

const { recordComposite } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

export async function runForEachChunk(c: ForEachChunkInput): Promise<ForEachChunkResult> {
  const { input, address, items } = c;
  useEngine(input);
  const state: RunState = { status: 'RUNNING', steps: {}, outcomes: [] };
  setHandler(stateQuery, () => state);
  const run = { runId: input.runId, orgId: input.orgId, automationId: input.automationId, automationVersion: input.automationVersion,
    triggerId: input.triggerId, started: input.started, inputs: input.inputs };
  let executionOrder = 0;
  const rt: Runtime = { input, run, state, approvals: new ApprovalDesk(), nextOrder: () => ++executionOrder, runAutomation };
  // the list holding the forEach: its items see that list's forEach item as `outer`
  const scope: ListScope = { depth: c.depth, seen: c.seen, ...(c.enclosing ?? {}) };
  const total = items.length;
  const parts: (ResultPart | null)[] = c.carried?.parts ?? new Array<ResultPart | null>(total).fill(null);
  let next = c.carried?.next ?? 0;
  let done = c.carried?.done ?? 0;
  let failure: ChunkFailure | undefined;
  let rollOver = false;

  const parent = getExternalWorkflowHandle(c.parentWorkflowId);
  const reportEvery = Math.max(1, Math.ceil(total / 10));
  let reported = done;
  let reportedAt = Date.now();
  const report = (): void => {
    reported = done;
    reportedAt = Date.now();
    parent.signal(forEachProgressSignal, { address, chunk: c.chunk, done }).catch((err: unknown) => {
      log.warn('forEach progress signal not delivered', { reason: messageOf(err) });
    });
  };

  const workers = Math.min(c.concurrency, total - next);
  const worker = async (): Promise<void> => {
    while (next < total && failure === undefined && !rollOver) {
      const info = workflowInfo();
      if (info.continueAsNewSuggested || info.historyLength > CHUNK_HISTORY_EVENTS) {
        rollOver = true;
        break;
      }
      const i = next++;
      const index = c.first + i;
      const result = await runList(rt, c.steps, nestedScope(scope, address, index + 1, { item: items[i], index }, workers > 1));
      parts[i] = partOf(result.last);
      done++;
      compactOutcomes(state, `${address}.${index + 1}.`);
      if (result.failure && failure === undefined) {
        failure = { ...result.failure, item: index + 1, type: state.steps[result.failure.address]?.type ?? 'template' };
      }
      // Workflow time: the same on replay. Fast items report every REPORT_MS, slow ones every tenth of the chunk.
      if (done - reported >= reportEvery && Date.now() - reportedAt >= REPORT_MS && done < total) report();
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));

  if (failure === undefined && next < total) {
    // Only the items in flight finished since the roll-over began: none runs twice.
    report();
    return continueAsNew<typeof runForEachChunk>({ ...c, carried: { next, done, parts } });
  }
  const stored = await recordComposite({
    run, stepIndex: Number(address.split('.')[0]), stepPath: `${address}.chunk-${c.chunk}`,
    status: 'COMPLETE', exitCode: 0, duration: 0,
    stdout: `items ${c.first + 1}–${c.first + total}: ${done} done\n`,
    combine: { kind: 'array', parts },
  });
  state.status = failure ? 'FAILED' : 'COMPLETE';
  return { done, part: partOf(stored), ...(failure ? { failure } : {}) };
}
