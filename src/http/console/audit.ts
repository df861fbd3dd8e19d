/**
 * The console's audit records (docs/audit.md): its state-changing actions are recorded as the
 * management API's are, with the same action names (`approval.decided`, `run.cancelled`, ...), the
 * actor the session signed in as (`admin` or `instance-admin`), credential `console_session` (`cs_` +
 * the start of the session ID's SHA-256: never the cookie), and `via: console` in the details. A
 * change is recorded whatever its outcome: refused ones (403 for a missing CSRF token or a
 * non-approver, 404, 409) show as `refused`. Sign-in is recorded by the route itself (no session yet).
 */
import type { Context, Next } from 'koa';
import { credentialFingerprint, type AuditActor, type AuditTrail } from '../../audit/audit-trail';
import type { AdminGrant, ConsoleSession } from '../../console/sessions';
import { pathParam, sourceOf, statusOfError } from '../middleware/audit';
import { routeTemplate } from '../middleware/observe';
import { consoleState } from './guard';
import { roleHas, type Permission } from '../../people/roles';
import { CONSOLE_SIGNED_IN, TOOL_CALLED } from '../../audit/actions';
import { hashSecret } from '../../crypto/secrets';
import { permissionOfAction } from '../operations';
import { permissionDenied } from '../auth';

/** The session's name in the audit trail (never its ID, which is the cookie's secret). */
export function sessionFingerprint(session: Pick<ConsoleSession, 'idHash'>): string {
  return credentialFingerprint('cs_', session.idHash);
}

export function consoleActor(session: ConsoleSession): AuditActor {
  if (session.member) return { actor: `member:${session.member.id}`, actorName: session.member.email, credentialKind: 'console_session', credentialId: sessionFingerprint(session) };
  return { actor: session.instanceAdmin ? 'instance-admin' : 'admin', actorName: null, credentialKind: 'console_session', credentialId: sessionFingerprint(session) };
}

/** The admin token an action's session signed in with, as the API's records name it (`adm_…`). */
function adminTokenOf(grant: { tokenHash: string }): string {
  return credentialFingerprint('adm_', grant.tokenHash);
}

/** What a console route adds to its record (secret-free: a decision, a new run's ID, a published version, the ids of what a removal ended). */
export type ConsoleAuditNote = Record<string, string | number | boolean | readonly string[]>;

/** A route's facts for its record, set by the route before it answers. */
export function noteForAudit(ctx: Context, note: ConsoleAuditNote): void {
  const state: { consoleAudit?: ConsoleAuditNote } = ctx.state;
  state.consoleAudit = { ...state.consoleAudit, ...note };
}

export interface ConsoleAuditSpec {
  action: string;
  targetType: string;
  /** the path parameter naming the target; absent: the session itself */
  param?: string;
  /** instead: the route's note naming the target (a created connection's, workflow's or trigger's ID, a tool's `server/tool`), when the route set it */
  noteTarget?: string;
}

/** The console's actions no management route takes, and their permission (the API's take their route's). */
const CONSOLE_ONLY: Readonly<Record<string, Permission>> = {
  /** a tool tried from the console (tools act: they send mail, call APIs, start runs) */
  [TOOL_CALLED]: 'runs.operate',
};

/**
 * After requireSession, before the form parser and the CSRF check: checks the session's role has
 * the action's permission (src/people/roles.ts), runs the route and records it, whatever its outcome.
 */
export function auditConsole(audit: AuditTrail, spec: ConsoleAuditSpec) {
  // the console's own sign-in and sign-out need none; an action no route takes is the admin's only
  const permission = spec.action.startsWith('console.') ? undefined : CONSOLE_ONLY[spec.action] ?? permissionOfAction(spec.action) ?? 'org.manage';
  return async function consoleAudit(ctx: Context, next: Next): Promise<void> {
    let failure: { error: unknown } | undefined;
    try {
      const { session } = consoleState(ctx);
      if (permission && !roleHas(session.role, permission)) throw permissionDenied(session, permission);
      await next();
    } catch (error) {
      failure = { error };
    }
    const { session } = consoleState(ctx);
    const status = failure ? statusOfError(failure.error) : ctx.status;
    const state: { consoleAudit?: ConsoleAuditNote } = ctx.state;
    const note = state.consoleAudit ?? {};
    const noted = spec.noteTarget === undefined ? undefined : note[spec.noteTarget];
    const targetId = spec.noteTarget !== undefined ? (noted === undefined ? null : String(noted))
      : spec.param ? pathParam(ctx, spec.param) : sessionFingerprint(session);
    await audit.record({
      orgId: session.orgId, action: spec.action, target: { type: spec.targetType, id: targetId }, status,
      details: { ...note, via: 'console', method: ctx.method, route: routeTemplate(ctx), ...(session.member ? {} : { adminToken: adminTokenOf({ tokenHash: session.adminTokenHash }) }) },
    }, consoleActor(session), sourceOf(ctx));
    if (failure) throw failure.error;
  };
}

/** A sign-in: a session opened, or a valid admin token refused (a cross-site sign-in). An unknown token names no organization: access log only. */
export async function auditSignIn(audit: AuditTrail, ctx: Context, action: string, status: number, grant: AdminGrant, session?: ConsoleSession): Promise<void> {
  const actor: AuditActor = session
    ? consoleActor(session)
    : { actor: grant.instanceAdmin ? 'instance-admin' : 'admin', actorName: null, credentialKind: 'admin_token', credentialId: adminTokenOf(grant) };
  await audit.record({
    orgId: grant.orgId, action, target: { type: 'console_session', id: session ? sessionFingerprint(session) : null }, status,
    details: { via: 'console', method: ctx.method, route: '/console/sign-in', adminToken: adminTokenOf(grant) },
  }, actor, sourceOf(ctx));
}

/** A member's sign-in with a personal access token: the session, the member's role, the token's fingerprint (never the token). */
export async function auditTokenSignIn(audit: AuditTrail, ctx: Context, session: ConsoleSession, token: string): Promise<void> {
  await audit.record({
    orgId: session.orgId, action: CONSOLE_SIGNED_IN, target: { type: 'console_session', id: sessionFingerprint(session) }, status: 303,
    details: { via: 'personal_access_token', method: ctx.method, route: '/console/sign-in', role: session.role, token: credentialFingerprint('pat_', hashSecret(token)) },
  }, consoleActor(session), sourceOf(ctx));
}
