/**
 * The organization's OpenID Connect provider (docs/people-and-roles.md): set, read, remove. Admin
 * only (`org.manage`); the client secret is stored sealed and never shown again.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { ROLES } from '../../people/roles';
import { RoleRuleSchema, issuerProblem } from '../../people/identity-providers';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { badRequest, notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf as admin, type GatewayRouter, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';

export const IdentityProviderBodySchema = z.object({
  name: z.string().min(1).max(100).meta({ description: 'what the console\'s button says: "Sign in with <name>"' }),
  issuer: z.string().min(1).max(500).meta({ description: 'the provider\'s issuer URL (https; http only on loopback)' }),
  clientId: z.string().min(1).max(500),
  clientSecret: z.string().min(1).max(2000),
  roleRules: z.array(RoleRuleSchema).max(100).default([]).meta({ description: 'first match wins: {emailDomain, role} or {group, role}' }),
  groupsClaim: z.string().min(1).max(100).default('groups'),
  defaultRole: z.enum(ROLES).nullable().default(null).meta({ description: 'the role of a new person no rule matches; null refuses them' }),
}).strict();

export function identityProviderRoutes(deps: GatewayDeps): GatewayRouter | undefined {
  const providers = deps.identityProviders;
  if (!providers) return undefined;
  const router = new Router<GatewayState>({ prefix: '/api/v1/identity-provider' });
  router.use(requireAdmin(deps), jsonBody());
  const none = () => notFound('no_identity_provider', 'the organization has no identity provider');

  router.get('/', async (ctx) => {
    const view = await providers.view(admin(ctx).orgId);
    if (!view) throw none();
    ctx.body = view;
  });
  router.put('/', async (ctx) => {
    const input = parse(IdentityProviderBodySchema, body(ctx));
    const problem = issuerProblem(input.issuer);
    if (problem) throw badRequest('invalid_body', `issuer: ${problem}`);
    ctx.body = await providers.set(admin(ctx).orgId, input);
  });
  router.delete('/', async (ctx) => {
    if (!(await providers.remove(admin(ctx).orgId))) throw none();
    ctx.status = 204;
  });
  return router;
}
