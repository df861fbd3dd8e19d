/**
 * Input from a 2026-07-28 client: an approval a run waits on, asked as the specification's
 * `inputRequests` (an `elicitation/create` form per pending approval, keyed `approval-<step>`) and
 * answered as `inputResponses` — through `tasks/update` for a task of the Tasks extension, or, for a
 * plain `tools/call` (Multi Round-Trip Requests, in place of the 2025 era's server-initiated
 * elicitation), as an `input_required` result the client answers by calling the tool again with its
 * `inputResponses` and the `requestState` it was given. Either way the answer is the decision of
 * the API key behind the caller's runtime token, recorded exactly as `POST …/approval` records it.
 * A plain call of a tool whose runs may wait on approvals (the workflow tools) starts its run as a
 * task (the same durable run as ever) and follows it: it answers the result once the run closes,
 * `input_required` when it waits on an approval, and a tool error once TASK_RESULT_WAIT_MS passed.
 * A call that declares no elicitation cannot be asked: a workflow that holds an approval is refused
 * to it before its run starts (-32021, unanswerable.ts), and a run that waits on one all the same is
 * handed over at once as a tool error naming the run to follow.
 * `requestState` names the run and the tool; it carries no authority: the run must be a task of the
 * caller's organization waiting on that approval, and the decision is checked as every decision is.
 */
import { ApprovalAnswerSchema, type McpTask } from '../../contracts/mcp';
import type { RuntimePrincipal } from '../../crypto/runtime-tokens';
import type { ToolResult } from '../server';
import { approvalElicitation, decisionEvent } from './elicitation';
import { ErrorCode, JsonRpcError } from './jsonrpc';
import type { PendingApproval } from './task-kind';
import type { WorkflowTasks } from './tasks';
import { fieldOf, isRecord } from '../../common/narrow';
import { pauseUnlessAborted } from '../../common/pause';
import { handedOver, isUnanswerable, modernRefusal } from './unanswerable';
import type { AuditSource } from '../../audit/audit-trail';
import type { ToolCallRecorder } from './methods';

/** Where a decision given as an `inputResponses` answer is recorded (the audit trail), as every approval decision is. */
export interface DecisionAudit {
  recorder: Pick<ToolCallRecorder, 'approvalDecided'>;
  source: AuditSource;
}

const APPROVAL_KEY = /^approval-(\d{1,6})$/;
const invalidParams = (message: string): JsonRpcError => new JsonRpcError(ErrorCode.INVALID_PARAMS, message);

/** A decider the step does not name (a member whose e-mail it does not list, or who named another approver): as POST …/approval answers 403 not_an_approver. */
function notAnApprover(message: string): JsonRpcError {
  return new JsonRpcError(ErrorCode.PERMISSION_DENIED, `not_an_approver: ${message}`, { refusal: 'NOT_AN_APPROVER' });
}

/** The `inputRequests` of a run waiting on `approval`. */
export function inputRequestsOf(taskId: string, approval: PendingApproval): Record<string, unknown> {
  const { params } = approvalElicitation(taskId, approval);
  const { _meta: _related, ...form } = params;
  return { [`approval-${approval.stepIndex}`]: { method: 'elicitation/create', params: form } };
}

/**
 * Applies a client's `inputResponses` to the approval the task waits on: an accepted form is the
 * decision; a declined or cancelled one decides nothing (the task stays input_required, as with
 * elicitation). As the Tasks extension says (a server SHOULD ignore responses to a key that is not
 * currently outstanding: never issued, already answered, superseded), a key that is no
 * `approval-<step>`, or names another step than `approval` (the one the run said it waits on, when
 * the caller read it), is ignored, and so is a decision the run refuses as already taken (this
 * caller answered the key before) or no longer awaited; an answer to the pending request that is
 * no form result is invalid params, and a decider who is not an approver is refused (permission
 * denied). Without `approval` (not read: the run may not answer, and tasks/update does not wait
 * for it) the run itself refuses a step it does not wait on, and a decision it does not answer in
 * time is recorded and applied when it resumes (RunService.decide): accepted too. Answers the steps
 * this caller has answered (decided now or before).
 */
