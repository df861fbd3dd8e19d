/**
 * The workflow definition format (ARCHITECTURE.md, "Workflow definitions").
 * Validated with zod at the management API; workflows and activities receive the parsed value.
 * Workflow code imports this module's types only.
 */
import { z } from 'zod';
import { DURATION_PATTERN, durationMs } from './duration';
import { flowProblems } from './flow-validation';

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

const stepBase = {
  name: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  /** run the step only when this expression is truthy; otherwise it is SKIPPED */
  if: ExpressionSchema.optional(),
  /** `continue`: a failed step does not end the run (or its list); later steps see its exitCode */
  onError: z.enum(['continue', 'fail']).optional(),
  /** only on activity steps: template, code, http, tool and the kinds registered at start */
  retry: RetrySchema.optional(),
};

export const TemplateStepSchema = z.object({
  ...stepBase,
  type: z.literal('template'),
  format: z.enum(['markdown', 'plaintext']).default('markdown'),
  template: z.string().max(1_000_000),
}).strict();

export const CodeStepSchema = z.object({
  ...stepBase,
  type: z.literal('code'),
  /** Body of a function of `inputs`, `steps` and `run`; `console.*` output goes to stdout.txt. */
  source: z.string().min(1).max(1_000_000),
  timeoutMs: z.number().int().min(10).max(300_000).default(5_000),
  memoryLimitMb: z.number().int().min(8).max(512).default(64),
}).strict();

export const HttpStepSchema = z.object({
  ...stepBase,
  type: z.literal('http'),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).default('GET'),
  url: z.string().min(1).max(8192),
  headers: z.record(z.string(), z.string()).default({}),
  /** A string is sent as is (after interpolation); an object is interpolated leaf by leaf and sent as JSON. */
  body: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  timeoutMs: z.number().int().min(100).max(300_000).default(30_000),
  /** When false, a non-2xx answer is a successful step whose result carries the status. */
  failOnHttpError: z.boolean().default(true),
  /**
   * The `Idempotency-Key` header sent with the request: by default `<runId>:<stepIndex>`, the same
   * on every retry of the step (a step in flight when a worker dies is sent again); a string
   * (interpolated) to send instead, or false to send none. A header of that name in `headers` wins.
   */
  idempotencyKey: z.union([z.literal(false), z.string().min(1).max(255)]).optional(),
}).strict();

/** A wait longer than this is surely a typo; it also keeps timer instants within what a Date can hold. */
export const MAX_DURATION_MS = 366 * 86_400_000;

const DurationSchema = z.string()
  .regex(DURATION_PATTERN, 'must be a duration such as 500ms, 30s, 5m, 2h or 1d')
  // zod runs this even when the pattern failed: only judge text that is a duration
  .refine((text) => !DURATION_PATTERN.test(text) || durationMs(text) <= MAX_DURATION_MS, 'must be at most 366d');

export const DelayStepSchema = z.object({
  ...stepBase,
  type: z.literal('delay'),
  duration: DurationSchema,
}).strict();

export const WaitUntilStepSchema = z.object({
  ...stepBase,
  type: z.literal('waitUntil'),
  /** an ISO 8601 instant, or a placeholder such as `{{inputs.sendAt}}` that renders one */
  until: z.string().min(1).max(500),
}).strict();

export const ApprovalStepSchema = z.object({
  ...stepBase,
  type: z.literal('approval'),
  /** names or e-mail addresses; each gets a link of its own */
  approvers: z.array(z.string().min(1).max(320).regex(/^[^\s<>"]+( [^\s<>"]+)*$/, 'must be a name or e-mail address')).min(1).max(50),
  /** approvals needed; one rejection is enough to reject */
  required: z.number().int().min(1).default(1),
  timeout: DurationSchema.default('24h'),
  onTimeout: z.enum(['approve', 'reject', 'fail']).default('fail'),
  onReject: z.enum(['fail', 'continue']).default('fail'),
  /** shown to approvers; interpolated */
  message: z.string().max(10_000).default(''),
}).strict().refine((s) => s.required <= new Set(s.approvers.map((a) => a.toLowerCase())).size, {
  message: 'required is more than the number of distinct approvers', path: ['required'],
});

export const TriggerStepSchema = z.object({
  ...stepBase,
  type: z.literal('trigger'),
  triggerId: z.string().min(1).max(100),
  /** interpolated leaf by leaf; a string that is exactly one placeholder keeps the value's type */
  inputs: z.record(z.string(), z.unknown()).default({}),
  /** true: wait for the chained run's result; false: fire and forget (the result is its run ID) */
  wait: z.boolean().default(true),
}).strict();

