/**
 * The roles of an organization's members (docs/people-and-roles.md): the vocabulary the API takes
 * and answers, the registry stores on members and API keys, and runtime tokens carry. It sits
 * here, below the stores, so that they never import the people service; what each role may do is
 * src/people/roles.ts.
 */
import { isOneOf } from '../common/narrow';

export const ROLES = ['admin', 'editor', 'operator', 'approver', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return isOneOf(ROLES, value);
}
