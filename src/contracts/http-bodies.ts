/**
 * The response bodies of the HTTP API as zod schemas: the builders in run-bodies.ts and the routes
 * are typed by them, and the OpenAPI document (openapi.ts) is generated from them. Bodies are open
 * objects (more fields may be added; clients ignore what they do not know), their fields are not.
 */
import { z } from 'zod';
import { CallbackState } from '../common/run-types';
import { OperatorPauseSchema, OperatorWaitSchema } from './operator-bodies';
import { OVERLAP_POLICIES } from './schedule-bodies';
import { ApprovalDecisionSchema, DecisionOutcomeSchema } from './decision-bodies';

const RUN_STATUSES = ['PENDING', 'RUNNING', 'PAUSED', 'COMPLETE', 'FAILED', 'TIMEOUT'] as const;
export const RunStatusSchema = z.enum(RUN_STATUSES).meta({ id: 'RunStatus', description: 'A run\'s status' });
/** A step's status: a run's, or SKIPPED (its `if` was false, or a `parallel` first-mode loser). */
export const StepStatusSchema = z.enum([...RUN_STATUSES, 'SKIPPED']).meta({ id: 'StepStatus', description: 'A step\'s status' });

export const ErrorBodySchema = z.object({
  error: z.string().meta({ description: 'a stable machine code, e.g. unknown_trigger, invalid_inputs, unauthorized' }),
  message: z.string().meta({ description: 'a sentence for a person' }),
}).meta({ id: 'Error', description: 'Every HTTP error outside the tool gateway' });

const isoTime = z.string().meta({ description: 'ISO 8601 UTC', example: '2026-01-01T12:00:00.000Z' });

export const FileLinkSchema = z.looseObject({
  url: z.string().meta({ description: 'a signed link to GET /files/…, valid FLOWGATE_RESULT_URL_TTL_SECONDS' }),
  mimeType: z.string(),
  size: z.number().int().min(0),
}).meta({ id: 'FileLink' });

const ResultUrlsSchema = z.record(z.string(), FileLinkSchema).meta({ description: 'the step\'s files by name (output.txt, stdout.txt, …)' });

/** The fields the synchronous answer (2.3) and the results (2.6) share. */
const runHeader = {
  automationId: z.string(),
  automationVersion: z.number().int(),
  automationName: z.string(),
  id: z.string().meta({ description: 'the run ID' }),
  type: z.enum(['TRIGGER', 'SCHEDULE']),
  started: isoTime,
  sourceCommit: z.string().optional().meta({ description: 'the source commit the run\'s version was applied from (docs/definitions-as-code.md)' }),
  status: RunStatusSchema,
  error: z.string().optional().meta({ description: 'why the run did not complete' }),
};

export const SyncResultBodySchema = z.looseObject({
  ...runHeader,
  stepMap: z.record(z.string(), z.number().int()),
  inputs: z.unknown().meta({ description: 'the run\'s inputs, or "" when there were none' }),
  triggerId: z.string(),
  results: z.array(z.looseObject({
    stepIndex: z.number().int(),
    stepVersion: z.number().int(),
    result: z.looseObject({ stepIndex: z.number().int(), resultType: z.enum(['markdown', 'plaintext', 'json']), result: z.string() }),
    truncated: z.literal(true).optional().meta({ description: 'the result was cut; resultUrls links the whole output' }),
    resultUrls: ResultUrlsSchema.optional(),
    exitCode: z.number().int(),
    duration: z.number().meta({ description: 'milliseconds' }),
  })),
  startedBy: z.string(),
}).meta({ id: 'SyncResult', description: 'A synchronous trigger call whose run ended within the wait window (contract 2.3)' });
export type SyncResultBody = z.infer<typeof SyncResultBodySchema>;

export const PollingHandleSchema = z.looseObject({
  runId: z.string(),
  automationId: z.string(),
  status: z.literal('RUNNING'),
  statusUrl: z.string(),
  resultsUrl: z.string(),
  retryAfterSeconds: z.number().int(),
  message: z.string(),
}).meta({ id: 'PollingHandle', description: 'A synchronous call whose run outlived the wait window (contract 2.4)' });
export type PollingHandle = z.infer<typeof PollingHandleSchema>;

