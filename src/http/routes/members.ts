/**
 * People of an organization (docs/people-and-roles.md): members with a role, and their personal
 * access tokens (`fgp_…`, shown once, stored hashed). Admin only (the `members.manage`
 * permission, src/people/roles.ts): the admin token is the bootstrap path that creates the first
 * members. Removing a member ends their tokens and console sessions at once, and the credentials
 * they minted (docs/people-and-roles.md "Offboarding"): the answer says what ended.
 */
import Router from '@koa/router';
import { z } from 'zod';
import type { MemberCredentials, MemberRecord } from '../../registry';
import { adminTokenId, memberTokenId, removalBody } from '../../management';
import { CreateMemberSchema, RoleSchema, UpdateMemberSchema } from '../../management/schemas';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { jsonBody } from '../middleware/json-body';
import { settled } from '../management-status';
import { adminOf as admin, type GatewayRouter, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';
import { creates, mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest } from '../openapi-kit';

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
  const { members } = deps.management;

  mount(router, OPS.createMember, async (ctx) => {
    const input = parse(CreateMemberSchema, body(ctx));
    const member = settled(await members.add(admin(ctx).orgId, input));
    ctx.status = 201;
    ctx.body = memberBody(member);
  });

  mount(router, OPS.listMembers, async (ctx) => {
    ctx.body = { members: (await deps.registry.members.list(admin(ctx).orgId)).map(memberBody) };
  });

  mount(router, OPS.updateMember, async (ctx) => {
    const change = parse(UpdateMemberSchema, body(ctx));
    ctx.body = memberBody(settled(await members.update(admin(ctx).orgId, ctx.params.id ?? '', change)));
  });

  /** Removes the member and ends what they minted; the answer names what ended (200, not 204: an operator must see it). */
  mount(router, OPS.removeMember, async (ctx) => {
    ctx.body = removalBody(settled(await members.remove(admin(ctx).orgId, ctx.params.id ?? '')));
  });

  /** What removing the member would end: what they minted and their own tokens (never a secret). */
  mount(router, OPS.listMemberCredentials, async (ctx) => {
    const { member, credentials, adminTokens } = settled(await members.credentials(admin(ctx).orgId, ctx.params.id ?? ''));
    ctx.body = credentialsBody(member.id, credentials, adminTokens);
  });

  /**
   * A new personal access token for the member (shown once); the member's other tokens keep
   * working. Issued by a member, it ends with them too (they saw it).
   */
  mount(router, OPS.issueMemberToken, async (ctx) => {
    const issued = settled(await members.issueToken(admin(ctx).orgId, ctx.params.id ?? '', admin(ctx).member?.id ?? null));
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = issued;
  });

  /** Revokes every personal access token of the member. */
  mount(router, OPS.revokeMemberTokens, async (ctx) => {
    settled(await members.revokeTokens(admin(ctx).orgId, ctx.params.id ?? ''));
    ctx.status = 204;
  });
  return router;
}
