/**
 * The audit trail's vocabulary (docs/audit.md): a stable dotted action (`<thing>.<past participle>`)
 * and the thing it acted on. Each management route names its action in its operation
 * (src/http/operation.ts; a test holds that every admin route that changes something has one).
 * Actions recorded elsewhere: `approval.decided` (API, link, MCP input response, console),
 * `tool.called` (the tool gateway) and the console's own actions (its sign-in and sign-out; its run
 * and workflow actions reuse the management API's names).
 */

/** Where a record's target id comes from: a path parameter, or the `id` of the created thing in the answer. */
export type TargetId = { param: string } | { answer: 'id' } | { org: true };

export interface ActionSpec {
  action: string;
  target: { type: string; id: TargetId };
  /** fields of the answer's body worth keeping (never one that can hold a secret): short strings, numbers, booleans, lists of short strings */
  answerFields?: readonly string[];
  /**
   * An error code the route may answer (`apply_failed`) → the action its record takes instead, when
   * that failure is an event of its own; the refusal's facts (`HttpError` `facts`) go in its details.
   */
  failures?: Readonly<Record<string, string>>;
}

/** Recorded by their own surfaces, not by the admin middleware. */
export const APPROVAL_DECIDED = 'approval.decided';
export const TOOL_CALLED = 'tool.called';
/**
 * A durable tool call (src/tools/custom/durable.ts): started (the gateway or worker that started
 * its task), each failed attempt that another follows (`retried`), and how it ended (`completed`,
 * `failed`, `cancelled`), recorded by the worker that ran the attempt. The target is the task.
 */
export const DURABLE_CALL_ACTIONS = {
  started: 'durable_call.started', retried: 'durable_call.retried', completed: 'durable_call.completed',
  failed: 'durable_call.failed', cancelled: 'durable_call.cancelled', upstream_task: 'durable_call.upstream_task',
} as const;
/** The console (src/http/console/audit.ts): its run and workflow actions reuse the management API's names; these are its own. */
export const CONSOLE_SIGNED_IN = 'console.signed_in';
export const CONSOLE_SIGN_IN_REFUSED = 'console.sign_in_refused';
export const CONSOLE_SIGNED_OUT = 'console.signed_out';
/**
 * The codec endpoint's browser sign-in (src/http/routes/codec.ts), recorded under the instance administrator's
 * organization: it opens every organization's run data in the Temporal Web UI, so who signed in, and out, is kept.
 */
export const CODEC_SIGNED_IN = 'codec.signed_in';
export const CODEC_SIGN_IN_REFUSED = 'codec.sign_in_refused';
export const CODEC_SIGNED_OUT = 'codec.signed_out';
/** The tool gateway's OAuth consent (src/http/routes/oauth-authorize.ts): a client allowed, or denied, to call the organization's tools. */
export const OAUTH_AUTHORIZED = 'oauth.authorized';
export const OAUTH_DENIED = 'oauth.denied';
/** An authenticated admin's read that was refused (403/404): who probed what. */
export const READ_REFUSED = 'api.read';