export const WaitingOnSchema = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('timer'), stepIndex: z.number().int(), resumeAt: isoTime }),
  z.looseObject({
    kind: z.literal('approval'),
    stepIndex: z.number().int(),
    deadline: isoTime,
    required: z.number().int(),
    approvals: z.number().int().meta({ description: 'approvals so far' }),
    approvers: z.array(z.string()).meta({ description: 'approvers who have not decided yet' }),
  }),
  z.looseObject({
    kind: z.literal('slot'),
    scope: z.enum(['trigger', 'organization']).meta({ description: 'whose concurrency limit the run waits under' }),
    limit: z.number().int(),
    position: z.number().int().min(1).optional().meta({ description: 'its place in the queue (1: next to start), when known' }),
  }),
  OperatorWaitSchema,
]).meta({ id: 'WaitingOn', description: 'Why a PAUSED run waits (a timer, an approval, an operator\'s pause), or why a PENDING one has not started (a concurrency slot, a paused workflow or trigger)' });
export type WaitingOnBody = z.infer<typeof WaitingOnSchema>;

export const CallbackStatusSchema = z.looseObject({
  state: z.enum(CallbackState).meta({
    description: 'PENDING (the run has not ended), DELIVERING, DELIVERED, FAILED (all attempts failed, or refused), NOT_SENT (terminated in Temporal, or closed by its backstop timeout)',
  }),
  attempts: z.number().int().min(0),
  lastError: z.string().optional().meta({ description: 'the last failed attempt\'s reason' }),
}).meta({ id: 'CallbackStatus', description: 'Where the run\'s completion callback is (runs that name a callback URL)' });

export const RunOriginSchema = z.looseObject({
  kind: z.enum(['rerun', 'resume']),
  runId: z.string().meta({ description: 'the earlier run' }),
}).meta({ id: 'RunOrigin', description: 'The run was started by an operator from another run' });

export const StatusBodySchema = z.looseObject({
  automationId: z.string(),
  runId: z.string(),
  status: RunStatusSchema,
  error: z.string().optional(),
  reasonCode: z.enum(['CANCELLED', 'TERMINATED']).optional().meta({ description: 'why a FAILED run ended when no step failed: cancelled or terminated by an operator (the status stays FAILED)' }),
  waitingOn: WaitingOnSchema.optional(),
  stepStatus: z.record(z.string(), StepStatusSchema),
  stepInfo: z.record(z.string(), z.looseObject({
    status: StepStatusSchema,
    name: z.string(),
    executionOrder: z.number().int().nullable(),
    progress: z.unknown().optional().meta({ description: 'a long step\'s progress (forEach: items done)' }),
    reusedFrom: z.string().optional().meta({ description: 'a resumed run\'s reused step: the run whose outcome it is' }),
  })),
  callback: CallbackStatusSchema.optional(),
  origin: RunOriginSchema.optional(), operatorPause: OperatorPauseSchema.optional(),
  sourceCommit: z.string().optional().meta({ description: 'the source commit the run\'s version was applied from (docs/definitions-as-code.md)' }),
}).meta({ id: 'RunStatusBody', description: 'A run\'s status (contract 2.5)' });
export type StatusBody = z.infer<typeof StatusBodySchema>;

/** Tokens and cost of model calls (src/common/agent-usage.ts usageView). */
export const UsageViewSchema = z.looseObject({
  totalTokens: z.number().int(), promptTokens: z.number().int(), completionTokens: z.number().int(), cachedPromptTokens: z.number().int(),
  costUsd: z.string().nullable().meta({ description: 'USD as a decimal string at FLOWGATE_MODEL_PRICES; null when no model called has a price' }),
  costNote: z.string().optional(),
  byModel: z.array(z.looseObject({
    model: z.string(), calls: z.number().int(), promptTokens: z.number().int(), completionTokens: z.number().int(), cachedPromptTokens: z.number().int(),
    totalTokens: z.number().int(), costUsd: z.string().nullable(), costNote: z.string().optional(),
  })),
}).meta({ id: 'Usage' });

export const ResultsBodySchema = z.looseObject({
  ...runHeader,
  results: z.array(z.looseObject({
    stepIndex: z.number().int(),
    stepVersion: z.number().int(),
    resultUrls: ResultUrlsSchema,
    exitCode: z.number().int(),
    duration: z.number(),
    usage: UsageViewSchema.optional().meta({ description: 'an agent step\'s model usage' }),
  })),
  usage: UsageViewSchema.optional().meta({ description: 'the sum of the agent steps\' model usage, when the run has any' }),
  designatedOutput: z.looseObject({ url: z.string(), fileName: z.string(), mimeType: z.string(), size: z.number().int() }).optional(),
}).meta({ id: 'RunResults', description: 'A run\'s results as signed file links (contract 2.6)' });
export type ResultsBody = z.infer<typeof ResultsBodySchema>;

