/**
 * People of an organization (docs/people-and-roles.md): members with a role, and their personal
 * access tokens (`fgp_…`, shown once, stored hashed). Admin only (the `members.manage`
 * permission, src/people/roles.ts): the admin token is the bootstrap path that creates the first
 * members. Removing a member ends their tokens and console sessions at once, and the credentials
 * they minted (docs/people-and-roles.md "Offboarding"): the answer says what ended.
 */
import Router from '@koa/router';
import type { MemberCredentials, MemberRecord } from '../../registry';
import { adminTokenId, memberTokenId, removalBody } from '../../management';
import { CreateMemberSchema, RoleSchema, UpdateMemberSchema } from '../../management/schemas';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { jsonBody } from '../middleware/json-body';
import { settled } from '../management-status';
import { adminOf as admin, type GatewayRouter, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';

/** the request schemas the OpenAPI document shows */
export { CreateMemberSchema, RoleSchema, UpdateMemberSchema };

export function memberBody(m: MemberRecord) {
  return { id: m.id, email: m.email, name: m.name, role: m.role, createdAt: m.createdAt, updatedAt: m.updatedAt };
}

function credentialsBody(memberId: string, credentials: MemberCredentials, adminTokens: number) {
  return {
    memberId,
    adminTokens: credentials.adminTokens.map((t) => ({ id: adminTokenId(t.tokenHash), createdAt: t.createdAt })),
    apiKeys: credentials.apiKeys,
    personalAccessTokens: credentials.ownTokens.map((t) => ({ id: memberTokenId(t.tokenHash), createdAt: t.createdAt })),
    issuedTokens: credentials.issuedTokens.map((t) => ({ id: memberTokenId(t.tokenHash), memberId: t.memberId, createdAt: t.createdAt })),
    adminTokensLeftAfterRemoval: adminTokens - credentials.adminTokens.length,
  };
}

export function memberRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1/members' });
  router.use(requireAdmin(deps), jsonBody());
  const { members } = deps.management;

  router.post('/', async (ctx) => {
    const input = parse(CreateMemberSchema, body(ctx));
    const member = settled(await members.add(admin(ctx).orgId, input));
    ctx.status = 201;
    ctx.body = memberBody(member);
  });

  router.get('/', async (ctx) => {
    ctx.body = { members: (await deps.registry.members.list(admin(ctx).orgId)).map(memberBody) };
  });

  router.patch('/:id', async (ctx) => {
    const change = parse(UpdateMemberSchema, body(ctx));
    ctx.body = memberBody(settled(await members.update(admin(ctx).orgId, ctx.params.id ?? '', change)));
  });

  /** Removes the member and ends what they minted; the answer names what ended (200, not 204: an operator must see it). */
  router.delete('/:id', async (ctx) => {
    ctx.body = removalBody(settled(await members.remove(admin(ctx).orgId, ctx.params.id ?? '')));
  });

  /** What removing the member would end: what they minted and their own tokens (never a secret). */
  router.get('/:id/credentials', async (ctx) => {
    const { member, credentials, adminTokens } = settled(await members.credentials(admin(ctx).orgId, ctx.params.id ?? ''));
    ctx.body = credentialsBody(member.id, credentials, adminTokens);
  });

  /**
   * A new personal access token for the member (shown once); the member's other tokens keep
   * working. Issued by a member, it ends with them too (they saw it).
   */
  router.post('/:id/tokens', async (ctx) => {
    const issued = settled(await members.issueToken(admin(ctx).orgId, ctx.params.id ?? '', admin(ctx).member?.id ?? null));
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = issued;
  });

  /** Revokes every personal access token of the member. */
  router.delete('/:id/tokens', async (ctx) => {
    settled(await members.revokeTokens(admin(ctx).orgId, ctx.params.id ?? ''));
    ctx.status = 204;
  });
  return router;
}
