/**
 * What a tool-server kind registers to run some of its tools as MCP Tasks (tasks.ts is generic
 * over it and knows no server by name). A task is one Temporal workflow whose id is the task id;
 * the kind says which tools run as tasks, how to start the task's workflow, how to tell its
 * workflows apart (workflow type and memo), and how to read a task's state and result. The built-in
 * kinds live beside their servers (src/tools/servers/<kind>/tasks.ts) and are listed in
 * src/tools/servers/task-kinds.ts; startFlowgate takes more (`taskKinds`), as it takes `serverKinds`.
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { ApprovalDecision, WaitingOn } from '../../common/run-types';
import type { ToolResult, ToolServer } from '../server';
import type { TaskStatus } from '../../contracts/mcp';
import type { RuntimePrincipal } from '../../crypto/runtime-tokens';

/** What a task-augmented call carries besides its arguments. */
export interface TaskCallContext {
  idempotencyKey?: string;
  /** the requested ttl (ms) */
  ttl?: number;
  forwardHeaders: Readonly<Record<string, string>>;
  /**
   * The caller cannot answer an approval of the task (a 2026 plain call without elicitation that
   * follows its run): a kind whose runs may wait on one refuses, before starting anything, a task
   * that would (ToolCallError UNANSWERABLE, unanswerable.ts). Kinds without approvals ignore it.
   */
  refuseApprovals?: boolean;
  /** the API key (or grant) behind the caller's token, for kinds that audit the task's later events */
  keyId?: string;
}

/** What a kind is told when it starts a task. */
export interface TaskStart extends TaskCallContext {
  /** the task's ttl (ms), clamped: the kind keeps it in its workflow's memo (see TaskKind.ttlOf) */
  ttlMs: number;
  /** whether a task of the caller's organization with this id is known (an idempotent start looks first) */
  exists(taskId: string): Promise<boolean>;
  /** the server the call's path resolved, when the caller holds it (a kind whose servers are the organizations' own reads it) */
  server?: ToolServer;
}

/** A task's state as tasks/get shows it. */
export interface TaskState {
  status: TaskStatus;
  statusMessage?: string;
}

/** The approval a task's run waits on (input_required). */
export type PendingApproval = Extract<WaitingOn, { kind: 'approval' }>;

/** An approval decision given through a task (an elicitation answer). */
export interface TaskApprovalAnswer {
  decision: 'approve' | 'reject';
  approver?: string;
  comment?: string;
}

/**
 * Who decides through a task: the API key (or OAuth grant) behind the caller's token, and the
 * member when a person signed in by URL (they decide as themselves: their e-mail is the approver).
 */
export type TaskDecider = Pick<RuntimePrincipal, 'keyId' | 'member'>;

/** A refusal names why (the run's DecisionRefusal: NOT_WAITING, NOT_AN_APPROVER, ALREADY_DECIDED, …). */
export type TaskDecideOutcome =
  /** the run took the decision */
  | { ok: true; applied: true; decisionId?: string; decision: ApprovalDecision }
  /** the run did not answer in time: the decision is in its history and is applied, or refused, when the run resumes (RunService.decide) */
  | { ok: true; applied: false; decisionId: string }
  | { ok: false; refusal: string; message: string };

export interface TaskKind {
  /** the tool server whose tools run as tasks (its path segment); absent for a kind whose servers are organizations' own (see servesTool) */
  readonly server?: string;
  /** for a kind without a fixed server: whether a tool of this (resolved) server runs as a task of the kind */
  servesTool?(server: ToolServer, toolName: string | undefined): boolean;
  /** the Temporal workflow type of the kind's tasks (tasks/list reads visibility by it) */
  readonly workflowType: string;
  /** the task's statusMessage once tasks/cancel asked its workflow to cancel */
  readonly cancelledMessage: string;
  /** whether a `tools/call` of this tool may be task-augmented */
  runsAsTask(toolName: string): boolean;
  /** whether a workflow of `workflowType` with this memo is a task of the kind for `orgId` (another organization's is not) */
  owns(memo: unknown, orgId: string): boolean;
  /** the ttl (ms) the task was given, from its memo; null for tasks made before ttl was kept */
  ttlOf(memo: unknown): number | null;
  /** starts the task's workflow and answers the task id (its workflow id); arguments it refuses are thrown as ToolCallError */
  start(orgId: string, toolName: string, args: Record<string, unknown>, call: TaskStart): Promise<string>;
  /** the task's state, given its workflow and, once the workflow closed, the status that closing means */
  state(orgId: string, taskId: string, workflow: WorkflowExecutionDescription, closed: TaskStatus | undefined): Promise<TaskState>;
  /**
   * The task's `tools/call` result: a closed workflow's, or an open one's once it closes within
   * `waitMs`; undefined when it is still open then (or `signal` aborted the wait).
   */
  result(orgId: string, taskId: string, workflow: WorkflowExecutionDescription, waitMs: number, signal?: AbortSignal): Promise<ToolResult | undefined>;
  /** the approval the open task waits on, for kinds whose workflows wait on approvals */
  pendingApproval?(taskId: string): Promise<PendingApproval | undefined>;
  /** an approval decision by `decider` (the caller's API key or grant, and member) on the task's step `stepIndex` */
  decide?(decider: TaskDecider, taskId: string, stepIndex: number, answer: TaskApprovalAnswer): Promise<TaskDecideOutcome>;
}
