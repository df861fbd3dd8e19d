/**
 * People of an organization (docs/people-and-roles.md): members with a role, and their personal
 * access tokens (`fgp_…`, shown once, stored hashed). Admin only (the `members.manage`
 * permission, src/people/roles.ts): the admin token is the bootstrap path that creates the first
 * members. Removing a member ends their tokens and console sessions at once.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { RegistryError, type MemberRecord } from '../../registry';
import { hashSecret, randomToken } from '../../crypto/secrets';
import { ROLES } from '../../people/roles';
import { MEMBER_TOKEN_PREFIX, requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { conflict, notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf as admin, type GatewayRouter, type GatewayState } from '../state';
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

  router.delete('/:id', async (ctx) => {
    if (!(await members.remove(admin(ctx).orgId, ctx.params.id ?? ''))) throw unknown(ctx.params.id);
    ctx.status = 204;
  });

  /** A new personal access token for the member (shown once); the member's other tokens keep working. */
  router.post('/:id/tokens', async (ctx) => {
    const member = await members.get(admin(ctx).orgId, ctx.params.id ?? '');
    if (!member) throw unknown(ctx.params.id);
    const token = randomToken(MEMBER_TOKEN_PREFIX);
    await members.addToken(member, hashSecret(token));
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = { memberId: member.id, token };
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
