/**
 * `GET /api/v1/audit` (admin bearer token; docs/audit.md): the organization's audit trail, newest
 * first, a page at a time, filtered by action (or a prefix), actor, target, outcome and time.
 */
import Router from '@koa/router';
import type { AuditRecord } from '../../audit/audit-trail';
import { AuditPageSchema, AuditQuerySchema, type AuditRecordBody } from '../../contracts/audit-bodies';
import { mount, type Operations } from '../operation';
import { admin as security, errors, json } from '../openapi-kit';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { adminOf, type GatewayRouter, type GatewayState } from '../state';
import { parseInput } from '../validate';

export function auditBody(record: AuditRecord): AuditRecordBody {
  return {
    id: record.id, at: record.at, actor: record.actor, actorName: record.actorName,
    credential: { kind: record.credentialKind as AuditRecordBody['credential']['kind'], id: record.credentialId },
    action: record.action,
    target: record.targetType === null ? null : { type: record.targetType, id: record.targetId },
    outcome: record.outcome, status: record.status,
    source: { ip: record.sourceIp, userAgent: record.userAgent, requestId: record.requestId },
    details: record.details,
  };
}

export const AUDIT_OPERATIONS = {
  listAudit: {
    method: 'get', path: '/api/v1/audit', permission: 'audit.read',
    tags: ['management'], summary: 'The organization\'s audit trail, newest first (docs/audit.md)', security, requestParams: { query: AuditQuerySchema },
    responses: { '200': json(AuditPageSchema, 'a page of records'), ...errors(400, 401) },
  },
} satisfies Operations;

export function auditRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  mount(router, AUDIT_OPERATIONS.listAudit, requireAdmin(deps), async (ctx) => {
    const { limit, ...filter } = parseInput(AuditQuerySchema, ctx.query, 'invalid_query');
    const page = await deps.audit.list(adminOf(ctx).orgId, filter, limit);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { records: page.records.map(auditBody), nextCursor: page.nextCursor };
  });
  return router;
}
