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
import { creates, mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest } from '../openapi-kit';

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

const MemberSchema = z.looseObject({
  id: z.string(), email: z.string(), name: z.string().nullable(), role: z.enum(['admin', 'editor', 'operator', 'approver', 'viewer']), createdAt: z.string(), updatedAt: z.string(),
}).meta({ id: 'Member' });
const MemberRemovedSchema = z.looseObject({
  id: z.string(), email: z.string(),
  endedAdminTokens: z.array(z.string()).meta({ description: 'the admin tokens the member minted (`adm_…`, as the audit trail names them), deleted' }),
  endedApiKeys: z.array(z.string()).meta({ description: 'the API keys the member created, revoked' }),
  endedMemberTokens: z.array(z.string()).meta({ description: 'personal access tokens (`pat_…`): the member\'s own and those they issued to others' }),
  adminTokensLeft: z.number().int().meta({ description: 'admin tokens that still reach the organization' }),
  warning: z.string().optional().meta({ description: 'when no admin token is left: what that means and how to mint one' }),
}).meta({ id: 'MemberRemoved' });
const MemberCredentialsSchema = z.looseObject({
  memberId: z.string(),
  adminTokens: z.array(z.looseObject({ id: z.string(), createdAt: z.string() })),
  apiKeys: z.array(z.looseObject({ id: z.string(), name: z.string().nullable(), role: z.string().nullable(), createdAt: z.string() })),
  personalAccessTokens: z.array(z.looseObject({ id: z.string(), createdAt: z.string() })),
  issuedTokens: z.array(z.looseObject({ id: z.string(), memberId: z.string(), createdAt: z.string() })),
  adminTokensLeftAfterRemoval: z.number().int(),
}).meta({ id: 'MemberCredentials' });
const memberId = id('id', 'a member');

export const MEMBER_OPERATIONS = {
  listMembers: {
    method: 'get', path: '/api/v1/members', permission: 'members.manage',
    tags: ['people'], summary: 'The organization\'s members and their roles', security,
    responses: { '200': json(z.object({ members: z.array(MemberSchema) }), 'the members'), ...errors(401, 403) },
  },
  createMember: {
    method: 'post', path: '/api/v1/members', permission: 'members.manage', audit: creates('member.created', 'member', ['email', 'role']),
    tags: ['people'], summary: 'Add a member with a role', security, requestBody: jsonRequest(CreateMemberSchema),
    responses: { '201': json(MemberSchema, 'the member'), ...errors(400, 401, 403, 409, 415) },
  },
  updateMember: {
    method: 'patch', path: '/api/v1/members/:id', permission: 'members.manage', audit: on('member.updated', 'member', 'id', ['role']),
    tags: ['people'], summary: 'Change a member\'s role or name', security, requestParams: { path: memberId }, requestBody: jsonRequest(UpdateMemberSchema),
    responses: { '200': json(MemberSchema, 'the member'), ...errors(400, 401, 403, 404, 415) },
  },
  removeMember: {
    method: 'delete', path: '/api/v1/members/:id', permission: 'members.manage',
    audit: on('member.removed', 'member', 'id', ['email', 'endedAdminTokens', 'endedApiKeys', 'endedMemberTokens', 'adminTokensLeft']),
    tags: ['people'], summary: 'Remove a member: their tokens and sessions end, and the admin tokens, API keys and personal access tokens they minted',
    security, requestParams: { path: memberId },
    responses: { '200': json(MemberRemovedSchema, 'removed: what ended, and whether an admin token is left'), ...errors(401, 403, 404) },
  },
  listMemberCredentials: {
    method: 'get', path: '/api/v1/members/:id/credentials', permission: 'members.manage',
    tags: ['people'], summary: 'What removing the member would end: the credentials they minted and their own tokens (never a secret)',
    security, requestParams: { path: memberId }, responses: { '200': json(MemberCredentialsSchema, 'the credentials'), ...errors(401, 403, 404) },
  },
  issueMemberToken: {
    method: 'post', path: '/api/v1/members/:id/tokens', permission: 'members.manage', audit: on('member_token.issued', 'member', 'id', ['tokenId']),
    tags: ['people'], summary: 'A personal access token (fgp_…) for the member, shown once', security, requestParams: { path: memberId },
    responses: { '201': json(z.object({ memberId: z.string(), token: z.string(), tokenId: z.string().meta({ description: 'its name in the audit trail (`pat_…`)' }) }), 'the token'), ...errors(401, 403, 404) },
  },
  revokeMemberTokens: {
    method: 'delete', path: '/api/v1/members/:id/tokens', permission: 'members.manage', audit: on('member_token.revoked', 'member', 'id'),
    tags: ['people'], summary: 'Revoke every personal access token of the member', security, requestParams: { path: memberId },
    responses: { '204': { description: 'revoked' }, ...errors(401, 403, 404) },
  },
} satisfies Operations;
const OPS = MEMBER_OPERATIONS;

export function memberRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1/members' });
  router.use(requireAdmin(deps), jsonBody());
  const members = deps.registry.members;
  const unknown = (id: string | undefined) => notFound('unknown_member', `no member ${id}`);

  mount(router, OPS.createMember, async (ctx) => {
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

  mount(router, OPS.listMembers, async (ctx) => {
    ctx.body = { members: (await members.list(admin(ctx).orgId)).map(memberBody) };
  });

  mount(router, OPS.updateMember, async (ctx) => {
    const change = parse(UpdateMemberSchema, body(ctx));
    const member = await members.update(admin(ctx).orgId, ctx.params.id ?? '', change);
    if (!member) throw unknown(ctx.params.id);
    ctx.body = memberBody(member);
  });

  /** Removes the member and ends what they minted; the answer names what ended (200, not 204: an operator must see it). */
  mount(router, OPS.removeMember, async (ctx) => {
    const removal = await removeMember(deps, admin(ctx).orgId, ctx.params.id ?? '');
    if (!removal) throw unknown(ctx.params.id);
    ctx.body = removalBody(removal);
  });

  /** What removing the member would end: what they minted and their own tokens (never a secret). */
  mount(router, OPS.listMemberCredentials, async (ctx) => {
    const { orgId } = admin(ctx);
    const member = await members.get(orgId, ctx.params.id ?? '');
    if (!member) throw unknown(ctx.params.id);
    ctx.body = credentialsBody(member.id, await members.credentials(orgId, member.id), await deps.registry.orgs.countAdminTokens(orgId));
  });

  /**
   * A new personal access token for the member (shown once); the member's other tokens keep
   * working. Issued by a member, it ends with them too (they saw it).
   */
  mount(router, OPS.issueMemberToken, async (ctx) => {
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
  mount(router, OPS.revokeMemberTokens, async (ctx) => {
    const member = await members.get(admin(ctx).orgId, ctx.params.id ?? '');
    if (!member) throw unknown(ctx.params.id);
    await members.revokeTokens(member.orgId, member.id);
    ctx.status = 204;
  });
  return router;
}
