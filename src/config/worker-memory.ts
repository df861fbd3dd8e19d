/**
 * A worker's memory budget (FLOWGATE_WORKER_MEMORY_MB) and what is derived from it: the heap of
 * the thread that runs every workflow, how many runs that thread keeps cached, and how much the
 * `code` steps' sandboxes may hold at once. Without a bound each of these grew with the machine:
 * V8 gave the workflow thread a heap limit of a sixth of the machine's memory (4 GiB on 24 GiB),
 * Temporal's default cache follows that limit, and every `code` step running at once (up to the
 * 100 activity slots) had a thread and a QuickJS memory of its own.
 *
 * The shares (docs/operations.md, Memory):
 * - the workflow thread's V8 heap: 40% of the budget. The cache is sized so that its runs fill at
 *   most half of that heap at CACHED_RUN_MB (384 KiB) a run; the other half is for what a task allocates and
 *   frees, and for replays. A run evicted from the cache is rebuilt from its history at its next task.
 * - the `code` sandboxes: 25%. A step reserves its `memoryLimitMb` plus a thread's own cost before it
 *   starts; steps that do not fit wait for those running to end (activities/steps/code/sandbox-gate.ts).
 * - the rest (35%) is the process: its main heap (the activities, the Temporal client, the registry's
 *   pool) and native memory (Temporal's core, sockets). Not enforced in-process: Node fixes the main
 *   heap's limit at start (`node --max-old-space-size`).
 */

export const DEFAULT_WORKER_MEMORY_MB = 768;
export const MIN_WORKER_MEMORY_MB = 256;

/** the workflow thread's share of the budget */
const WORKFLOW_HEAP_SHARE = 0.4;
/** the `code` sandboxes' share of the budget */
const SANDBOX_SHARE = 0.25;
/**
 * What the workflow thread holds with no run cached: the bundle of the workflow code, jsonata, the
 * reusable V8 context (measured: 28-35 MiB used after start, heap-hook.ts).
 */
export const WORKFLOW_THREAD_BASE_MB = 48;
/**
 * What one cached run may hold in the workflow thread's heap (MiB), from the measured: a run paused
 * on an approval holds about 80 KiB once every module of workflows/ is shared by the runs (300
 * held, test/bench/heap-summary.ts; 110 KiB before, when each cached run evaluated 39 modules for
 * itself), a cached run of the bench:memory mix (forEach, agents, approvals) 0.25-0.35 MiB with
 * its own state (measured before that change, which took 30-40 KiB off each). Step results in a
 * run's state are cut at 4 KiB (RESULT_INLINE_LIMIT). It was 1 MiB, from when a cached run held
 * 164 modules (660 KiB) before any state of its own.
 */
export const CACHED_RUN_MB = 0.375;
/**
 * What a `code` step's sandbox thread costs besides its QuickJS memory: a V8 isolate, Node's
 * bootstrap in it and the QuickJS WebAssembly module (measured: 12-18 MiB RSS a thread running a small
 * program, 60 at once 718 MiB).
 */
export const SANDBOX_THREAD_MB = 16;

export interface WorkerMemoryPlan {
  /** FLOWGATE_WORKER_MEMORY_MB */
  budgetMb: number;
  /** the workflow thread's old-generation heap limit (its `--max-old-space-size`) */
  workflowHeapMb: number;
  /** Temporal's maxCachedWorkflows: derived, unless FLOWGATE_WORKER_CACHED_WORKFLOWS is set */
  maxCachedWorkflows: number;
  /** what the `code` steps' sandboxes may reserve at once */
  sandboxMb: number;
}

/** The runs a workflow heap of `workflowHeapMb` caches: its free half at CACHED_RUN_MB a run, at least 2. */
export function cachedWorkflowsFor(workflowHeapMb: number): number {
  return Math.max(2, Math.floor((workflowHeapMb - WORKFLOW_THREAD_BASE_MB) / 2 / CACHED_RUN_MB));
}

export function workerMemoryPlan(budgetMb: number, cachedWorkflows?: number): WorkerMemoryPlan {
  const workflowHeapMb = Math.floor(budgetMb * WORKFLOW_HEAP_SHARE);
  return {
    budgetMb,
    workflowHeapMb,
    maxCachedWorkflows: cachedWorkflows ?? cachedWorkflowsFor(workflowHeapMb),
    sandboxMb: Math.floor(budgetMb * SANDBOX_SHARE),
  };
}
