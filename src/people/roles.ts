/**
 * Roles and permissions (docs/people-and-roles.md): what each role of an organization's member may
 * do. The management API's guard (src/http/auth.ts) looks the request's permission up here
 * (permissionFor) and refuses a credential whose role lacks it with 403 naming the permission.
 * An admin token is the admin role. A route this table does not know that changes something
 * needs the admin role: a new route is closed until it is listed.
 */
import { MANAGEMENT_ACTIONS } from '../audit/actions';
import type { Role } from '../contracts/roles';

/** The roles themselves live below the stores (src/contracts/roles.ts); shown here beside what they may do. */
export { isRole, ROLES, type Role } from '../contracts/roles';

/** Permission → the roles that hold it. */
export const PERMISSIONS = Object.freeze({
  /** read workflows, triggers, runs, connections, servers, agents, schedules, budget */
  'read': ['admin', 'editor', 'operator', 'approver', 'viewer'],
  'workflows.write': ['admin', 'editor'],
  'triggers.write': ['admin', 'editor'],
  'connections.write': ['admin', 'editor'],
  'servers.write': ['admin', 'editor'],
  'agents.write': ['admin', 'editor'],
  /** start, cancel, re-run and resume runs; invoke agents */
  'runs.operate': ['admin', 'operator'],
  /** decide approvals (an approver only those addressed to them) */
  'approvals.decide': ['admin', 'approver'],
  /** the signed per-approver links of a pending approval (each decides as its approver) */
  'approvals.links': ['admin'],
  'members.manage': ['admin'],
  'api_keys.manage': ['admin'],
  /** organizations, admin tokens, budgets, the webhook secret, the identity provider */
  'org.manage': ['admin'],
  'audit.read': ['admin'],
} satisfies Record<string, readonly Role[]>);
export type Permission = keyof typeof PERMISSIONS;

export function roleHas(role: Role, permission: Permission): boolean {
  return (PERMISSIONS[permission] as readonly Role[]).includes(role);
}

/** The permissions a role holds, in the table's order. */
export function permissionsOf(role: Role): Permission[] {
  return (Object.keys(PERMISSIONS) as Permission[]).filter((p) => roleHas(role, p));
}

/** An audit action's family (the part before the dot) → the permission to take it. */
const BY_FAMILY: Readonly<Record<string, Permission>> = {
  org: 'org.manage', admin_token: 'org.manage', budget: 'org.manage', webhook_secret: 'org.manage', identity_provider: 'org.manage', oauth_grant: 'org.manage',
  workflow: 'workflows.write',
  trigger: 'triggers.write', schedule: 'triggers.write', trigger_form: 'triggers.write',
  api_key: 'api_keys.manage', member: 'members.manage', member_token: 'members.manage',
  run: 'runs.operate', approval: 'approvals.decide',
  connection: 'connections.write', server: 'servers.write', agent: 'agents.write', agent_chat: 'runs.operate',
};

/** Single actions whose permission is not their family's. */
const BY_ACTION: Readonly<Record<string, Permission>> = {
  'agent.invoked': 'runs.operate',
  /** a tool tried from the console (tools act: they send mail, call APIs, start runs) */
  'tool.called': 'runs.operate',
};

/** The permission an audit action (the API's or the console's) needs; undefined for one that needs none (sign-out). */
export function permissionForAction(action: string): Permission | undefined {
  return BY_ACTION[action] ?? BY_FAMILY[action.split('.')[0] ?? ''];
}

/** Reads that are not for every role (`METHOD /route`). */
const GUARDED_READS: Readonly<Record<string, Permission>> = {
  'GET /api/v1/api-keys': 'api_keys.manage',
  'GET /api/v1/members': 'members.manage',
  'GET /api/v1/members/:id/credentials': 'members.manage',
  'GET /api/v1/identity-provider': 'org.manage',
  'GET /api/v1/oauth/grants': 'org.manage',
  'GET /api/v1/webhook-secret': 'org.manage',
  'GET /api/v1/audit': 'audit.read',
  'GET /api/v1/runs/:runId/approvals': 'approvals.links',
};

/** The permission a management request needs, by its method and route template. */
export function permissionFor(method: string, route: string): Permission {
  const key = `${method === 'HEAD' ? 'GET' : method} ${route.length > 1 ? route.replace(/\/+$/, '') : route}`;
  const guarded = GUARDED_READS[key];
  if (guarded) return guarded;
  const spec = MANAGEMENT_ACTIONS[key];
  if (spec) return permissionForAction(spec.action) ?? 'org.manage';
  return method === 'GET' || method === 'HEAD' ? 'read' : 'org.manage';
}
