/**
 * Calls whose run needs an answer the caller cannot give (docs/mcp-tasks.md, "Calls that cannot be
 * answered"). A workflow tool's run that reaches an approval step waits for a decision; a caller
 * that cannot be asked for it — a plain 2025-11-25 `tools/call` (one JSON reply: nothing can be
 * asked on it), a plain 2026-07-28 call that declares no `elicitation`, an in-process caller (a
 * `tool` step, an agent, the console) — would only wait, and leave the run waiting behind it. So:
 *   - such a call of a workflow that holds an approval anywhere in its steps is refused before its
 *     run starts (the workflow tools raise `unanswerableRefusal`, a ToolCallError UNANSWERABLE),
 *     answered -32601 in the 2025 era (what the specification asks of a tool whose `taskSupport` is
 *     `required`, as such a tool is listed there) and -32021 in the 2026 era;
 *   - a run that waits on an approval all the same (an earlier call's run named by the same
 *     idempotency key) is handed over at once: a tool error naming the run, which goes on as a task
 *     of the caller's (`handedOver`).
 */
import type { ApprovalStep } from '../../common/definition';
import { TASKS_EXTENSION } from '../../contracts/mcp';
import { ToolCallError } from '../errors';
import { ErrorCode, JsonRpcError } from './jsonrpc';
import type { PendingApproval } from './task-kind';

/** The refusal, before anything ran, of a call of `tool` whose workflow holds the approval `step` that the caller cannot answer. */
export function unanswerableRefusal(tool: string, step: Pick<ApprovalStep, 'name'>): ToolCallError {
  return new ToolCallError('UNANSWERABLE', `${tool} runs a workflow that waits on an approval (step "${step.name}"), which this call cannot answer; no run was started. `
    + `Call it as an MCP task (2025-11-25: params.task; 2026-07-28: the ${TASKS_EXTENSION} extension): the approval is then asked of the client through elicitation `
    + '(tasks/result, or tasks/get and tasks/update) and may be decided through the approval API or the approvers\' links meanwhile; '
    + 'or call it with protocol 2026-07-28 from a client that declares the elicitation capability');
}

export const isUnanswerable = (error: unknown): error is ToolCallError => error instanceof ToolCallError && error.code === 'UNANSWERABLE';

/**
 * The refusal as the 2025 era answers it: -32601, as the 2025-11-25 specification requires of a
 * plain call of a tool whose `execution.taskSupport` is `required` (tools/list says so of these).
 */
export function legacyRefusal(error: ToolCallError): JsonRpcError {
  return new JsonRpcError(ErrorCode.METHOD_NOT_FOUND, error.message, { taskSupport: 'required' });
}

/**
 * The refusal as the 2026 era answers it: -32021 (HTTP 400), the capability that would let the
 * call ask for the approval (`elicitation`); the Tasks extension would do as well (`orExtensions`).
 */
export function modernRefusal(error: ToolCallError): JsonRpcError {
  return new JsonRpcError(ErrorCode.MISSING_CLIENT_CAPABILITY, error.message,
    { requiredCapabilities: { elicitation: {} }, orCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
}

/**
 * A run that waits on an approval this call cannot answer, handed over: the message and the
 * details of the tool error the call answers at once. The run goes on as the caller's task
 * (`follow.taskId`); `follow.approvals` lists its approval links (admin token). `workflowId`, when
 * known, fills the approval API's path.
 */
export function handedOver(runId: string, approval: Pick<PendingApproval, 'stepIndex' | 'message'>, era: '2025' | '2026', workflowId = '{workflowId}'): {
  message: string; details: Record<string, unknown>;
} {
  const asTask = era === '2025'
    ? `tasks/get and tasks/result ${runId} (tasks/result asks for the approval through elicitation)`
    : `tasks/get ${runId} with the ${TASKS_EXTENSION} extension, answering its inputRequests with tasks/update`;
  return {
    message: `run ${runId} waits on an approval (step ${approval.stepIndex}) that this call cannot answer; it goes on as task ${runId}: follow it with ${asTask}, `
      + `or decide it through POST /ext/webhook/{apiKey}/runs/${workflowId}/${runId}/approval or the approvers' links (GET /api/v1/runs/${runId}/approvals)`,
    details: {
      runId, status: 'PAUSED', waitingOn: { kind: 'approval', stepIndex: approval.stepIndex, message: approval.message },
      follow: { taskId: runId, approvals: `/api/v1/runs/${runId}/approvals` },
    },
  };
}
