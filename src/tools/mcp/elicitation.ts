/**
 * Approvals through MCP elicitation: while a task's run waits on an approval, the task result
 * stream (task-stream.ts) sends an `elicitation/create` request with a decision form; the client's
 * answer, a JSON-RPC response POSTed to any replica, is an approval decision by the API key behind
 * the caller's runtime token. The request's id names its task and step
 * (`flowgate-approval/<taskId>/<stepIndex>/<nonce>`), so whichever replica receives the answer can
 * act on it.
 */
import { randomUUID } from 'node:crypto';
import { ApprovalAnswerSchema, RELATED_TASK_META_KEY, type ClientResponse, type ElicitRequest } from '../../contracts/mcp';
import type { AuditSource, McpApprovalEvent } from '../../audit/audit-trail';
import type { RuntimePrincipal } from '../../crypto/runtime-tokens';
import type { ToolCallRecorder } from './methods';
import type { Logger } from '../../observability/logger';
import { TaskNotFoundError } from './task-errors';
import type { PendingApproval, TaskDecideOutcome } from './task-kind';
import type { WorkflowTasks } from './tasks';

const APPROVAL_ELICITATION_PREFIX = 'flowgate-approval/';

/** The `elicitation/create` request that asks the client to decide the approval `approval` of task `taskId`. */
export function approvalElicitation(taskId: string, approval: PendingApproval): { jsonrpc: '2.0'; id: string } & ElicitRequest {
  const properties = {
    decision: { type: 'string', title: 'Decision', description: 'approve or reject', enum: ['approve', 'reject'] },
    ...(approval.approvers.length > 0
      ? { approver: { type: 'string' as const, title: 'Approver', description: 'decide as this approver (optional: else the API key decides as itself)', enum: approval.approvers } }
      : {}),
    comment: { type: 'string', title: 'Comment', maxLength: 2000 },
  } as const;
  return {
    jsonrpc: '2.0',
    id: `${APPROVAL_ELICITATION_PREFIX}${taskId}/${approval.stepIndex}/${randomUUID()}`,
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: approval.message,
      requestedSchema: { type: 'object', properties, required: ['decision'] },
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    },
  };
}

/** The audit trail's record of a decision given through a task (an elicitation's answer, `tasks/update`, `inputResponses`). */
export function decisionEvent(principal: RuntimePrincipal, taskId: string, stepIndex: number, decision: 'approve' | 'reject', approver: string | undefined,
  outcome: TaskDecideOutcome): McpApprovalEvent {
  return {
    orgId: principal.orgId, keyId: principal.keyId, ...(principal.member ? { member: principal.member } : {}), taskId, stepIndex, decision,
    ...(approver ? { approver } : {}), ok: outcome.ok,
    ...(outcome.ok ? { applied: outcome.applied, ...(outcome.decisionId ? { decisionId: outcome.decisionId } : {}) } : { refusal: outcome.refusal }),
  };
}

/**
 * A JSON-RPC response from the client: only answers to approval elicitations mean something (an
 * approval decision by the token's API key); any other is dropped. Never answered.
 */
export async function answerElicitation(
  response: ClientResponse, principal: RuntimePrincipal, tasks: WorkflowTasks, log: Logger, requestId?: string, audit?: { recorder: ToolCallRecorder; source: AuditSource },
): Promise<void> {
  if (typeof response.id !== 'string' || !response.id.startsWith(APPROVAL_ELICITATION_PREFIX)) return;
  const [taskId, step] = response.id.slice(APPROVAL_ELICITATION_PREFIX.length).split('/');
  const answer = ApprovalAnswerSchema.safeParse(response.result);
  const stepIndex = Number(step);
  if (!taskId || !Number.isInteger(stepIndex) || !answer.success || answer.data.action !== 'accept' || !answer.data.content) return;
  const { decision, approver, comment } = answer.data.content;
  try {
    const outcome = await tasks.decide(principal.orgId, principal, taskId, stepIndex, { decision, ...(approver ? { approver } : {}), ...(comment ? { comment } : {}) });
    await audit?.recorder.approvalDecided(decisionEvent(principal, taskId, stepIndex, decision, approver, outcome), audit.source);
    if (!outcome.ok) log.info('an approval given through a task was refused', { requestId, taskId, stepIndex, reason: outcome.message });
  } catch (error) {
    if (error instanceof TaskNotFoundError) return;
    log.error('an approval given through a task failed', { requestId, taskId, error });
  }
}
