/**
 * `GET /api/v1/audit` (admin bearer token; docs/audit.md): the organization's audit trail, newest
 * first, a page at a time, filtered by action (or a prefix), actor, target, outcome and time.
 */
import Router from '@koa/router';
import type { AuditRecord } from '../../audit/audit-trail';
import { AuditQuerySchema, type AuditRecordBody } from '../../contracts/audit-bodies';
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

export function auditRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  router.get('/audit', requireAdmin(deps), async (ctx) => {
    const { limit, ...filter } = parseInput(AuditQuerySchema, ctx.query, 'invalid_query');
    const page = await deps.audit.list(adminOf(ctx).orgId, filter, limit);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { records: page.records.map(auditBody), nextCursor: page.nextCursor };
  });
  return router;
}
