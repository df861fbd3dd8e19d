/**
 * The bodies of an operator's actions on runs (issue 54; src/http/routes/run-management.ts): a
 * pause and its answer, and bulk actions by filter (the request, its acceptance, the batch's
 * progress).
 */
import { z } from 'zod';
import { BATCH_ACTIONS, BATCH_CONFIRM_ABOVE, BATCH_LIMIT_DEFAULT, BATCH_LIMIT_MAX, INPUT_SCAN_MAX } from '../common/run-batch';

/** A run's status (as RunStatus in http-bodies.ts, which imports this file). */
const RUN_STATUSES = ['PENDING', 'RUNNING', 'PAUSED', 'COMPLETE', 'FAILED', 'TIMEOUT'] as const;
const isoTime = z.string().meta({ description: 'ISO 8601 UTC', example: '2026-01-01T12:00:00.000Z' });

export const OperatorPauseSchema = z.looseObject({
  by: z.string().meta({ description: 'who paused the run' }),
  at: isoTime,
  reason: z.string().optional(),
}).meta({ id: 'OperatorPause', description: 'An operator\'s pause in force: the run starts no new step until unpaused (PAUSED once its current step ends)' });

/** A run waiting for an operator (`waitingOn` kind `operator`, in WaitingOnSchema). */
export const OperatorWaitSchema = OperatorPauseSchema.extend({
  kind: z.literal('operator'),
  scope: z.enum(['workflow', 'trigger']).optional().meta({ description: 'a PENDING run: its whole workflow or trigger is paused (absent: the run itself is PAUSED)' }),
}).meta({ id: 'OperatorWait', description: 'an operator paused the run, or its workflow or trigger before it started' });

/** The answer to a pause or unpause (POST /api/v1/runs/{runId}/pause, /unpause). */
export const PauseAnswerSchema = z.looseObject({
  runId: z.string(),
  paused: z.boolean().meta({ description: 'whether a pause is now in force' }),
  applied: z.boolean().meta({ description: 'true: the run took it (200); false: the run did not answer in time, the request is in its history and taken when it next runs (202)' }),
  status: z.enum(RUN_STATUSES).optional().meta({ description: 'the run\'s status when it answered' }),
  operatorPause: OperatorPauseSchema.optional(),
}).meta({ id: 'PauseAnswer', description: 'What became of a pause or unpause' });

const isoInstant = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 instant');
export const RunBatchFilterSchema = z.object({
  workflowId: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be a workflow ID').optional(),
  triggerId: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be a trigger ID').optional(),
  status: z.enum(RUN_STATUSES).optional(),
  startedAfter: isoInstant.optional().meta({ description: 'runs started at or after this instant' }),
  startedBefore: isoInstant.optional().meta({ description: 'runs started before this instant' }),
  errorContains: z.string().min(1).max(200).optional().meta({ description: 'the run\'s error contains this text (case-insensitive)' }),
  input: z.record(
    z.string().regex(/^[A-Za-z0-9_-]{1,100}(\.[A-Za-z0-9_-]{1,100}){0,9}$/, 'must be a dotted path of input field names'),
    z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]),
  ).refine((fields) => Object.keys(fields).length >= 1 && Object.keys(fields).length <= 10, 'names 1 to 10 input fields').optional().meta({
    description: `fields of the run's inputs by dotted path (\`{"customer.id": "c-42"}\`): each must hold exactly this value. Read run by run, at most ${INPUT_SCAN_MAX} candidates (the other fields select them)`,
  }),
}).strict().meta({ id: 'RunBatchFilter', description: 'Which runs a batch acts on: every field given must match' });

export const RunBatchBodySchema = z.object({
  action: z.enum(BATCH_ACTIONS),
  filter: RunBatchFilterSchema,
  dryRun: z.boolean().optional().meta({ description: 'only count the runs the batch would act on' }),
  limit: z.number().int().min(1).max(BATCH_LIMIT_MAX).optional().meta({ description: `at most this many runs, newest first (default ${BATCH_LIMIT_DEFAULT}, at most ${BATCH_LIMIT_MAX})` }),
  confirm: z.boolean().optional().meta({ description: `required (true) when the batch would act on more than ${BATCH_CONFIRM_ABOVE} runs` }),
  reason: z.string().max(500).optional().meta({ description: 'pause: why, shown in the runs\' waitingOn' }),
}).strict().meta({ id: 'RunBatchBody' });

export const RunBatchAcceptedSchema = z.looseObject({
  batchId: z.string().optional().meta({ description: 'the batch (absent for a dry run)' }),
  action: z.enum(BATCH_ACTIONS),
  count: z.number().int().optional().meta({ description: 'a dry run: how many runs the batch would act on' }),
  scanned: z.number().int().optional().meta({ description: 'a dry run: how many candidates were read one by one (a filter on status PAUSED or PENDING, errorContains or input)' }),
  capped: z.boolean().optional().meta({ description: 'a dry run: the scan stopped at its cap before the limit: older runs may match too (narrow the filter by time)' }),
  matched: z.number().int().optional().meta({ description: 'how many runs the filter selected when the batch was accepted' }),
  limit: z.number().int(),
  statusUrl: z.string().optional(),
}).meta({ id: 'RunBatchAccepted' });

export const RunBatchOutcomeSchema = z.looseObject({
  runId: z.string(),
  outcome: z.enum(['succeeded', 'refused', 'failed']),
  newRunId: z.string().optional().meta({ description: 'rerun and resume: the new run' }),
  code: z.string().optional().meta({ description: 'why it was refused (run_closed, not_resumable, ...)' }),
  message: z.string().optional(),
}).meta({ id: 'RunBatchOutcome' });

export const RunBatchSchema = z.looseObject({
  batchId: z.string(),
  action: z.enum(BATCH_ACTIONS),
  status: z.enum(['LISTING', 'RUNNING', 'COMPLETE', 'FAILED']),
  total: z.number().int().meta({ description: 'the runs selected (0 while LISTING)' }),
  succeeded: z.number().int(),
  refused: z.number().int(),
  failed: z.number().int(),
  outcomes: z.array(RunBatchOutcomeSchema),
  by: z.string(),
  requested: isoTime,
}).meta({ id: 'RunBatch', description: 'A bulk action\'s progress and per-run outcomes' });

/** A paused workflow or trigger (POST /api/v1/workflows/{id}/pause, /api/v1/triggers/{id}/pause; GET /api/v1/holds). */
export const RunHoldSchema = z.looseObject({
  scope: z.enum(['workflow', 'trigger']),
  id: z.string().meta({ description: 'the workflow\'s or the trigger\'s ID' }),
  by: z.string().meta({ description: 'who paused it' }),
  at: isoTime,
  reason: z.string().optional(),
}).meta({ id: 'RunHold', description: 'A paused workflow or trigger: its new runs wait PENDING before their first step until it is unpaused' });

export const HoldAnswerSchema = z.looseObject({
  scope: z.enum(['workflow', 'trigger']),
  id: z.string(),
  paused: z.boolean().meta({ description: 'whether its new runs now wait' }),
  hold: RunHoldSchema.optional().meta({ description: 'the pause in force (pause), or the one lifted (unpause)' }),
  releaseId: z.string().optional().meta({ description: 'unpause: the Temporal workflow that releases the runs held meanwhile' }),
}).meta({ id: 'HoldAnswer', description: 'What became of a pause or unpause of a workflow or trigger' });

export const RunHoldListSchema = z.object({ holds: z.array(RunHoldSchema) }).meta({ id: 'RunHoldList' });
