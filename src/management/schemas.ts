/**
 * The inputs of the management operations, parsed once at each door (the API's JSON bodies, the
 * console's forms) and handed to the services typed; the OpenAPI document shows them.
 */
import { z } from 'zod';
import { PrioritySchema } from '../common/priority-schema';
import { ROLES } from '../people/roles';
import { CallbackUrlSchema } from '../runs/callback-url';
import { BatchSchema, DebounceSchema, VerifyChangeSchema, VerifySchema } from '../triggers/webhooks/config';

export const CreateOrgSchema = z.object({ name: z.string().min(1).max(200) }).strict();

export const CreateApiKeySchema = z.object({
  name: z.string().min(1).max(200).optional(),
  /** limits the key (and the runtime tokens minted from it) to a role: docs/people-and-roles.md */
  role: z.enum(ROLES).optional(),
}).strict();

const DesignatedOutputSchema = z.object({ stepIndex: z.number().int().min(1), fileName: z.string().min(1).max(255).optional() }).strict();
const TriggerToolSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1 to 64 letters, digits, _, . or -'),
  description: z.string().min(1).max(2000),
}).strict();
const ConcurrencySchema = z.object({
  limit: z.number().int().min(1).max(10_000),
  mode: z.enum(['queue', 'newest-wins']).optional(),
}).strict().refine((c) => c.mode !== 'newest-wins' || c.limit === 1, { message: 'newest-wins needs limit 1', path: ['limit'] });

export const CreateTriggerSchema = z.object({
  workflowId: z.string().min(1),
  name: z.string().min(1).max(200).optional(),
  designatedOutput: DesignatedOutputSchema.optional(),
  /** offers the trigger as a tool of the organization's `workflows` tool server */
  tool: TriggerToolSchema.optional(),
  /** completion callback URL of every run the trigger starts (a call's X-Pf-Callback-Url wins) */
  callbackUrl: CallbackUrlSchema.optional(),
  /** Temporal priority key of the runs it starts (src/common/priority.ts) */
  priority: PrioritySchema.nullable().optional(),
  /**
   * at most `limit` of its runs in progress; more wait PENDING in a queue. `newest-wins` (limit 1): a
   * new run supersedes the waiting one and cancels the one in progress (docs/http-api.md#concurrency-limits)
   */
  concurrency: ConcurrencySchema.optional(),
  /** runs the trigger on a Temporal Schedule too (checked by TriggerAdmin, which names each problem `schedule.…`) */
  schedule: z.unknown().optional(),
  /** verified by the sender's signature instead of an API key (docs/webhooks.md) */
  verify: VerifySchema.optional(),
  /** one run per burst of calls (docs/webhooks.md#debounce-and-batch); TriggerAdmin refuses it beside `batch` */
  debounce: DebounceSchema.optional(),
  /** one run per `size` calls (docs/webhooks.md#debounce-and-batch) */
  batch: BatchSchema.optional(),
}).strict();
export type CreateTriggerInput = z.infer<typeof CreateTriggerSchema>;

/**
 * PATCH /api/v1/triggers/{id}: the trigger changed in place (same ID, same URL and keys). A field
 * left out is kept; null removes it. Its schedule has its own calls (…/schedule), and `disabled`
 * its own (…/disable, …/enable).
 */
export const UpdateTriggerSchema = z.object({
  workflowId: z.string().min(1).optional(),
  name: z.string().min(1).max(200).nullable().optional(),
  designatedOutput: DesignatedOutputSchema.nullable().optional(),
  tool: TriggerToolSchema.nullable().optional(),
  callbackUrl: CallbackUrlSchema.nullable().optional(),
  priority: PrioritySchema.nullable().optional(),
  concurrency: ConcurrencySchema.nullable().optional(),
  /** null: an API key trigger again (its secrets go) */
  verify: VerifyChangeSchema.nullable().optional(),
  debounce: DebounceSchema.nullable().optional(),
  batch: BatchSchema.nullable().optional(),
}).strict().meta({ id: 'UpdateTrigger' });
export type UpdateTriggerInput = z.infer<typeof UpdateTriggerSchema>;

export const RoleSchema = z.enum(ROLES);
export const CreateMemberSchema = z.object({
  email: z.email().max(320),
  name: z.string().min(1).max(200).optional(),
  role: RoleSchema,
}).strict();
export const UpdateMemberSchema = z.object({
  role: RoleSchema.optional(),
  name: z.string().min(1).max(200).nullable().optional(),
}).strict().refine((b) => b.role !== undefined || b.name !== undefined, { message: 'give a role or a name' });
