/**
 * The `workflows` server's task kind: any of its tools (an organization's published workflows) may
 * run as an MCP task, and the task is the run (a `runAutomation` workflow started by the tool, its
 * memo's `startedBy` naming the server); its result is the tool's answer (WorkflowTools.output).
 * An open run waiting on an approval is input_required, and the task takes approval decisions.
 */
import { z } from 'zod';
import { WORKFLOW_TYPES } from '../../../common/workflow-contracts';
import type { RunService } from '../../../runs/run-service';
import type { ToolResult, ToolServices } from '../../server';
import { TaskNotFoundError } from '../../mcp/task-errors';
import type { TaskKind } from '../../mcp/task-kind';
import { WORKFLOWS_SERVER, type WorkflowTools } from './index';

/** Runs started by a workflow tool carry this `startedBy` prefix. */
const TOOL_STARTED_BY = `tool:${WORKFLOWS_SERVER}/`;

/** What of a run's memo (src/common/run-memo.ts) tells a task: whose it is, who started it, its ttl. */
const RunTaskMemoSchema = z.object({ orgId: z.string(), startedBy: z.string(), taskTtlMs: z.unknown() }).loose();

export interface WorkflowTaskKindDeps {
  runs: RunService;
  workflowTools: WorkflowTools;
  services: Pick<ToolServices, 'blobs' | 'signer'>;
}

export function workflowTaskKind({ runs, workflowTools, services }: WorkflowTaskKindDeps): TaskKind {
  return {
    server: WORKFLOWS_SERVER,
    workflowType: WORKFLOW_TYPES.runAutomation,
    cancelledMessage: 'the run was cancelled',
    runsAsTask: () => true,
    owns(memo, orgId) {
      const parsed = RunTaskMemoSchema.safeParse(memo);
      return parsed.success && parsed.data.orgId === orgId && parsed.data.startedBy.startsWith(TOOL_STARTED_BY);
    },
    ttlOf(memo) {
      const parsed = RunTaskMemoSchema.safeParse(memo);
      return parsed.success && typeof parsed.data.taskTtlMs === 'number' ? parsed.data.taskTtlMs : null;
    },
    async start(orgId, toolName, args, call) {
      const { runId } = await workflowTools.start(orgId, toolName, args, call.idempotencyKey, { taskTtlMs: call.ttlMs, ...(call.refuseApprovals ? { refuseApprovals: true } : {}) });
      return runId;
    },
    async state(_orgId, taskId, _workflow, closed) {
      if (closed) return { status: closed, statusMessage: closed === 'failed' ? (await runs.view(taskId))?.error : undefined };
      const view = await runs.view(taskId);
      if (view?.status === 'PAUSED' && view.waitingOn?.kind === 'approval') return { status: 'input_required', statusMessage: view.waitingOn.message };
      return { status: 'working', statusMessage: view?.status === 'PAUSED' ? 'waiting for a timer' : undefined };
    },
    async result(_orgId, taskId, workflow, waitMs, signal): Promise<ToolResult | undefined> {
      let view;
      if (workflow.status.name === 'RUNNING') {
        const outcome = await Promise.race([
          runs.waitFor(taskId, waitMs),
          new Promise<{ done: false }>((resolve) => signal?.addEventListener('abort', () => resolve({ done: false }), { once: true })),
        ]);
        if (!outcome.done) return undefined;
        view = outcome.view;
      } else {
        view = await runs.view(taskId);
        if (!view) throw new TaskNotFoundError(taskId);
      }
      if (workflow.status.name === 'CANCELLED' || view.error === 'the run was cancelled') {
        return { isError: true, message: 'the run was cancelled', value: { runId: taskId, status: 'CANCELLED', error: 'the run was cancelled' } };
      }
      const output = await workflowTools.output(view, services);
      if (output.isError) {
        const message = typeof output.value.error === 'string' ? output.value.error : 'the run failed';
        return { isError: true, message, value: output.value, content: output.content };
      }
      return { isError: false, value: output.value, content: output.content };
    },
    async pendingApproval(taskId) {
      const view = await runs.view(taskId);
      return view?.status === 'PAUSED' && view.waitingOn?.kind === 'approval' ? view.waitingOn : undefined;
    },
    async decide({ keyId, member }, taskId, stepIndex, answer) {
      // A member signed in by URL decides as themselves, as on POST …/approval: their e-mail is the
      // approver (so the step must name it) and they may not name another. Any other caller signed
      // in by OAuth is its grant (src/oauth/); a runtime token is its API key.
      if (member && answer.approver !== undefined && answer.approver.toLowerCase() !== member.email.toLowerCase()) {
        return { ok: false, refusal: 'NOT_AN_APPROVER', message: `a member decides as themselves (${member.email}), not as ${answer.approver}` };
      }
      const actor = member ? `member:${member.id}` : keyId.startsWith('oauth:') ? keyId : `api-key:${keyId}`;
      const outcome = await runs.decide(taskId, { ...answer, ...(member ? { approver: member.email } : {}), stepIndex, actor, via: 'api' });
      return outcome.ok ? outcome : { ok: false, refusal: outcome.refusal, message: outcome.message };
    },
  };
}