export async function applyInputResponses(tasks: WorkflowTasks, principal: RuntimePrincipal, taskId: string, approval: PendingApproval | undefined,
  responses: Record<string, unknown>, audit?: DecisionAudit): Promise<number[]> {
  const decided: number[] = [];
  for (const [key, response] of Object.entries(responses)) {
    const step = APPROVAL_KEY.exec(key);
    const stepIndex = Number(step?.[1]);
    if (!step || (approval && approval.stepIndex !== stepIndex)) continue;
    const answer = ApprovalAnswerSchema.safeParse(response);
    if (!answer.success) throw invalidParams(`inputResponses.${key} must be an elicitation result: action accept, decline or cancel, and content.decision approve or reject`);
    if (answer.data.action !== 'accept' || !answer.data.content) continue;
    const { decision, approver, comment } = answer.data.content;
    const outcome = await tasks.decide(principal.orgId, principal, taskId, stepIndex, { decision, ...(approver ? { approver } : {}), ...(comment ? { comment } : {}) });
    await audit?.recorder.approvalDecided(decisionEvent(principal, taskId, stepIndex, decision, approver, outcome), audit.source);
    if (!outcome.ok && outcome.refusal === 'NOT_AN_APPROVER') throw notAnApprover(outcome.message);
    // ALREADY_DECIDED: this caller answered the key before; NOT_WAITING: the request is no longer outstanding
    if (outcome.ok || outcome.refusal === 'ALREADY_DECIDED') decided.push(stepIndex);
  }
  return decided;
}

interface RequestState {
  run: string;
  tool: string;
}

export function encodeRequestState(state: RequestState): string {
  return Buffer.from(JSON.stringify(state)).toString('base64url');
}

function decodeRequestState(text: unknown, tool: string): RequestState {
  try {
    // the caller hands it back: any JSON at all, checked field by field
    const state: unknown = JSON.parse(Buffer.from(String(text), 'base64url').toString('utf8'));
    const run = fieldOf(state, 'run');
    if (typeof run === 'string' && run.length > 0 && fieldOf(state, 'tool') === tool) return { run, tool };
  } catch {
    // fall through
  }
  throw invalidParams(`requestState is not one this server handed out for ${tool}`);
}

export interface RoundTrip {
  tasks: WorkflowTasks;
  principal: RuntimePrincipal;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  /** the retry's members, when this call answers an earlier input_required */
  requestState?: unknown;
  inputResponses?: unknown;
  /** whether the client declared the elicitation capability (asking for input needs it) */
  canElicit: boolean;
  idempotencyKey?: string;
  forwardHeaders: Readonly<Record<string, string>>;
  signal: AbortSignal;
  audit?: DecisionAudit;
}

/** A plain tools/call of a tool whose run may wait on approvals: its result, or `input_required`. */
export async function callWithRoundTrips(call: RoundTrip): Promise<{ result: ToolResult } | { inputRequired: Record<string, unknown> }> {
  const { tasks, principal, tool } = call;
  let taskId: string;
  let decided: number[] = [];
  if (call.requestState !== undefined) {
    taskId = decodeRequestState(call.requestState, tool).run;
    const responses = call.inputResponses;
    if (responses !== undefined && !isRecord(responses)) throw invalidParams('inputResponses must be an object');
    const { approval } = await tasks.detailed(principal.orgId, taskId);
    decided = await applyInputResponses(tasks, principal, taskId, approval, responses ?? {}, call.audit);
  } else {
    try {
      // a caller that cannot be asked for an approval is refused a run that may wait on one, before it starts
      taskId = (await tasks.create(principal.orgId, call.server, tool, call.args, {
        idempotencyKey: call.idempotencyKey, forwardHeaders: call.forwardHeaders, ...(call.canElicit ? {} : { refuseApprovals: true }),
      })).taskId;
    } catch (error) {
      throw isUnanswerable(error) ? modernRefusal(error) : error;
    }
  }
  const deadline = Date.now() + tasks.resultWaitMs;
  let task: McpTask | undefined;
  while (!call.signal.aborted && Date.now() < deadline) {
    const seen = await tasks.detailed(principal.orgId, taskId);
    task = seen.task;
    if (seen.result) return { result: seen.result };
    // a step just decided may still show as pending for a moment
    if (seen.approval && !decided.includes(seen.approval.stepIndex)) {
      if (!call.canElicit) {
        // a run waiting all the same (an earlier call's, named by the same idempotency key) is handed over at once, never waited on
        const { message, details } = handedOver(taskId, seen.approval, '2026');
        return { result: { isError: true, message, value: details } };
      }
      return { inputRequired: { resultType: 'input_required', inputRequests: inputRequestsOf(taskId, seen.approval), requestState: encodeRequestState({ run: taskId, tool }) } };
    }
    if (task.status === 'cancelled' || task.status === 'failed') break;
    await pauseUnlessAborted(task.pollInterval, call.signal);
  }
  const status = task?.status ?? 'working';
  const message = status === 'working' || status === 'input_required'
    ? `run ${taskId} is still going after ${Math.round(tasks.resultWaitMs / 1000)} seconds; call the tool as a task (the ${'io.modelcontextprotocol/tasks'} extension) to wait for it`
    : `run ${taskId} ended ${status}${task?.statusMessage ? `: ${task.statusMessage}` : ''}`;
  return { result: { isError: true, message, value: { runId: taskId, status } } };
}