/** A condition on a JSON result: the value at a dotted path (`run.status`, `items.0.id`) is one of `in`. */
export const UntilSchema = z.object({
  path: z.string().min(1).max(500).regex(/^[^.]+(\.[^.]+)*$/, 'must be a dotted path such as run.status'),
  in: z.array(z.union([z.string(), z.number(), z.boolean(), z.null()])).min(1).max(100),
}).strict();

/** Calls a tool of any gateway server in process (never over HTTP), as the run's organization. */
export const ToolStepSchema = z.object({
  ...stepBase,
  type: z.literal('tool'),
  /** a server path such as `web-search` */
  server: z.string().min(1).max(200).regex(/^\/?[A-Za-z0-9_.-]+$/, 'must be a server path such as web-search'),
  tool: z.string().min(1).max(200),
  /** interpolated leaf by leaf; a string that is exactly one placeholder keeps the value's type */
  arguments: z.record(z.string(), z.unknown()).default({}),
  timeoutMs: z.number().int().min(100).max(300_000).default(60_000),
  /**
   * A durable poll: while the condition on the tool's JSON result is false, the workflow sleeps
   * on a Temporal timer (the step is PAUSED, no worker is held) and calls the tool again.
   */
  until: UntilSchema.optional(),
  /** seconds between calls while `until` is false (default 5); only with `until` */
  pollSeconds: z.number().int().min(1).max(86_400).optional(),
  /** give up (the step ends in TIMEOUT) when `until` is still false after this long (default 3600); only with `until` */
  maxWaitSeconds: z.number().int().min(1).max(MAX_DURATION_MS / 1000).optional(),
}).strict().superRefine((step, ctx) => {
  for (const field of ['pollSeconds', 'maxWaitSeconds'] as const) {
    if (step[field] !== undefined && step.until === undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'applies only with until' });
  }
});

/**
 * Invokes an agent of the run's organization as a child workflow of the run; its final answer is
 * the step's result (json with an output schema, else markdown), its tool calls go to stdout.txt.
 */
export const AgentStepSchema = z.object({
  ...stepBase,
  type: z.literal('agent'),
  agentId: z.string().min(1).max(100),
  /** interpolated */
  message: z.string().min(1).max(100_000),
  /** continue this chat (interpolated); default: a new chat per run */
  chatId: z.string().min(1).max(200).optional(),
  /** the invocation's wall-clock limit within this run */
  timeoutSeconds: z.number().int().min(5).max(86_400).default(600),
}).strict();

/**
 * What the definition schema takes of a step kind registered at start (startFlowgate's
 * `stepKinds`; activities/steps/step-kind.ts has the whole StepKind). Its steps are activity steps.
 */
export interface DefinitionStepKind {
  /** the steps' `type`; not one of the built-in types */
  readonly type: string;
  /** the whole step: the common fields, `type` and the kind's own (stepKindSchema builds one) */
  readonly schema: z.ZodObject;
}

/** The schema of a registered kind's steps: the fields every step has, `type`, and the kind's own; strict, as the built-ins are. */
export function stepKindSchema<T extends string, F extends z.ZodRawShape>(type: T, fields: F) {
  return z.object({ ...stepBase, type: z.literal(type), ...fields }).strict();
}

/**
 * The schemas of steps and definitions over the built-in kinds and those registered at start.
 * A definition that uses only built-in kinds validates the same, with the same messages, whatever
 * is registered; a type that is neither built in nor registered is refused.
 */
