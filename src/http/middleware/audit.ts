/**
 * The management API's audit records (docs/audit.md), one place for every admin route: requireAdmin
 * runs this around the route once the admin token is known. A change (a route whose operation names
 * an audit action, src/http/operation.ts) is recorded whatever its outcome; a read only when it was refused (403,
 * 404: who probed what). The record is written before the answer leaves (see AuditTrail for a
 * write that fails). 401s never get here: an unknown token names no organization.
 */
import type { Next } from 'koa';
import { APPROVAL_DECIDED, READ_REFUSED, type ActionSpec } from '../../audit/actions';
import type { AuditActor, AuditSource, AuditTrail } from '../../audit/audit-trail';
import type { DecideOutcome } from '../../runs/run-service';
import { HttpError } from '../http-error';
import type { AdminPrincipal, GatewayContext } from '../state';
import { routeTemplate } from './observe';
import { operationOf } from '../operation';
import { fieldOf, isObjectLike } from '../../common/narrow';

/** The status a thrown error will be answered with (error-handler.ts's mapping, reduced to the number). */
export function statusOfError(error: unknown): number {
  if (error instanceof HttpError) return error.status;
  if (typeof error === 'object' && error !== null) {
    const status = fieldOf(error, 'status');
    const statusCode = fieldOf(error, 'statusCode');
    const found = typeof status === 'number' ? status : typeof statusCode === 'number' ? statusCode : undefined;
    if (found !== undefined && found >= 400 && found < 600) return found;
  }
  return 500;
}

/** Where the request came from: the peer's address (the gateway trusts no forwarding header) and its user agent. */
/** Where a request came from; any Koa context has these (the gateway's, the console's, the OAuth pages'). */
export function sourceOf(ctx: { request: { ip: string }; get(field: string): string; state: { requestId?: unknown } }): AuditSource {
  return {
    sourceIp: ctx.request.ip || null,
    userAgent: ctx.get('User-Agent') || null,
    requestId: ctx.state.requestId === undefined ? null : String(ctx.state.requestId),
  };
}

/** A path parameter of the route that matched (@koa/router's ctx.params), or null. */
export function pathParam(ctx: object, name: string): string | null {
  const value = fieldOf(fieldOf(ctx, 'params'), name);
  return typeof value === 'string' ? value : null;
}

export function adminActor(admin: AdminPrincipal): AuditActor {
  if (admin.member) return { actor: `member:${admin.member.id}`, actorName: admin.member.email, credentialKind: 'member_token', credentialId: admin.credentialId };
  return { actor: admin.instanceAdmin ? 'instance-admin' : 'admin', actorName: null, credentialKind: 'admin_token', credentialId: admin.credentialId };
}

const MAX_LISTED = 100;
const shortString = (value: unknown): value is string => typeof value === 'string' && value.length <= 200;

/**
 * A few plain fields of the answer (strings, numbers, booleans, lists of at most 100 short strings:
 * the ids of what a removal ended): never the whole body, which may hold a key or token.
 */
function answerDetails(spec: ActionSpec | undefined, body: unknown): Record<string, unknown> {
  return spec?.answerFields ? plainFields(body, spec.answerFields) : {};
}

function plainFields(body: unknown, fields: readonly string[]): Record<string, unknown> {
  if (!isObjectLike(body)) return {};
  const picked: Record<string, unknown> = {};
  for (const field of fields) {
    const value = fieldOf(body, field);
    if (typeof value === 'number' || typeof value === 'boolean' || shortString(value)) picked[field] = value;
    else if (Array.isArray(value) && value.length <= MAX_LISTED && value.every(shortString)) picked[field] = [...value];
  }
  return picked;
}

function targetOf(spec: ActionSpec, ctx: GatewayContext, admin: AdminPrincipal, succeeded: boolean): { type: string; id: string | null } {
  const { id } = spec.target;
  if ('org' in id) return { type: spec.target.type, id: admin.orgId };
  if ('param' in id) return { type: spec.target.type, id: pathParam(ctx, id.param) };
  const created = fieldOf(ctx.body, 'id');
  return { type: spec.target.type, id: succeeded && typeof created === 'string' ? created : null };
}

/**
 * What a refused read was aimed at, from its route's parameters (`/api/v1/runs/:runId` → `run:<id>`,
 * `/api/v1/workflows/:id` → `workflow:<id>`), so the trail names the run or thing someone probed.
 */
