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
import { mount, type Operations } from '../operation';
import { admin as security, errors, json, jsonRequest } from '../openapi-kit';

export const IdentityProviderBodySchema = z.object({
  name: z.string().min(1).max(100).meta({ description: 'what the console\'s button says: "Sign in with <name>"' }),
  issuer: z.string().min(1).max(500).meta({ description: 'the provider\'s issuer URL (https; http only on loopback)' }),
  clientId: z.string().min(1).max(500),
  clientSecret: z.string().min(1).max(2000),
  roleRules: z.array(RoleRuleSchema).max(100).default([]).meta({ description: 'first match wins: {emailDomain, role} or {group, role}' }),
  groupsClaim: z.string().min(1).max(100).default('groups'),
  defaultRole: z.enum(ROLES).nullable().default(null).meta({ description: 'the role of a new person no rule matches; null refuses them' }),
}).strict();

const IdentityProviderViewSchema = z.looseObject({
  name: z.string(), issuer: z.string(), clientId: z.string(), roleRules: z.array(z.looseObject({})), defaultRole: z.string().nullable(),
  redirectUri: z.string(), signInUrl: z.string(), createdAt: z.string(), updatedAt: z.string(),
}).meta({ id: 'IdentityProvider', description: 'the client secret is never shown' });
const org = { type: 'org', id: { org: true } } as const;

export const IDENTITY_PROVIDER_OPERATIONS = {
  getIdentityProvider: {
    method: 'get', path: '/api/v1/identity-provider', permission: 'org.manage',
    tags: ['people'], summary: 'The organization\'s OpenID Connect provider', security,
    responses: { '200': json(IdentityProviderViewSchema, 'the provider'), ...errors(401, 403, 404) },
  },
  setIdentityProvider: {
    method: 'put', path: '/api/v1/identity-provider', permission: 'org.manage', audit: { action: 'identity_provider.set', target: org, answerFields: ['issuer'] },
    tags: ['people'], summary: 'Set the organization\'s OpenID Connect provider (the secret is stored encrypted)', security,
    requestBody: jsonRequest(IdentityProviderBodySchema), responses: { '200': json(IdentityProviderViewSchema, 'the provider'), ...errors(400, 401, 403, 415) },
  },
  deleteIdentityProvider: {
    method: 'delete', path: '/api/v1/identity-provider', permission: 'org.manage', audit: { action: 'identity_provider.deleted', target: org },
    tags: ['people'], summary: 'Remove the organization\'s OpenID Connect provider', security,
    responses: { '204': { description: 'removed' }, ...errors(401, 403, 404) },
  },
} satisfies Operations;
const OPS = IDENTITY_PROVIDER_OPERATIONS;

export function identityProviderRoutes(deps: GatewayDeps): GatewayRouter | undefined {
  const providers = deps.identityProviders;
  if (!providers) return undefined;
  const router = new Router<GatewayState>({ prefix: '/api/v1/identity-provider' });
  router.use(requireAdmin(deps), jsonBody());
  const none = () => notFound('no_identity_provider', 'the organization has no identity provider');

  mount(router, OPS.getIdentityProvider, async (ctx) => {
    const view = await providers.view(admin(ctx).orgId);
    if (!view) throw none();
    ctx.body = view;
  });
  mount(router, OPS.setIdentityProvider, async (ctx) => {
    const input = parse(IdentityProviderBodySchema, body(ctx));
    const problem = issuerProblem(input.issuer);
    if (problem) throw badRequest('invalid_body', `issuer: ${problem}`);
    ctx.body = await providers.set(admin(ctx).orgId, input);
  });
  mount(router, OPS.deleteIdentityProvider, async (ctx) => {
    if (!(await providers.remove(admin(ctx).orgId))) throw none();
    ctx.status = 204;
  });
  return router;
}
