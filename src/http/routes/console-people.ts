/**
 * The console's People page (docs/console.md "People"): the organization's members — add one,
 * change a role, remove one — its identity provider as configured, and the MCP clients signed in
 * by URL, each of which can be signed out. The same changes as /api/v1/members and
 * /api/v1/oauth/grants, under the same permissions (members.manage, org.manage) and audited
 * under the same action names.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { permissionDenied } from '../auth';
import { roleHas } from '../../people/roles';
import type { GatewayDeps } from '../deps';
import { noteForAudit } from '../console/audit';
import { refusalStatus } from '../management-status';
import { consoleState } from '../console/guard';
import { page, send } from '../console/layout';
import { peopleBody, tokenIssuedBody } from '../console/people-views';
import type { ConsoleRouteKit } from '../console/kit';
import { NO_ADMIN_TOKEN_LEFT, removalBody } from '../../management';
import { CreateMemberSchema, UpdateMemberSchema } from '../../management/schemas';
import { formOf } from '../validate';

const DONE: Readonly<Record<string, string>> = {
  added: 'The member was added. They sign in with the organization\'s identity provider, or with a personal access token issued here.',
  changed: 'The role was changed: it applies to their next request.',
  removed: 'The member was removed: their tokens, sessions and MCP sign-ins ended, and so did the admin tokens, API keys and personal access tokens they created.',
  revoked: 'The client was signed out: its tokens are refused.',
  'tokens-revoked': 'Their personal access tokens were revoked: whoever uses them is refused (console sessions already open go on until they end).',
};

export function consolePeopleRoutes(router: Router, deps: GatewayDeps, kit: ConsoleRouteKit): void {
  const { session, csrf, audited, apiAction, parseForm } = kit;
  const oauth = deps.oauth?.server;
  const { members } = deps.management;

  const peoplePage = async (ctx: Context, status: number, extra: { notice?: string; error?: string } = {}): Promise<void> => {
    const { session: s } = consoleState(ctx);
    // as GET /api/v1/members: the admin's only (a member's session carries its role)
    if (!roleHas(s.role, 'members.manage')) throw permissionDenied(s, 'members.manage');
    const [members, provider, grants] = await Promise.all([
      deps.registry.members.list(s.orgId),
      deps.identityProviders?.view(s.orgId),
      oauth && roleHas(s.role, 'org.manage') ? oauth.listGrants(s.orgId) : undefined,
    ]);
    send(ctx, status, page({ title: 'People', csrf: s.csrfToken, section: 'people' }, peopleBody({
      members, csrf: s.csrfToken, ...(provider ? { provider } : {}), ...(grants ? { grants } : {}), ...extra,
    })));
  };
  const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  const done = (ctx: Context, what: string): void => {
    ctx.status = 303;
    ctx.redirect(`/console/people?done=${what}`);
  };
  const problems = (issues: { path: PropertyKey[]; message: string }[]): string => issues.map((i) => `${i.path.map(String).join('.') || 'form'}: ${i.message}`).join('; ');

  router.get('/people', session, async (ctx) => {
    const notice = typeof ctx.query.done === 'string' ? DONE[ctx.query.done] : undefined;
    // a removal that ended the last admin token says so (docs/people-and-roles.md "Offboarding")
    const lastToken = ctx.query.done === 'removed' && ctx.query.adminTokensLeft === '0';
    await peoplePage(ctx, 200, notice ? { notice: lastToken ? `${notice} Note: ${NO_ADMIN_TOKEN_LEFT}.` : notice } : {});
  });

  router.post('/people', session, audited(apiAction('POST', '/api/v1/members'), 'member', { noteTarget: 'memberId' }), parseForm, csrf, async (ctx) => {
    const { email, name, role } = formOf(ctx);
    const parsed = CreateMemberSchema.safeParse({ email: text(email), role: text(role), ...(text(name) ? { name: text(name) } : {}) });
    if (!parsed.success) return peoplePage(ctx, 400, { error: `The member was not added: ${problems(parsed.error.issues)}.` });
    const added = await members.add(consoleState(ctx).session.orgId, parsed.data);
    if (!added.ok) return peoplePage(ctx, refusalStatus(added), { error: `The organization has a member ${parsed.data.email} already.` });
    noteForAudit(ctx, { memberId: added.value.id, email: added.value.email, role: added.value.role });
    done(ctx, 'added');
  });

  router.post('/people/:id/role', session, audited(apiAction('PATCH', '/api/v1/members/:id'), 'member', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const parsed = UpdateMemberSchema.safeParse({ role: text(formOf(ctx).role) });
    if (!parsed.success) return peoplePage(ctx, 400, { error: `The role was not changed: ${problems(parsed.error.issues)}.` });
    const member = await members.update(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''), parsed.data);
    if (!member.ok) return peoplePage(ctx, refusalStatus(member), { error: 'This organization has no member with that ID.' });
    noteForAudit(ctx, { role: member.value.role });
    done(ctx, 'changed');
  });

  router.post('/people/:id/remove', session, audited(apiAction('DELETE', '/api/v1/members/:id'), 'member', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const removal = await members.remove(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''));
    if (!removal.ok) return peoplePage(ctx, refusalStatus(removal), { error: 'This organization has no member with that ID.' });
    // the same facts as the API's record of a removal
    const { email, endedAdminTokens, endedApiKeys, endedMemberTokens, adminTokensLeft } = removalBody(removal.value);
    noteForAudit(ctx, { email, endedAdminTokens, endedApiKeys, endedMemberTokens, adminTokensLeft });
    ctx.status = 303;
    ctx.redirect(`/console/people?done=removed${adminTokensLeft === 0 ? '&adminTokensLeft=0' : ''}`);
  });

  router.post('/people/:id/tokens', session, audited(apiAction('POST', '/api/v1/members/:id/tokens'), 'member', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const { session: s } = consoleState(ctx);
    const orgId = s.orgId;
    const id = String(ctx.params.id ?? '');
    const member = await deps.registry.members.get(orgId, id);
    const issued = member ? await members.issueToken(orgId, id, s.member?.id ?? null) : undefined;
    if (!member || !issued?.ok) return peoplePage(ctx, 404, { error: 'This organization has no member with that ID.' });
    noteForAudit(ctx, { tokenId: issued.value.tokenId });
    // the token is a secret: shown on this answer only
    send(ctx, 201, page({ title: 'Personal access token', csrf: s.csrfToken, section: 'people' }, tokenIssuedBody({ email: member.email, token: issued.value.token, tokenId: issued.value.tokenId })));
  });
  router.post('/people/:id/tokens/revoke', session, audited(apiAction('DELETE', '/api/v1/members/:id/tokens'), 'member', { param: 'id' }), parseForm, csrf, async (ctx) => {
    const revoked = await members.revokeTokens(consoleState(ctx).session.orgId, String(ctx.params.id ?? ''));
    if (!revoked.ok) return peoplePage(ctx, refusalStatus(revoked), { error: 'This organization has no member with that ID.' });
    done(ctx, 'tokens-revoked');
  });

  router.post('/people/grants/:grantId/revoke', session, audited(apiAction('DELETE', '/api/v1/oauth/grants/:grantId'), 'oauth_grant', { param: 'grantId' }), parseForm, csrf,
    async (ctx) => {
      if (!oauth || !(await oauth.revokeOrgGrant(consoleState(ctx).session.orgId, String(ctx.params.grantId ?? '')))) {
        return peoplePage(ctx, 404, { error: 'This organization has no live grant with that ID.' });
      }
      done(ctx, 'revoked');
    });
}
