/**
 * Roles and permissions (docs/people-and-roles.md): what each role of an organization's member may
 * do. Each management route names the permission it needs in its operation (src/http/operation.ts);
 * the guard (src/http/auth.ts) refuses a credential whose role lacks it with 403 naming the
 * permission. An admin token is the admin role. A route that names none needs `read` to read and
 * `org.manage` (the admin role) to change something: a new route is closed until it says otherwise.
 */
import type { Role } from '../contracts/roles';

/** The roles themselves live below the stores (src/contracts/roles.ts); shown here beside what they may do. */
export { isRole, ROLES, type Role } from '../contracts/roles';
import { isOneOf, keysOf } from '../common/narrow';

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
  return isOneOf(PERMISSIONS[permission], role);
}

export function isPermission(name: string): name is Permission {
  return Object.hasOwn(PERMISSIONS, name);
}

/** The permissions a role holds, in the table's order. */
export function permissionsOf(role: Role): Permission[] {
  return keysOf(PERMISSIONS).filter((p) => roleHas(role, p));
}