export { ApprovalDecisionSchema, DecisionAcceptedSchema, DecisionOutcomeSchema, DecisionRecordedSchema, DecisionReportSchema } from './decision-bodies';

export const RuntimeTokenSchema = z.looseObject({
  token: z.string().meta({ description: 'a bearer token for the tool gateway' }),
  expiresAt: isoTime,
}).meta({ id: 'RuntimeToken' });

export const HealthSchema = z.looseObject({
  status: z.enum(['ok', 'down']), temporal: z.enum(['ok', 'down']), registry: z.enum(['ok', 'down']),
  worker: z.literal('down').optional().meta({ description: 'present when the worker of this process stopped polling because its data keys cannot open a run it was handed' }),
}).meta({ id: 'Health' });

// ---- management API

const DesignatedOutputSchema = z.looseObject({ stepIndex: z.number().int(), fileName: z.string().optional() });

export const WorkflowSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  draft: z.record(z.string(), z.unknown()).meta({ description: 'the draft definition (the WorkflowDefinition request schema)' }),
  publishedVersion: z.number().int().nullable(),
  versions: z.array(z.number().int()),
  createdAt: isoTime,
  updatedAt: isoTime,
}).meta({ id: 'Workflow' });

export const WorkflowListSchema = z.looseObject({
  workflows: z.array(z.looseObject({ id: z.string(), name: z.string(), publishedVersion: z.number().int().nullable(), createdAt: isoTime, updatedAt: isoTime })),
}).meta({ id: 'WorkflowList' });

export const PublishedVersionSchema = z.looseObject({
  workflowId: z.string(), version: z.number().int(), stepMap: z.record(z.string(), z.number().int()),
}).meta({ id: 'PublishedVersion' });

const DurationText = z.string().meta({ description: 'a duration such as "30s" or "15m"' });

export const ScheduleStateSchema = z.looseObject({
  paused: z.boolean(),
  note: z.string().nullable(),
  automationVersion: z.number().int().nullable().meta({ description: 'the workflow version scheduled runs start with' }),
  nextFireTimes: z.array(isoTime),
  recentRuns: z.array(z.looseObject({ runId: z.string(), scheduledAt: isoTime, startedAt: isoTime })),
  runningRuns: z.array(z.string()),
  actionsTaken: z.number().int(),
  actionsSkippedOverlap: z.number().int(),
}).meta({ id: 'ScheduleState', description: 'The Temporal schedule\'s live state' });

export const ScheduleViewSchema = z.looseObject({
  scheduleId: z.string().meta({ description: 'the Temporal schedule\'s ID' }),
  revision: z.number().int(),
  cron: z.array(z.string()).optional(),
  interval: z.looseObject({ every: DurationText, offset: DurationText.optional() }).optional(),
  timeZone: z.string(),
  startAt: isoTime.optional(),
  endAt: isoTime.optional(),
  jitter: DurationText.optional(),
  overlap: z.enum(OVERLAP_POLICIES),
  catchupWindow: DurationText.optional(),
  inputs: z.record(z.string(), z.unknown()).optional(),
  updatedAt: isoTime,
  state: ScheduleStateSchema.optional().meta({ description: 'in the answers of GET /api/v1/triggers/{id} and the schedule calls' }),
}).meta({ id: 'ScheduleView', description: 'A trigger\'s schedule as stored' });

export const ScheduleListSchema = z.looseObject({
  schedules: z.array(ScheduleViewSchema.extend({ triggerId: z.string(), workflowId: z.string().nullable() })),
}).meta({ id: 'ScheduleList' });