export function definitionSchemas(registered: readonly DefinitionStepKind[] = []) {
  /** Control flow (workflows/interpreter): step lists nested in a step. */
  const StepListSchema = z.array(z.lazy((): z.ZodType<Step, unknown> => StepSchema)).min(1, 'must have at least one step').max(200);

  /** The first case whose `if` holds runs its steps; none holding, `default` runs (when given). */
  const BranchStepSchema = z.object({
    ...stepBase,
    type: z.literal('branch'),
    cases: z.array(z.object({ if: ExpressionSchema, steps: StepListSchema }).strict()).min(1, 'a branch needs at least one case').max(50),
    default: StepListSchema.optional(),
  }).strict();

  /** Runs `steps` once per item of the array `items` evaluates to, `concurrency` items at a time. */
  const ForEachStepSchema = z.object({
    ...stepBase,
    type: z.literal('forEach'),
    items: ExpressionSchema,
    concurrency: z.number().int().min(1).max(50).default(1),
    steps: StepListSchema,
  }).strict();

  /** Runs several step lists at once; `all` waits for every list, `first` for the first that completes. */
  const ParallelStepSchema = z.object({
    ...stepBase,
    type: z.literal('parallel'),
    mode: z.enum(['all', 'first']).default('all'),
    branches: z.array(z.object({ name: z.string().min(1).max(200).optional(), steps: StepListSchema }).strict()).min(2, 'parallel needs at least two branches').max(20),
  }).strict();

  const builtIn = [
    TemplateStepSchema, CodeStepSchema, HttpStepSchema, ToolStepSchema, DelayStepSchema, WaitUntilStepSchema, ApprovalStepSchema, TriggerStepSchema,
    AgentStepSchema, BranchStepSchema, ForEachStepSchema, ParallelStepSchema,
  ] as const;
  const taken = new Set<string>(builtIn.map((schema) => schema.shape.type.value));
  for (const kind of registered) {
    if (taken.has(kind.type)) throw new Error(`step type ${kind.type} is taken: a built-in kind or one registered twice`);
    taken.add(kind.type);
  }
  // Typed as the built-in union: a registered kind's own fields are read only by its runStep code
  // (activities/steps/), and the workflow runs every type it does not know as an activity step
  // (step-kinds.ts), so nothing typed against `Step` meets them.
  const registeredSchemas = registered.map((kind) => kind.schema) as [];
  const StepSchema = z.discriminatedUnion('type', [...builtIn, ...registeredSchemas]);
  const activityTypes = registered.map((kind) => kind.type);

  const WorkflowDefinitionSchema = z.object({
    name: z.string().min(1).max(200),
    description: z.string().max(5000).optional(),
    timeoutSeconds: z.number().int().min(1).max(31_536_000).default(3600),
    inputSchema: z.record(z.string(), z.unknown()).optional(),
    steps: z.array(StepSchema).min(1).max(200),
    output: z.object({
      stepIndex: z.number().int().min(1),
      fileName: z.string().min(1).max(255).optional(),
    }).strict().optional(),
  }).strict().superRefine((def, ctx) => {
    if (def.output && def.output.stepIndex > def.steps.length) {
      ctx.addIssue({ code: 'custom', path: ['output', 'stepIndex'], message: `no step ${def.output.stepIndex}: the workflow has ${def.steps.length}` });
    }
    for (const problem of flowProblems(def.steps, activityTypes)) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  });
  return { BranchStepSchema, ForEachStepSchema, ParallelStepSchema, StepSchema, WorkflowDefinitionSchema };
}

/** The schemas over the built-in kinds alone. */
export const { BranchStepSchema, ForEachStepSchema, ParallelStepSchema, StepSchema, WorkflowDefinitionSchema } = definitionSchemas();

export type TemplateStep = z.infer<typeof TemplateStepSchema>;
export type CodeStep = z.infer<typeof CodeStepSchema>;
export type HttpStep = z.infer<typeof HttpStepSchema>;
export type ToolStep = z.infer<typeof ToolStepSchema>;
export type Until = z.infer<typeof UntilSchema>;
export type DelayStep = z.infer<typeof DelayStepSchema>;
export type WaitUntilStep = z.infer<typeof WaitUntilStepSchema>;
export type ApprovalStep = z.infer<typeof ApprovalStepSchema>;
export type TriggerStep = z.infer<typeof TriggerStepSchema>;
export type AgentStep = z.infer<typeof AgentStepSchema>;
export type Retry = z.infer<typeof RetrySchema>;
type StepCommon = z.infer<z.ZodObject<typeof stepBase>>;
export interface BranchStep extends StepCommon {
  type: 'branch';
  cases: { if: string; steps: Step[] }[];
  default?: Step[];
}
export interface ForEachStep extends StepCommon {
  type: 'forEach';
  items: string;
  concurrency: number;
  steps: Step[];
}
export interface ParallelStep extends StepCommon {
  type: 'parallel';
  mode: 'all' | 'first';
  branches: { name?: string; steps: Step[] }[];
}
export type FlowStep = BranchStep | ForEachStep | ParallelStep;
export type Step = TemplateStep | CodeStep | HttpStep | ToolStep | DelayStep | WaitUntilStep | ApprovalStep | TriggerStep | AgentStep | FlowStep;
/**
 * A step of a kind registered at start: the common fields, its `type` and its own fields, which
 * only the kind's runStep code reads (the workflow treats it as an activity step).
 */
export interface RegisteredStep extends StepCommon {
  type: string;
  [field: string]: unknown;
}
/**
 * Steps the runStep activity executes: the built-in activity kinds and the registered ones; the
 * others (waits, approvals, chained triggers, control flow) live in the workflow.
 */
export type ActivityStep = TemplateStep | CodeStep | HttpStep | ToolStep | RegisteredStep;

export type StepType = Step['type'];
export type WorkflowDefinition = z.infer<typeof WorkflowDefinitionSchema>;
