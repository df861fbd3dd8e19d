/**
 * What a step kind is made of on the definition side: the fields every step has (`stepBase`),
 * `stepKindSchema` to build a kind's schema from them, the building blocks several kinds share
 * (expressions, durations, retry, the polling condition), and `DefinitionStepKind`, what the
 * definition schema and its flow checks ask of a kind (definition.ts, flow-validation.ts).
 *
 * Every kind carries its own: the runStep activity's kinds in their folders in activities/steps/,
 * the workflow's own kinds in src/common/steps/. Sandbox-safe (zod, no Node), so any kind's
 * schema may sit where workflow code could import it; workflow code imports types only from here,
 * so that its bundle carries no zod.
 */
import { z } from 'zod';
import { DURATION_PATTERN, durationMs } from './duration';

/** A JSONata expression (checked to parse when the definition is validated). */
export const ExpressionSchema = z.string().min(1).max(10_000);

/**
 * A step's own retry policy, mapped onto its activity's Temporal retry policy: a step that ran and
 * failed is tried again (as a worker that died is), up to `maxAttempts` in all.
 */
export const RetrySchema = z.object({
  maxAttempts: z.number().int().min(1).max(100),
  initialInterval: z.string().regex(DURATION_PATTERN, 'must be a duration such as 500ms, 30s, 5m').default('1s'),
  backoff: z.number().min(1).max(100).default(2),
  maxInterval: z.string().regex(DURATION_PATTERN, 'must be a duration such as 500ms, 30s, 5m').optional(),
  /** failure types not to retry: TIMEOUT, OUT_OF_MEMORY, FAILED, HTTP_<status> or HTTP_4XX / HTTP_5XX */
  nonRetryable: z.array(z.string().regex(/^(TIMEOUT|OUT_OF_MEMORY|FAILED|HTTP_[1-5](\d\d|XX))$/,
    'must be TIMEOUT, OUT_OF_MEMORY, FAILED, HTTP_<status> (HTTP_503) or HTTP_4XX / HTTP_5XX')).max(50).default([]),
}).strict();

export type Retry = z.infer<typeof RetrySchema>;

/** The fields every step has, whatever its kind. */
export const stepBase = {
  name: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  /** run the step only when this expression is truthy; otherwise it is SKIPPED */
  if: ExpressionSchema.optional(),
  /** `continue`: a failed step does not end the run (or its list); later steps see its exitCode */
  onError: z.enum(['continue', 'fail']).optional(),
  /** only on the steps of kinds the runStep activity executes (flow-validation.ts refuses it elsewhere) */
  retry: RetrySchema.optional(),
};

export type StepCommon = z.infer<z.ZodObject<typeof stepBase>>;

/** What every kind's schema holds: the fields every step has and `type` (and the kind's own). */
export type StepKindShape = typeof stepBase & { type: z.ZodType<string, unknown> };

/** The schema of a kind's steps: the fields every step has, `type`, and the kind's own; strict. */
export function stepKindSchema<T extends string, F extends z.ZodRawShape>(type: T, fields: F) {
  return z.object({ ...stepBase, type: z.literal(type), ...fields }).strict();
}

/** A wait longer than this is surely a typo; it also keeps timer instants within what a Date can hold. */
export const MAX_DURATION_MS = 366 * 86_400_000;

export const DurationSchema = z.string()
  .regex(DURATION_PATTERN, 'must be a duration such as 500ms, 30s, 5m, 2h or 1d')
  // zod runs this even when the pattern failed: only judge text that is a duration
  .refine((text) => !DURATION_PATTERN.test(text) || durationMs(text) <= MAX_DURATION_MS, 'must be at most 366d');

/** A condition on a JSON result: the value at a dotted path (`run.status`, `items.0.id`) is one of `in`. */
export const UntilSchema = z.object({
  path: z.string().min(1).max(500).regex(/^[^.]+(\.[^.]+)*$/, 'must be a dotted path such as run.status'),
  in: z.array(z.union([z.string(), z.number(), z.boolean(), z.null()])).min(1).max(100),
}).strict();

export type Until = z.infer<typeof UntilSchema>;

/**
 * A step of a kind the workflow does not know by its fields: the common fields, its `type` and its
 * own fields, which only the kind's runStep code reads (every kind of activities/steps/ and those
 * registered at start).
 */
export interface RegisteredStep extends StepCommon {
  type: string;
  [field: string]: unknown;
}

/** A problem a kind's own check finds, at a path relative to the step. */
export interface StepProblem {
  path: (string | number)[];
  message: string;
}

/** Where a step sits in its definition, as a kind's own check sees it. */
export interface StepPlace {
  /** the step could run while another step of the run runs: in a parallel step, or in a forEach with concurrency above 1, at any depth */
  concurrent: boolean;
}

/**
 * A step kind as definitions see it: the built-in ones (activities/steps/ and src/common/steps/)
 * and those registered at start (startFlowgate's `stepKinds`; activities/steps/step-kind.ts has
 * the whole StepKind, with its `run`).
 */
export interface DefinitionStepKind<S extends StepCommon & { type: string } = RegisteredStep> {
  /** the steps' `type`, unique among all kinds */
  readonly type: string;
  /** the whole step: the common fields, `type` and the kind's own (stepKindSchema builds one) */
  readonly schema: z.ZodObject<StepKindShape>;
  /**
   * `workflow`: the workflow runs the steps itself (a wait, an approval, a child workflow: the kinds
   * of src/common/steps/, each with its execution in workflows/steps/); otherwise the runStep
   * activity runs them, and `retry` applies to them
   */
  readonly runsIn?: 'workflow';
  /** what the schema cannot judge: the step in its place in the definition (paths relative to the step) */
  problems?(step: S, place: StepPlace): StepProblem[];
}