export const TriggerSchema = z.looseObject({
  id: z.string(),
  workflowId: z.string(),
  name: z.string().nullable(),
  designatedOutput: DesignatedOutputSchema.nullable(),
  tool: z.looseObject({ name: z.string(), description: z.string() }).nullable(),
  createdAt: isoTime,
  enabled: z.boolean().meta({ description: 'false: calls answer 409 trigger_disabled' }),
  disabledAt: isoTime.nullable(),
  callbackUrl: z.string().nullable().meta({ description: 'the completion callback URL of every run it starts (a call\'s X-Pf-Callback-Url wins)' }),
  priority: z.number().int().nullable().meta({ description: 'Temporal priority key of the runs it starts (1 first .. 5 last); null: the default (3)' }),
  concurrency: z.looseObject({ limit: z.number().int(), mode: z.enum(['queue', 'newest-wins']).optional() }).nullable().optional()
    .meta({ description: 'at most `limit` of its runs in progress (more wait PENDING); null: no limit of its own' }),
  schedule: ScheduleViewSchema.nullable(),
}).meta({ id: 'Trigger' });
export type TriggerBody = z.infer<typeof TriggerSchema>;

export const TriggerListSchema = z.looseObject({ triggers: z.array(TriggerSchema) }).meta({ id: 'TriggerList' });

export const ApiKeyListSchema = z.looseObject({
  apiKeys: z.array(z.looseObject({
    id: z.string(), name: z.string().nullable(), createdAt: isoTime, revokedAt: isoTime.nullable(), role: z.string().nullable(),
    memberId: z.string().nullable().meta({ description: 'the member who created the key (their removal revokes it); null: an admin token did' }),
  })),
}).meta({ id: 'ApiKeyList' });

export const ApiKeyCreatedSchema = z.looseObject({
  id: z.string(), name: z.string().nullable(), key: z.string().meta({ description: 'shown once' }), role: z.string().optional(),
}).meta({ id: 'ApiKeyCreated' });

const adminTokenId = z.string().meta({ description: 'the token\'s name in the audit trail (`adm_` + the start of its SHA-256), never the token' });
export const OrgCreatedSchema = z.looseObject({ id: z.string(), name: z.string(), adminToken: z.string(), adminTokenId }).meta({ id: 'OrgCreated' });
export const AdminTokenSchema = z.looseObject({ id: z.string().optional(), adminToken: z.string(), adminTokenId }).meta({ id: 'AdminToken' });

export const RunListSchema = z.looseObject({
  runs: z.array(z.looseObject({
    runId: z.string(), automationId: z.string(), automationVersion: z.number().int(), status: RunStatusSchema, started: isoTime, closed: isoTime.nullable(),
  })),
}).meta({ id: 'RunList' });

export const CancelAcceptedSchema = z.looseObject({
  runId: z.string(), automationId: z.string(), cancelRequested: z.literal(true),
}).meta({ id: 'CancelAccepted' });

export const RestartedRunSchema = z.looseObject({
  runId: z.string().meta({ description: 'the new run' }),
  automationId: z.string(),
  automationVersion: z.number().int(),
  origin: RunOriginSchema,
  statusUrl: z.string().meta({ description: 'the new run\'s status (GET /api/v1/runs/{runId})' }),
  fromStep: z.number().int().optional().meta({ description: 'resume: the first step the new run runs' }),
  reusedSteps: z.array(z.number().int()).optional().meta({ description: 'resume: the steps whose outcomes were reused' }),
}).meta({ id: 'RestartedRun', description: 'A new run started from an earlier one (rerun or resume)' });

export const WebhookSecretSchema = z.looseObject({
  secret: z.string().meta({ description: '`whsec_` + base64 of 32 random bytes' }),
  createdAt: isoTime,
  rotatedAt: isoTime.nullable(),
  previousSignsUntil: isoTime.nullable().meta({ description: 'until then the previous secret signs callbacks too' }),
}).meta({ id: 'WebhookSecret', description: 'The organization\'s completion-callback signing secret (Standard Webhooks)' });

export const RunApprovalsSchema = z.looseObject({
  runId: z.string(),
  automationId: z.string(),
  status: RunStatusSchema,
  approvals: z.array(z.looseObject({
    stepIndex: z.number().int(),
    stepName: z.string().optional(),
    message: z.string(),
    deadline: isoTime,
    required: z.number().int(),
    decisions: z.array(ApprovalDecisionSchema),
    approvers: z.array(z.looseObject({ approver: z.string(), decided: z.boolean(), link: z.string().optional() })),
  })),
  decisionOutcomes: z.array(DecisionOutcomeSchema).meta({ description: 'what became of the decisions sent through the API, links, the console and MCP, oldest first (the last 100; empty while the run does not answer)' }),
}).meta({ id: 'RunApprovals' });

// ---- the tool gateway (JSON-RPC 2.0)

export { JsonRpcFailureSchema, JsonRpcResponseSchema, JsonRpcSuccessSchema } from './mcp';
