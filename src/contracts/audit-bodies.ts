/**
 * `GET /api/v1/audit` (docs/audit.md): its query, and the page it answers. The route, the OpenAPI
 * document and the CLI share these.
 */
import { z } from 'zod';

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 500;

const isoDateTime = z.iso.datetime({ offset: true }).transform((text) => new Date(text).toISOString());

export const AuditQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(AUDIT_PAGE_MAX).default(AUDIT_PAGE_DEFAULT)
    .meta({ description: `records per page (1 to ${AUDIT_PAGE_MAX}, default ${AUDIT_PAGE_DEFAULT})` }),
  cursor: z.string().regex(/^aud_[0-9a-f]{28}$/, 'must be a nextCursor from a previous page').optional()
    .meta({ description: 'the previous page\'s nextCursor: older records' }),
  action: z.string().regex(/^[a-z_]+(\.[a-z_]+)*(\.|\.\*|\*)?$/, 'must be an action (workflow.published) or a prefix of one (workflow. or workflow.*)').max(100).optional()
    .meta({ description: 'an action, or a prefix ending in `.` or `*` (`api_key.*`)' }),
  actor: z.string().min(1).max(400).optional().meta({ description: 'an actor exactly (`admin`, `instance-admin`, `api-key:<id>`, `member:<id>`, `approver:<name>`), or an e-mail address: every record of the member or approver who has it' }),
  target: z.string().min(1).max(400).optional().meta({ description: '`<type>` or `<type>:<id>` (`workflow:wf_…`, `tool:mail/send_mail`)' }),
  outcome: z.enum(['success', 'refused', 'failed']).optional(),
  since: isoDateTime.optional().meta({ description: 'records at or after this time (ISO 8601)' }),
  until: isoDateTime.optional().meta({ description: 'records before this time (ISO 8601)' }),
}).strict().refine((q) => q.since === undefined || q.until === undefined || q.since < q.until, { message: 'since must be before until', path: ['since'] });

export type AuditQuery = z.infer<typeof AuditQuerySchema>;

export const AuditRecordSchema = z.looseObject({
  id: z.string(),
  at: z.string().meta({ description: 'ISO 8601 UTC' }),
  actor: z.string(),
  actorName: z.string().nullable().meta({ description: 'the API key\'s name, when the actor is one' }),
  credential: z.looseObject({ kind: z.enum(['admin_token', 'api_key', 'runtime_token', 'approval_link', 'console_session', 'oauth_token', 'member_token']), id: z.string() }),
  action: z.string(),
  target: z.looseObject({ type: z.string(), id: z.string().nullable() }).nullable(),
  outcome: z.enum(['success', 'refused', 'failed']),
  status: z.number().int().meta({ description: 'the HTTP status the caller was answered' }),
  source: z.looseObject({ ip: z.string().nullable(), userAgent: z.string().nullable(), requestId: z.string().nullable() }),
  details: z.record(z.string(), z.unknown()),
}).meta({ id: 'AuditRecord' });

export const AuditPageSchema = z.looseObject({
  records: z.array(AuditRecordSchema).meta({ description: 'newest first' }),
  nextCursor: z.string().nullable().meta({ description: 'pass as `cursor` for the next (older) page; null on the last' }),
}).meta({ id: 'AuditPage' });

export type AuditRecordBody = z.infer<typeof AuditRecordSchema>;
