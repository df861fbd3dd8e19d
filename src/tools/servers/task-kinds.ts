/**
 * The built-in task kinds: which servers run some of their tools as MCP tasks (src/tools/mcp/tasks.ts
 * is generic over them). Adding tasks to a server kind is a `tasks.ts` in its folder that builds its
 * TaskKind (src/tools/mcp/task-kind.ts) and one entry here; startFlowgate takes more (`taskKinds`).
 * Each kind's `create` gets the services built once at start.
 */
import type { Client } from '@temporalio/client';
import type { RunService } from '../../runs/run-service';
import type { ToolCaller } from '../dispatcher';
import type { TaskKind } from '../mcp/task-kind';
import type { ToolServices } from '../server';
import { agentTaskKind, type AgentInvocations } from './agent-management/tasks';
import { codeAgentTaskKind, type CodeAgentTasks } from './codeagent/tasks';
import type { WorkflowTools } from './workflows/index';
import { workflowTaskKind } from './workflows/tasks';
import { durableTaskKind, type DurableCalls } from '../custom/durable';

export interface TaskKindDeps {
  client: Client;
  taskQueue: string;
  runs: RunService;
  /** the tool dispatcher (a kind's task may start with a plain call of its tool) */
  tools: ToolCaller;
  services: Pick<ToolServices, 'blobs' | 'signer'>;
  workflowTools: WorkflowTools;
  agents: AgentInvocations;
  /** the code-agent waiters (built once at start, src/app/services.ts) */
  codeAgents: CodeAgentTasks;
  /** durable calls of custom servers (built once at start: the dispatcher runs plain calls of them too) */
  durable: DurableCalls;
}

export interface TaskKindRegistration {
  kind: string;
  create(deps: TaskKindDeps): TaskKind;
}

export const BUILT_IN_TASK_KINDS: readonly TaskKindRegistration[] = [
  { kind: 'workflows', create: (deps) => workflowTaskKind(deps) },
  { kind: 'agent-management', create: ({ agents }) => agentTaskKind(agents) },
  // the code-agent tools that wait: a waiter workflow per task polls the backend
  { kind: 'codeagent', create: ({ codeAgents }) => codeAgentTaskKind(codeAgents) },
  // every tool of a custom server marked durable: one durableToolCall workflow per call
  { kind: 'durable', create: ({ durable }) => durableTaskKind(durable) },
];

/** The task kinds of this process: the built-ins, then `extra` (startFlowgate's `taskKinds`). */
export function createTaskKinds(deps: TaskKindDeps, extra: readonly TaskKindRegistration[] = []): TaskKind[] {
  return [...BUILT_IN_TASK_KINDS, ...extra].map((registration) => registration.create(deps));
}
