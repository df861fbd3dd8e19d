/**
 * The OpenAPI entries of people and roles (docs/people-and-roles.md): members, their personal
 * access tokens, the identity provider, and a member's approval decision; and the 403 every
 * management operation may answer when the caller's role lacks the permission. Apart from
 * openapi.ts, which passes its helpers in (so neither imports the other's document).
 */
import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import { DecisionAcceptedSchema, DecisionRecordedSchema } from '../contracts/http-bodies';
import { CreateMemberSchema, UpdateMemberSchema } from './routes/members';
import { IdentityProviderBodySchema } from './routes/identity-provider';
import { DecisionBodySchema } from './routes/runs';

export interface DocHelpers {
  json: (schema: z.ZodType, description: string) => { description: string; content: { 'application/json': { schema: z.ZodType } } };
  errors: (...statuses: number[]) => ZodOpenApiResponsesObject;
  admin: { [name: string]: string[] }[];
  id: (name: string, description: string) => z.ZodObject;
}

const MemberSchema = z.looseObject({
  id: z.string(), email: z.string(), name: z.string().nullable(), role: z.enum(['admin', 'editor', 'operator', 'approver', 'viewer']), createdAt: z.string(), updatedAt: z.string(),
}).meta({ id: 'Member' });
const IdentityProviderViewSchema = z.looseObject({
  name: z.string(), issuer: z.string(), clientId: z.string(), roleRules: z.array(z.looseObject({})), defaultRole: z.string().nullable(),
  redirectUri: z.string(), signInUrl: z.string(), createdAt: z.string(), updatedAt: z.string(),
}).meta({ id: 'IdentityProvider', description: 'the client secret is never shown' });

const OAuthGrantSchema = z.looseObject({
  id: z.string(), clientId: z.string().meta({ description: 'a registered client\'s id, or the URL of its metadata document' }),
  clientName: z.string().nullable(), resource: z.string(), scope: z.string().nullable(),
  subject: z.string().meta({ description: '`admin-token:<fingerprint>` or `member:<id>`' }),
  member: z.looseObject({ id: z.string(), email: z.string(), role: z.string() }).nullable(),
  createdAt: z.string(), expiresAt: z.string().meta({ description: 'when its latest token expires' }),
}).meta({ id: 'OAuthGrant' });

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

