/**
 * The management actions the API and the console share (docs/console.md "Workflows"): checking a
 * workflow definition, creating and deleting a trigger, creating and revoking an API key. The
 * management routes (management.ts) and the console's (console-workflows.ts, console-keys.ts)
 * call these, so both doors apply the same rules; refusals are HttpErrors, which the API answers
 * as JSON and the console shows on its page.
 */
import { ROLES, type Role } from '../../people/roles';
import { z } from 'zod';
import { definitionSchemas, WorkflowDefinitionSchema, type WorkflowDefinition } from '../../common/definition';
import { jsonDepthExceeds, tooDeepMessage } from '../../common/json-depth';
import { hashSecret, randomToken } from '../../crypto/secrets';
import { RegistryError, type TriggerRecord } from '../../registry';
import { inputSchemaProblem } from '../../runs/input-schema';
import { triggerBody } from '../../contracts/trigger-bodies';
import { forgetApiKeys } from '../auth';
import type { GatewayDeps } from '../deps';
import { badRequest, conflict, HttpError, notFound } from '../http-error';
import { CallbackUrlSchema } from '../../runs/callback-url';
import { PrioritySchema } from '../../common/priority-schema';
import { checkScheduleInputs, convergeOrUndo, parseScheduleBody } from './schedules';
import { BatchSchema, DebounceSchema, VerifySchema } from '../../triggers/webhooks/config';
import type { TriggerWebhookParts, WebhookReceiver } from '../../triggers/webhooks/receiver';

export const API_KEY_PREFIX = 'fgk_';
export const CreateApiKeySchema = z.object({
  name: z.string().min(1).max(200).optional(),
  /** limits the key (and the runtime tokens minted from it) to a role: docs/people-and-roles.md */
  role: z.enum(ROLES).optional(),
}).strict();

export const CreateTriggerSchema = z.object({
  workflowId: z.string().min(1),
  name: z.string().min(1).max(200).optional(),
  designatedOutput: z.object({ stepIndex: z.number().int().min(1), fileName: z.string().min(1).max(255).optional() }).strict().optional(),
  /** offers the trigger as a tool of the organization's `workflows` tool server */
  tool: z.object({
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1 to 64 letters, digits, _, . or -'),
    description: z.string().min(1).max(2000),
  }).strict().optional(),
  /** completion callback URL of every run the trigger starts (a call's X-Pf-Callback-Url wins) */
  callbackUrl: CallbackUrlSchema.optional(),
  /** Temporal priority key of the runs it starts (src/common/priority.ts) */
  priority: PrioritySchema.nullable().optional(),
  /**
   * at most `limit` of its runs in progress; more wait PENDING in a queue. `newest-wins` (limit 1): a
   * new run supersedes the waiting one and cancels the one in progress (docs/http-api.md#concurrency-limits)
   */
  concurrency: z.object({
    limit: z.number().int().min(1).max(10_000),
    mode: z.enum(['queue', 'newest-wins']).optional(),
  }).strict().refine((c) => c.mode !== 'newest-wins' || c.limit === 1, { message: 'newest-wins needs limit 1', path: ['limit'] }).optional(),
  /** runs the trigger on a Temporal Schedule too (parsed by parseScheduleBody) */
  schedule: z.unknown().optional(),
  /** verified by the sender's signature instead of an API key (docs/webhooks.md) */
  verify: VerifySchema.optional(),
  /** one run per burst of calls (docs/webhooks.md#debounce-and-batch) */
  debounce: DebounceSchema.optional(),
  /** one run per `size` calls (docs/webhooks.md#debounce-and-batch) */
  batch: BatchSchema.optional(),
}).strict();

/** The definition schema: the step kinds registered at start are accepted beside the built-in ones. */
export function definitionSchemaOf(deps: Pick<GatewayDeps, 'stepKinds'>): z.ZodType<WorkflowDefinition> {
  return deps.stepKinds?.length ? definitionSchemas(deps.stepKinds).WorkflowDefinitionSchema : WorkflowDefinitionSchema;
}

export interface DefinitionIssue {
  path: (string | number)[];
  message: string;
}

/** A workflow definition, with an `inputSchema` that compiles (so a trigger never meets a broken one), or each problem with its path. */
export function checkDefinition(schema: z.ZodType<WorkflowDefinition>, value: unknown): { ok: true; definition: WorkflowDefinition } | { ok: false; issues: DefinitionIssue[] } {
  if (jsonDepthExceeds(value)) return { ok: false, issues: [{ path: [], message: tooDeepMessage() }] };
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) return { ok: false, issues: parsed.error.issues.map((i) => ({ path: i.path.filter((p) => typeof p !== 'symbol'), message: i.message })) };
  const problem = inputSchemaProblem(parsed.data.inputSchema);
  if (problem) return { ok: false, issues: [{ path: ['inputSchema'], message: `not a usable JSON Schema: ${problem}` }] };
  return { ok: true, definition: parsed.data };
}

