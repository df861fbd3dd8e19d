/**
 * A run's memo as Temporal hands it back (describe, visibility lists): checked here, at the edge,
 * against the shape src/common/run-memo.ts builds, so the run views read it typed. The check keeps
 * the memo object as Temporal gave it (a guard, not a copy): views keep and show it unchanged.
 */
import { z } from 'zod';
import type { RunMemo } from '../common/run-memo';

/**
 * A step's type: any name, since the kinds registered at start (startFlowgate's `stepKinds`) are
 * not known here, and a run of one is a flowgate run like any other.
 */
const StepTypeSchema = z.string().min(1);

export const RunMemoSchema = z.object({
  // an empty orgId is no flowgate run's
  orgId: z.string().min(1),
  automationId: z.string(),
  automationVersion: z.number(),
  automationName: z.string(),
  triggerId: z.string(),
  startedBy: z.string(),
  started: z.string(),
  stepMap: z.record(z.string(), z.number()),
  steps: z.array(z.object({ name: z.string(), type: StepTypeSchema }).loose()),
  parentRunId: z.string().optional(),
  callback: z.boolean().optional(),
  origin: z.object({ kind: z.enum(['rerun', 'resume']), runId: z.string() }).loose().optional(),
  type: z.literal('SCHEDULE').optional(),
  scheduleRevision: z.number().optional(),
  endedAs: z.literal('TIMEOUT').optional(),
  taskTtlMs: z.number().optional(),
  slots: z.number().int().min(0).optional(),
  sourceCommit: z.string().optional(),
}).loose() satisfies z.ZodType<RunMemo>;

/** Whether a memo read from Temporal is a flowgate run's. */
export function isRunMemo(memo: unknown): memo is RunMemo {
  return RunMemoSchema.safeParse(memo).success;
}

/** The memo fields a run list shows; each may be missing (the list shows a default then). */
const ListedMemoSchema = RunMemoSchema.pick({ automationId: true, automationVersion: true, triggerId: true, endedAs: true }).partial();

export function listedMemo(memo: unknown): z.infer<typeof ListedMemoSchema> {
  const parsed = ListedMemoSchema.safeParse(memo ?? {});
  return parsed.success ? parsed.data : {};
}