export function peoplePaths({ json, errors, admin, id }: DocHelpers): ZodOpenApiPathsObject {
  const memberId = id('id', 'a member');
  return {
    '/api/v1/members': {
      get: {
        operationId: 'listMembers', tags: ['people'], summary: 'The organization\'s members and their roles', security: admin,
        responses: { '200': json(z.object({ members: z.array(MemberSchema) }), 'the members'), ...errors(401, 403) },
      },
      post: {
        operationId: 'createMember', tags: ['people'], summary: 'Add a member with a role', security: admin,
        requestBody: { content: { 'application/json': { schema: CreateMemberSchema } } },
        responses: { '201': json(MemberSchema, 'the member'), ...errors(400, 401, 403, 409, 415) },
      },
    },
    '/api/v1/members/{id}': {
      patch: {
        operationId: 'updateMember', tags: ['people'], summary: 'Change a member\'s role or name', security: admin, requestParams: { path: memberId },
        requestBody: { content: { 'application/json': { schema: UpdateMemberSchema } } },
        responses: { '200': json(MemberSchema, 'the member'), ...errors(400, 401, 403, 404, 415) },
      },
      delete: {
        operationId: 'removeMember', tags: ['people'], summary: 'Remove a member: their tokens and sessions end, and the admin tokens, API keys and personal access tokens they minted',
        security: admin, requestParams: { path: memberId },
        responses: { '200': json(MemberRemovedSchema, 'removed: what ended, and whether an admin token is left'), ...errors(401, 403, 404) },
      },
    },
    '/api/v1/members/{id}/credentials': {
      get: {
        operationId: 'listMemberCredentials', tags: ['people'], summary: 'What removing the member would end: the credentials they minted and their own tokens (never a secret)',
        security: admin, requestParams: { path: memberId },
        responses: { '200': json(MemberCredentialsSchema, 'the credentials'), ...errors(401, 403, 404) },
      },
    },
    '/api/v1/members/{id}/tokens': {
      post: {
        operationId: 'issueMemberToken', tags: ['people'], summary: 'A personal access token (fgp_…) for the member, shown once', security: admin, requestParams: { path: memberId },
        responses: { '201': json(z.object({ memberId: z.string(), token: z.string(), tokenId: z.string().meta({ description: 'its name in the audit trail (`pat_…`)' }) }), 'the token'), ...errors(401, 403, 404) },
      },
      delete: {
        operationId: 'revokeMemberTokens', tags: ['people'], summary: 'Revoke every personal access token of the member', security: admin, requestParams: { path: memberId },
        responses: { '204': { description: 'revoked' }, ...errors(401, 403, 404) },
      },
    },
    '/api/v1/oauth/grants': {
      get: {
        operationId: 'listOAuthGrants', tags: ['people'], summary: 'What MCP clients signed in by URL were allowed, by whom, for which resource (live grants, never a token)', security: admin,
        responses: { '200': json(z.object({ grants: z.array(OAuthGrantSchema) }), 'the live grants, newest first'), ...errors(401, 403) },
      },
    },
    '/api/v1/oauth/grants/{grantId}': {
      delete: {
        operationId: 'revokeOAuthGrant', tags: ['people'], summary: 'Revoke a grant: its access and refresh tokens are refused from now on', security: admin,
        requestParams: { path: id('grantId', 'a grant') },
        responses: { '204': { description: 'revoked' }, ...errors(401, 403, 404) },
      },
    },
    '/api/v1/identity-provider': {
      get: {
        operationId: 'getIdentityProvider', tags: ['people'], summary: 'The organization\'s OpenID Connect provider', security: admin,
        responses: { '200': json(IdentityProviderViewSchema, 'the provider'), ...errors(401, 403, 404) },
      },
      put: {
        operationId: 'setIdentityProvider', tags: ['people'], summary: 'Set the organization\'s OpenID Connect provider (the secret is stored encrypted)', security: admin,
        requestBody: { content: { 'application/json': { schema: IdentityProviderBodySchema } } },
        responses: { '200': json(IdentityProviderViewSchema, 'the provider'), ...errors(400, 401, 403, 415) },
      },
      delete: {
        operationId: 'deleteIdentityProvider', tags: ['people'], summary: 'Remove the organization\'s OpenID Connect provider', security: admin,
        responses: { '204': { description: 'removed' }, ...errors(401, 403, 404) },
      },
    },
    '/api/v1/runs/{runId}/approval': {
      post: {
        operationId: 'decideRunApproval', tags: ['approvals'], summary: 'Approve or reject the approval the run waits on; a member decides as themselves (their e-mail must be an approver)',
        security: admin, requestParams: { path: id('runId', 'a run') }, requestBody: { content: { 'application/json': { schema: DecisionBodySchema } } },
        responses: {
          '200': json(DecisionAcceptedSchema, 'the run took the decision'),
          '202': json(DecisionRecordedSchema, 'the run did not answer in time: the decision is recorded and applied, or refused, when it resumes'),
          ...errors(400, 401, 403, 404, 409, 415, 503),
        },
      },
    },
  };
}

/** Every operation a role may be refused (the management API's, by its admin security) documents 403. */
export function withPermissionRefusals(paths: ZodOpenApiPathsObject, { errors, admin }: DocHelpers): ZodOpenApiPathsObject {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item as Record<string, unknown>)) {
      const op = operation as ZodOpenApiOperationObject | undefined;
      if (!op || typeof op !== 'object' || op.security !== admin || !op.responses) continue;
      op.responses = { ...errors(403), ...op.responses };
    }
  }
  return paths;
}
