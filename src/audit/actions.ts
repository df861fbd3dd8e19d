/**
 * The audit trail's vocabulary for the management API (docs/audit.md): each change a route makes,
 * as a stable dotted action (`<thing>.<past participle>`) and the thing it acted on. The gateway's
 * admin middleware looks a request's method and route template up here; a test holds that every
 * admin route that changes something is listed. Actions recorded elsewhere: `approval.decided`
 * (API, link, MCP input response, console), `tool.called` (the tool gateway) and the
 * console's own actions (its sign-in and sign-out; its run and workflow actions reuse the names below).
 */

/** Where a record's target id comes from: a path parameter, or the `id` of the created thing in the answer. */
export type TargetId = { param: string } | { answer: 'id' } | { org: true };

export interface ActionSpec {
  action: string;
  target: { type: string; id: TargetId };
  /** fields of the answer's body worth keeping (never one that can hold a secret): short strings, numbers, booleans, lists of short strings */
  answerFields?: readonly string[];
}

const param = (name: string): TargetId => ({ param: name });
const created: TargetId = { answer: 'id' };

/** `METHOD /route/template` (as @koa/router marks the matched route) → what it does. */
export const MANAGEMENT_ACTIONS: Readonly<Record<string, ActionSpec>> = Object.freeze({
  // `adminTokenId`: the minted token's name (`adm_…`), so that its later records lead back to who minted it
  'POST /api/v1/orgs': { action: 'org.created', target: { type: 'org', id: created }, answerFields: ['name', 'adminTokenId'] },
  'POST /api/v1/admin-token/rotate': { action: 'admin_token.rotated', target: { type: 'org', id: { org: true } }, answerFields: ['adminTokenId'] },
  'POST /api/v1/orgs/:id/admin-token': { action: 'admin_token.reissued', target: { type: 'org', id: param('id') }, answerFields: ['adminTokenId'] },

  'POST /api/v1/workflows': { action: 'workflow.created', target: { type: 'workflow', id: created }, answerFields: ['name'] },
  'PUT /api/v1/workflows/:id': { action: 'workflow.updated', target: { type: 'workflow', id: param('id') } },
  'DELETE /api/v1/workflows/:id': { action: 'workflow.deleted', target: { type: 'workflow', id: param('id') } },
  'POST /api/v1/workflows/:id/publish': { action: 'workflow.published', target: { type: 'workflow', id: param('id') }, answerFields: ['version'] },

  'POST /api/v1/triggers': { action: 'trigger.created', target: { type: 'trigger', id: created }, answerFields: ['workflowId'] },
  'DELETE /api/v1/triggers/:id': { action: 'trigger.deleted', target: { type: 'trigger', id: param('id') } },
  'POST /api/v1/triggers/:id/disable': { action: 'trigger.disabled', target: { type: 'trigger', id: param('id') } },
  'POST /api/v1/triggers/:id/enable': { action: 'trigger.enabled', target: { type: 'trigger', id: param('id') } },
  'PUT /api/v1/triggers/:id/schedule': { action: 'schedule.set', target: { type: 'trigger', id: param('id') } },
  'DELETE /api/v1/triggers/:id/schedule': { action: 'schedule.deleted', target: { type: 'trigger', id: param('id') } },
  'POST /api/v1/triggers/:id/schedule/pause': { action: 'schedule.paused', target: { type: 'trigger', id: param('id') } },
  'POST /api/v1/triggers/:id/schedule/resume': { action: 'schedule.resumed', target: { type: 'trigger', id: param('id') } },
  'PUT /api/v1/triggers/:id/verify/secrets': { action: 'trigger.secrets_replaced', target: { type: 'trigger', id: param('id') }, answerFields: ['secrets'] },
  'POST /api/v1/triggers/:id/forms': { action: 'trigger_form.created', target: { type: 'trigger', id: param('id') } },
  'DELETE /api/v1/triggers/:id/forms/:formId': { action: 'trigger_form.revoked', target: { type: 'trigger_form', id: param('formId') } },
  'PUT /api/v1/orgs/:id/budget': { action: 'budget.set', target: { type: 'org', id: param('id') } },

  'POST /api/v1/api-keys': { action: 'api_key.created', target: { type: 'api_key', id: created }, answerFields: ['name'] },
  'DELETE /api/v1/api-keys/:id': { action: 'api_key.revoked', target: { type: 'api_key', id: param('id') } },

  'POST /api/v1/runs/:runId/cancel': { action: 'run.cancelled', target: { type: 'run', id: param('runId') } },
  'POST /api/v1/runs/:runId/rerun': { action: 'run.rerun', target: { type: 'run', id: param('runId') }, answerFields: ['runId'] },
  'POST /api/v1/runs/:runId/resume': { action: 'run.resumed', target: { type: 'run', id: param('runId') }, answerFields: ['runId'] },

  'POST /api/v1/runs/:runId/approval': { action: 'approval.decided', target: { type: 'run', id: param('runId') }, answerFields: ['decisionId', 'applied'] },

  'POST /api/v1/members': { action: 'member.created', target: { type: 'member', id: created }, answerFields: ['email', 'role'] },
  'PATCH /api/v1/members/:id': { action: 'member.updated', target: { type: 'member', id: param('id') }, answerFields: ['role'] },
  'DELETE /api/v1/members/:id': {
    action: 'member.removed', target: { type: 'member', id: param('id') },
    answerFields: ['email', 'endedAdminTokens', 'endedApiKeys', 'endedMemberTokens', 'adminTokensLeft'],
  },
  'POST /api/v1/members/:id/tokens': { action: 'member_token.issued', target: { type: 'member', id: param('id') }, answerFields: ['tokenId'] },
  'DELETE /api/v1/members/:id/tokens': { action: 'member_token.revoked', target: { type: 'member', id: param('id') } },
  'DELETE /api/v1/oauth/grants/:grantId': { action: 'oauth_grant.revoked', target: { type: 'oauth_grant', id: param('grantId') } },
  'PUT /api/v1/identity-provider': { action: 'identity_provider.set', target: { type: 'org', id: { org: true } }, answerFields: ['issuer'] },
  'DELETE /api/v1/identity-provider': { action: 'identity_provider.deleted', target: { type: 'org', id: { org: true } } },

  'POST /api/v1/webhook-secret/rotate': { action: 'webhook_secret.rotated', target: { type: 'org', id: { org: true } } },

  'POST /api/v1/connections': { action: 'connection.created', target: { type: 'connection', id: created }, answerFields: ['application'] },
  'POST /api/v1/connections/:id/test': { action: 'connection.tested', target: { type: 'connection', id: param('id') }, answerFields: ['ok'] },
  'GET /api/v1/connections/:id/oauth/authorize': { action: 'connection.consent_started', target: { type: 'connection', id: param('id') } },
  'DELETE /api/v1/connections/:id': { action: 'connection.deleted', target: { type: 'connection', id: param('id') } },

  'POST /api/v1/servers': { action: 'server.created', target: { type: 'server', id: created }, answerFields: ['kind', 'name'] },
  'PUT /api/v1/servers/:id': { action: 'server.updated', target: { type: 'server', id: param('id') } },
  'DELETE /api/v1/servers/:id': { action: 'server.deleted', target: { type: 'server', id: param('id') } },

  'POST /api/v1/agents': { action: 'agent.created', target: { type: 'agent', id: created }, answerFields: ['name'] },
  'PATCH /api/v1/agents/:id': { action: 'agent.updated', target: { type: 'agent', id: param('id') } },
  'DELETE /api/v1/agents/:id': { action: 'agent.deleted', target: { type: 'agent', id: param('id') } },
  'POST /api/v1/agents/:id/invoke': { action: 'agent.invoked', target: { type: 'agent', id: param('id') }, answerFields: ['invocationId'] },
  'POST /api/v1/agents/:id/chats': { action: 'agent_chat.created', target: { type: 'agent', id: param('id') }, answerFields: ['id'] },
  'POST /api/v1/agents/chats/:chatId/reset': { action: 'agent_chat.reset', target: { type: 'agent_chat', id: param('chatId') } },
});

/** Recorded by their own surfaces, not by the admin middleware. */
export const APPROVAL_DECIDED = 'approval.decided';
export const TOOL_CALLED = 'tool.called';
/** The console (src/http/console/audit.ts): its run and workflow actions reuse the names above; these are its own. */
export const CONSOLE_SIGNED_IN = 'console.signed_in';
export const CONSOLE_SIGN_IN_REFUSED = 'console.sign_in_refused';
export const CONSOLE_SIGNED_OUT = 'console.signed_out';
/** The tool gateway's OAuth consent (src/http/routes/oauth-authorize.ts): a client allowed, or denied, to call the organization's tools. */
export const OAUTH_AUTHORIZED = 'oauth.authorized';
export const OAUTH_DENIED = 'oauth.denied';
/** An authenticated admin's read that was refused (403/404): who probed what. */
export const READ_REFUSED = 'api.read';

/** The spec of a request, by its method and route template (a trailing slash ignored). */
export function managementAction(method: string, route: string): ActionSpec | undefined {
  return MANAGEMENT_ACTIONS[`${method} ${route.length > 1 ? route.replace(/\/+$/, '') : route}`];
}
