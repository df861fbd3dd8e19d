/**
 * What a management service answers: the value, or a refusal with a stable code and a sentence
 * for a person (as TriggerService's refusals). Each door words a refusal for its audience: the
 * HTTP layer maps the code to a status in one table (src/http/management-status.ts), the console
 * shows the sentence on its page. A fault (the database, Temporal unreachable) is thrown, not
 * refused.
 */
export type ManagementRefusalCode =
  | 'FORBIDDEN'
  | 'UNKNOWN_ORG'
  | 'BOOTSTRAP_TOKEN'
  | 'UNKNOWN_WORKFLOW'
  | 'INVALID_DEFINITION'
  | 'PUBLISH_CONFLICT'
  | 'UNKNOWN_TRIGGER'
  | 'NOT_PUBLISHED'
  | 'TOOL_NAME_TAKEN'
  | 'INVALID_DESIGNATED_OUTPUT'
  | 'INVALID_SCHEDULE'
  | 'INVALID_SHAPING'
  | 'INVALID_VERIFY'
  | 'WEBHOOKS_UNAVAILABLE'
  | 'INVALID_INPUTS'
  | 'INVALID_INPUT_SCHEMA'
  | 'NO_SCHEDULE'
  | 'UNKNOWN_API_KEY'
  | 'UNKNOWN_MEMBER'
  | 'MEMBER_EXISTS'
  | 'UNKNOWN_ALERT_RULE'
  | 'INVALID_ALERT_RULE'
  | 'INVALID_DEFINITIONS'
  | 'APPLY_FAILED';

/** One problem of a definition, where it is (the console places it in the text). */
export interface DefinitionIssue {
  path: (string | number)[];
  message: string;
}

export interface ManagementRefusal {
  ok: false;
  code: ManagementRefusalCode;
  message: string;
  /** INVALID_DEFINITION: each problem with its path; INVALID_INPUTS of a schedule: each input that does not fit, at `['inputs', name, …]` */
  issues?: DefinitionIssue[];
  /** secret-free facts of the refusal for its audit record, never answered (APPLY_FAILED: what failed and how the rollback went) */
  facts?: RefusalFacts;
}

/** What an audit record keeps of a refusal: short strings, numbers, booleans, lists of short strings. */
export type RefusalFacts = Readonly<Record<string, string | number | boolean | readonly string[]>>;

export type Outcome<T> = { ok: true; value: T } | ManagementRefusal;

export const done = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });

export const refused = (code: ManagementRefusalCode, message: string, issues?: DefinitionIssue[], facts?: RefusalFacts): ManagementRefusal =>
  ({ ok: false, code, message, ...(issues ? { issues } : {}), ...(facts ? { facts } : {}) });
