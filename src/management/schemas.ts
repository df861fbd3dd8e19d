/**
 * The inputs of the management operations, parsed once at each door (the API's JSON bodies, the
 * console's forms) and handed to the services typed; the OpenAPI document shows them.
 */
import { z } from 'zod';
import { PrioritySchema } from '../common/priority-schema';
import { ROLES } from '../people/roles';
import { CallbackUrlSchema } from '../runs/callback-url';
import { BatchSchema, DebounceSchema, VerifySchema } from '../triggers/webhooks/config';

export const CreateOrgSchema = z.object({ name: z.string().min(1).max(200) }).strict();

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
