/**
 * The one table of the management room's refusals as HTTP answers (src/management/outcome.ts):
 * the management API throws them as its JSON errors, the console shows their sentence with the
 * same status on its page. The routes hold no decision of their own.
 */
import type { AdminActor, ManagementRefusal, ManagementRefusalCode, Outcome } from '../management';
import type { AdminPrincipal } from './state';
import { refusalError, type HttpError, type RefusalStatus } from './http-error';

export const MANAGEMENT_STATUS: RefusalStatus<ManagementRefusalCode> = {
  FORBIDDEN: { status: 403, code: 'forbidden' },
  UNKNOWN_ORG: { status: 404, code: 'unknown_org' },
  BOOTSTRAP_TOKEN: { status: 409, code: 'bootstrap_token' },
  UNKNOWN_WORKFLOW: { status: 404, code: 'unknown_workflow' },
  INVALID_DEFINITION: { status: 400, code: 'invalid_definition' },
  PUBLISH_CONFLICT: { status: 409, code: 'publish_conflict' },
  UNKNOWN_TRIGGER: { status: 404, code: 'unknown_trigger' },
  NOT_PUBLISHED: { status: 409, code: 'not_published' },
  TOOL_NAME_TAKEN: { status: 409, code: 'tool_name_taken' },
  INVALID_DESIGNATED_OUTPUT: { status: 422, code: 'invalid_designated_output' },
  INVALID_SCHEDULE: { status: 400, code: 'invalid_schedule' },
  INVALID_SHAPING: { status: 400, code: 'invalid_body' },
  INVALID_VERIFY: { status: 400, code: 'invalid_body' },
  WEBHOOKS_UNAVAILABLE: { status: 501, code: 'not_available' },
  INVALID_INPUTS: { status: 422, code: 'invalid_inputs' },
  INVALID_INPUT_SCHEMA: { status: 422, code: 'invalid_input_schema' },
  NO_SCHEDULE: { status: 404, code: 'no_schedule' },
  UNKNOWN_API_KEY: { status: 404, code: 'unknown_api_key' },
  UNKNOWN_MEMBER: { status: 404, code: 'unknown_member' },
  MEMBER_EXISTS: { status: 409, code: 'member_exists' },
  UNKNOWN_ALERT_RULE: { status: 404, code: 'unknown_alert_rule' },
  INVALID_ALERT_RULE: { status: 400, code: 'invalid_alert_rule' },
  INVALID_DEFINITIONS: { status: 400, code: 'invalid_definitions' },
  APPLY_FAILED: { status: 409, code: 'apply_failed' },
};

/** The refusal as the API answers it. */
export function managementError(refusal: ManagementRefusal): HttpError {
  return refusalError(MANAGEMENT_STATUS, refusal);
}

/** The outcome's value, or its refusal thrown as the API's error. */
export function settled<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw managementError(outcome);
  return outcome.value;
}

/** The status a refusal is answered with (the console's pages use it too). */
export function refusalStatus(refusal: ManagementRefusal): number {
  return MANAGEMENT_STATUS[refusal.code].status;
}

/** The admin credential as the management room knows its caller. */
export function actorOf(principal: AdminPrincipal): AdminActor {
  return { orgId: principal.orgId, instanceAdmin: principal.instanceAdmin, memberId: principal.member?.id ?? null };
}