export function probedTarget(route: string, params: Record<string, string | undefined> | undefined): { type: string; id: string } | undefined {
  const segments = route.split('/');
  for (const [index, segment] of segments.entries()) {
    if (!segment.startsWith(':')) continue;
    const name = segment.slice(1);
    const id = params?.[name];
    if (!id) continue;
    const owner = name === 'id' ? (segments[index - 1] ?? '').replace(/s$/, '').replace(/-/g, '_') : name.replace(/Id$/, '').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    return { type: owner || 'resource', id };
  }
  return undefined;
}

/** Runs `next` (the route) and records it as its operation says; the route's error, if any, is rethrown after the record. */
export async function auditAdminRequest(audit: AuditTrail, ctx: GatewayContext, admin: AdminPrincipal, next: Next): Promise<void> {
  let failure: { error: unknown } | undefined;
  try {
    await next();
  } catch (error) {
    failure = { error };
  }
  const status = failure ? statusOfError(failure.error) : ctx.status;
  const route = routeTemplate(ctx);
  const spec = operationOf(ctx)?.audit;
  const refusedRead = !spec && ctx.method === 'GET' && (status === 403 || status === 404);
  if (spec || refusedRead) {
    const succeeded = status < 400;
    const target = spec ? targetOf(spec, ctx, admin, succeeded) : probedTarget(route, ctx.params);
    const details: Record<string, unknown> = { method: ctx.method, route, ...(succeeded ? answerDetails(spec, ctx.body) : {}) };
    let action = spec?.action ?? READ_REFUSED;
    if (!succeeded && failure?.error instanceof HttpError && failure.error.expose) {
      const { code, options } = failure.error;
      details.error = code;
      if (options.facts) Object.assign(details, plainFields(options.facts, Object.keys(options.facts)));
      action = spec?.failures?.[code] ?? action;
    }
    await audit.record({ orgId: admin.orgId, action, target, status, details }, adminActor(admin), sourceOf(ctx));
  }
  if (failure) throw failure.error;
}

/** One approval decision as a caller sent it, and how the run answered. */
export interface DecisionAudit {
  orgId: string;
  runId: string;
  stepIndex?: number;
  decision: 'approve' | 'reject';
  approver?: string;
  via: 'api' | 'link';
  /** the status the caller is answered */
  status: number;
  /** the run's refusal code (ALREADY_DECIDED, NOT_AN_APPROVER, NOT_WAITING) */
  refusal?: string;
  /** the decision's ID, once it was sent to the run */
  decisionId?: string;
  /** true: the run took it; false: recorded in the run's history, to be applied when the run resumes */
  applied?: boolean;
}

/** What a decision's outcome adds to its audit record: the refusal, or its ID, whether it was applied, its approver and step. */
export function decisionAuditFields(outcome: DecideOutcome, approver?: string): Pick<DecisionAudit, 'refusal' | 'decisionId' | 'applied' | 'approver' | 'stepIndex'> {
  if (!outcome.ok) return { refusal: outcome.refusal, ...(approver === undefined ? {} : { approver }) };
  if (!outcome.applied) return { decisionId: outcome.decisionId, applied: false, ...(approver === undefined ? {} : { approver }) };
  const { stepIndex } = outcome.decision;
  return { decisionId: outcome.decisionId, applied: true, approver: outcome.decision.approver, ...(stepIndex === undefined ? {} : { stepIndex }) };
}

/** Records an approval decision (`approval.decided`, the run as target; the comment is left out). */
export async function auditDecision(audit: AuditTrail, ctx: GatewayContext, actor: AuditActor, event: DecisionAudit): Promise<void> {
  await audit.record({
    orgId: event.orgId, action: APPROVAL_DECIDED, target: { type: 'run', id: event.runId }, status: event.status,
    details: {
      decision: event.decision, via: event.via,
      ...(event.stepIndex === undefined ? {} : { stepIndex: event.stepIndex }),
      ...(event.approver === undefined ? {} : { approver: event.approver }),
      ...(event.refusal === undefined ? {} : { refusal: event.refusal }),
      ...(event.decisionId === undefined ? {} : { decisionId: event.decisionId }),
      ...(event.applied === undefined ? {} : { applied: event.applied }),
    },
  }, actor, sourceOf(ctx));
}