/** checkDefinition for the API: 400 invalid_definition listing the problems (`steps.2.url: …; …`). */
export function parseDefinition(schema: z.ZodType<WorkflowDefinition>, value: unknown): WorkflowDefinition {
  const checked = checkDefinition(schema, value);
  if (!checked.ok) throw badRequest('invalid_definition', checked.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  return checked.definition;
}

/**
 * After the registry row is gone: a Temporal schedule that cannot be deleted now is an orphan
 * the reconciler deletes (ScheduleService); the caller's delete has happened either way.
 */
export async function deleteScheduleLogged(deps: GatewayDeps, triggerId: string): Promise<void> {
  await deps.schedules.deleteSchedule(triggerId).catch((err: unknown) => {
    deps.log.warn('could not delete the Temporal schedule of a deleted trigger; the reconciler will', { triggerId, error: err });
  });
}

/** A verified or shaped trigger's fields (docs/webhooks.md); none for an ordinary one. */
function webhookFields(deps: GatewayDeps, parts: TriggerWebhookParts): ReturnType<WebhookReceiver['triggerFields']> | undefined {
  if (parts.verify === undefined && parts.debounce === undefined && parts.batch === undefined) return undefined;
  // checked here, not by a refinement: the OpenAPI document extends the schema, which a refined one cannot be
  if (parts.debounce && parts.batch) throw badRequest('invalid_body', 'batch: a trigger debounces or batches, not both');
  if (!deps.webhooks) throw new HttpError(501, 'not_available', 'this gateway offers no verified or shaped triggers');
  return deps.webhooks.triggerFields(parts);
}

/** A new trigger of the organization's workflow, with its schedule converged; its body as the API answers it. */
export async function createTrigger(deps: GatewayDeps, orgId: string, parsed: z.infer<typeof CreateTriggerSchema>): Promise<ReturnType<typeof triggerBody>> {
  const { schedule: scheduleField, verify, debounce, batch, ...input } = parsed;
  const schedule = scheduleField === undefined ? undefined : parseScheduleBody(scheduleField);
  if (schedule && await deps.registry.workflows.get(orgId, input.workflowId)) await checkScheduleInputs(deps, input.workflowId, schedule);
  let trigger: TriggerRecord;
  try {
    trigger = await deps.registry.triggers.create(orgId, { ...input, ...webhookFields(deps, { verify, debounce, batch }), schedule });
  } catch (err) {
    if (!(err instanceof RegistryError)) throw err;
    if (err.code === 'NOT_FOUND') throw notFound('unknown_workflow', `no workflow ${input.workflowId}`);
    if (err.code === 'NOT_PUBLISHED') throw conflict('not_published', `workflow ${input.workflowId} has no published version: publish it first`);
    if (err.code === 'CONFLICT') throw conflict('tool_name_taken', err.message);
    throw new HttpError(422, 'invalid_designated_output', err.message);
  }
  // The row (with its schedule) is committed first: see ScheduleService for why.
  if (schedule) await convergeOrUndo(deps, trigger.id, async () => { await deps.registry.triggers.delete(orgId, trigger.id); });
  return triggerBody(trigger, schedule && await deps.registry.schedules.get(orgId, trigger.id));
}

/**
 * Deletes the organization's workflow with its versions and triggers, and the Temporal schedules
 * of those triggers; false when it has no such workflow. Runs already started go on.
 */
export async function deleteWorkflow(deps: GatewayDeps, orgId: string, workflowId: string): Promise<boolean> {
  const scheduled = await deps.registry.schedules.list(orgId, workflowId);
  if (!(await deps.registry.workflows.delete(orgId, workflowId))) return false;
  for (const schedule of scheduled) await deleteScheduleLogged(deps, schedule.triggerId);
  return true;
}

/** Deletes the organization's trigger (and its schedule); false when it has no such trigger. */
export async function deleteTrigger(deps: GatewayDeps, orgId: string, triggerId: string): Promise<boolean> {
  const scheduled = await deps.registry.schedules.get(orgId, triggerId);
  if (!(await deps.registry.triggers.delete(orgId, triggerId))) return false;
  if (scheduled) await deleteScheduleLogged(deps, scheduled.triggerId);
  return true;
}

/**
 * A new API key: the key itself is returned here only (the registry keeps its hash). `memberId`:
 * the member who created it, whose removal revokes it (docs/people-and-roles.md "Offboarding").
 */
export async function createApiKey(deps: GatewayDeps, orgId: string, name: string | null, role: Role | null = null, memberId: string | null = null): Promise<{ id: string; name: string | null; key: string; role?: Role }> {
  const key = randomToken(API_KEY_PREFIX);
  const record = await deps.registry.apiKeys.create(orgId, name, hashSecret(key), role, memberId);
  return { id: record.id, name: record.name, key, ...(record.role ? { role: record.role } : {}) };
}

/** Revokes the organization's key at once (caches forgotten); false when it has no such live key. */
export async function revokeApiKey(deps: GatewayDeps, orgId: string, keyId: string): Promise<boolean> {
  if (!(await deps.registry.apiKeys.revoke(orgId, keyId))) return false;
  forgetApiKeys(deps.registry);
  deps.runtimeTokens.forgetKeys();
  return true;
}
