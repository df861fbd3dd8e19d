/**
 * People of an organization (docs/people-and-roles.md): members with a role, and their personal
 * access tokens (`fgp_…`, shown once, stored hashed). Admin only (the `members.manage`
 * permission, src/people/roles.ts): the admin token is the bootstrap path that creates the first
 * members. Removing a member ends their tokens and console sessions at once, and the credentials
 * they minted (docs/people-and-roles.md "Offboarding"): the answer says what ended.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { RegistryError, type MemberCredentials, type MemberRecord, type MemberRemoval } from '../../registry';
import { credentialFingerprint } from '../../audit/audit-trail';
import { hashSecret, randomToken } from '../../crypto/secrets';
import { ROLES } from '../../people/roles';
import { forgetApiKeys, MEMBER_TOKEN_PREFIX, requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { conflict, notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf as admin, type GatewayRouter, type GatewayState } from '../state';
import { adminTokenId } from './management';
import { bodyOf as body, parseInput as parse } from '../validate';

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

export function memberBody(m: MemberRecord) {
  return { id: m.id, email: m.email, name: m.name, role: m.role, createdAt: m.createdAt, updatedAt: m.updatedAt };
}

/** A personal access token's name in the audit trail (`pat_` + the start of its SHA-256), as its records' credential id. */
export function memberTokenId(tokenHash: string): string {
  return credentialFingerprint('pat_', tokenHash);
}

/**
 * Removes the organization's member and what they minted (MemberStore.remove), forgetting the
 * revoked API keys at once on this replica (the others within a second). Undefined when there is no such member.
 */
export async function removeMember(deps: Pick<GatewayDeps, 'registry' | 'runtimeTokens'>, orgId: string, id: string): Promise<MemberRemoval | undefined> {
  const removal = await deps.registry.members.remove(orgId, id);
  if (removal && removal.apiKeys.length > 0) {
    forgetApiKeys(deps.registry);
    deps.runtimeTokens.forgetKeys();
  }
  return removal;
}

/** What a removed member's admins are told when no admin token reaches the organization any more. */
export const NO_ADMIN_TOKEN_LEFT = 'no admin token reaches the organization any more (the one this member minted ended with them): scripts using it are refused (401). '
  + 'A remaining admin member mints a new one with POST /api/v1/admin-token/rotate, or the instance administrator with POST /api/v1/orgs/{id}/admin-token';

/** The answer to a removal: the member, the names (audit trail ids) of what ended, and whether an admin token is left. */
export function removalBody(removal: MemberRemoval) {
  return {
    id: removal.member.id,
    email: removal.member.email,
    endedAdminTokens: removal.adminTokens.map((t) => adminTokenId(t.tokenHash)),
    endedApiKeys: removal.apiKeys.map((k) => k.id),
    endedMemberTokens: [...removal.ownTokens, ...removal.issuedTokens].map((t) => memberTokenId(t.tokenHash)),
    adminTokensLeft: removal.adminTokensLeft,
    ...(removal.adminTokensLeft === 0 ? { warning: NO_ADMIN_TOKEN_LEFT } : {}),
  };
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
  const members = deps.registry.members;
  const unknown = (id: string | undefined) => notFound('unknown_member', `no member ${id}`);

  router.post('/', async (ctx) => {
    const input = parse(CreateMemberSchema, body(ctx));
    try {
      const member = await members.create(admin(ctx).orgId, { email: input.email, name: input.name ?? null, role: input.role });
      ctx.status = 201;
      ctx.body = memberBody(member);
    } catch (error) {
      if (error instanceof RegistryError && error.code === 'CONFLICT') throw conflict('member_exists', error.message);
      throw error;
    }
  });

  router.get('/', async (ctx) => {
    ctx.body = { members: (await members.list(admin(ctx).orgId)).map(memberBody) };
  });

  router.patch('/:id', async (ctx) => {
    const change = parse(UpdateMemberSchema, body(ctx));
    const member = await members.update(admin(ctx).orgId, ctx.params.id ?? '', change);
    if (!member) throw unknown(ctx.params.id);
    ctx.body = memberBody(member);
  });

  /** Removes the member and ends what they minted; the answer names what ended (200, not 204: an operator must see it). */
  router.delete('/:id', async (ctx) => {
    const removal = await removeMember(deps, admin(ctx).orgId, ctx.params.id ?? '');
    if (!removal) throw unknown(ctx.params.id);
    ctx.body = removalBody(removal);
  });

  /** What removing the member would end: what they minted and their own tokens (never a secret). */
  router.get('/:id/credentials', async (ctx) => {
    const { orgId } = admin(ctx);
    const member = await members.get(orgId, ctx.params.id ?? '');
    if (!member) throw unknown(ctx.params.id);
    ctx.body = credentialsBody(member.id, await members.credentials(orgId, member.id), await deps.registry.orgs.countAdminTokens(orgId));
  });

  /**
   * A new personal access token for the member (shown once); the member's other tokens keep
   * working. Issued by a member, it ends with them too (they saw it).
   */
  router.post('/:id/tokens', async (ctx) => {
    const member = await members.get(admin(ctx).orgId, ctx.params.id ?? '');
    if (!member) throw unknown(ctx.params.id);
    const token = randomToken(MEMBER_TOKEN_PREFIX);
    const hash = hashSecret(token);
    await members.addToken(member, hash, admin(ctx).member?.id ?? null);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = { memberId: member.id, token, tokenId: memberTokenId(hash) };
  });

  /** Revokes every personal access token of the member. */
  router.delete('/:id/tokens', async (ctx) => {
    const member = await members.get(admin(ctx).orgId, ctx.params.id ?? '');
    if (!member) throw unknown(ctx.params.id);
    await members.revokeTokens(member.orgId, member.id);
    ctx.status = 204;
  });
  return router;
}
