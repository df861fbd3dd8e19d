/**
 * The built-in `agent-management` server (contract 4.6; embedded, no PCID): agents of the
 * caller's organization, their chats, and agent_invoke, which runs the agent as a durable
 * invokeAgent workflow and answers within the wait window, else a handle that
 * agent_invocation_status reads later. Tool names are accepted with and without the
 * `agent-management_` prefix, as the contract shows both; tools/list names them without.
 */
import { z } from 'zod';
import { AgentError, agentView } from '../../../agents/service';
import { CreateAgentSchema, UpdateAgentSchema } from '../../../registry/agent-records';
import { defineTool, toolServer } from '../../define-tool';
import { ToolCallError, ToolFailure } from '../../errors';
import type { ToolServer } from '../../server';
import type { ServerKindDeps } from '../kind';

export const AGENT_MANAGEMENT_SERVER_NAME = 'agent-management';
const PREFIX = `${AGENT_MANAGEMENT_SERVER_NAME}_`;

const AgentIdSchema = z.string().min(1).max(100).describe('the agent id (agt_…)');
const ChatIdSchema = z.string().min(1).max(200).describe('the chat id (chat_…)');
/** The tool that may run as an MCP task (src/tools/mcp/tasks.ts starts it with asTask). */
export const AGENT_INVOKE_TOOL = 'agent_invoke';

/** agent_invoke's arguments; `waitSeconds` is capped by FLOWGATE_AGENT_WAIT_SECONDS (and ignored by a task). */
export function agentInvokeInput(waitSeconds: number) {
  return z.object({
    agentId: AgentIdSchema,
    message: z.string().min(1).max(100_000).describe('the user message'),
    chatId: ChatIdSchema.optional().describe('continue this chat; omit to start a new one'),
    waitSeconds: z.number().int().min(0).max(waitSeconds).optional().describe(`how long to wait for the answer (default and at most ${waitSeconds})`),
  }).strict();
}

/** A tool name with or without the contract's `agent-management_` prefix, without it. */
export function unprefixedAgentTool(name: string): string {
  return name.startsWith(PREFIX) ? name.slice(PREFIX.length) : name;
}

export function agentManagementServer(deps: ServerKindDeps): ToolServer | undefined {
  const { agents } = deps;
  if (!agents) return undefined;
  const waitSeconds = deps.config.agentWaitSeconds;

  /** AgentError → the gateway's families: bad input is a call that could not be made, the rest a tool that failed. */
  async function run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AgentError) {
        if (error.code === 'INVALID') throw new ToolCallError('INVALID_ARGUMENTS', error.message);
        throw new ToolFailure(error.message, { code: error.code });
      }
      throw error;
    }
  }

  const tools = [
    defineTool({
      name: 'agent_create',
      description: 'Create an agent: instructions, optional output JSON Schema, the tool servers it may use ([{name, allTools: true}] or [{name, tools: {<tool>: {}}}], by server path or custom server id) and the workflows (triggers) it may run.',
      input: CreateAgentSchema,
      handler: (args, context) => run(async () => agentView(await agents.create(context.orgId, args))),
    }),
    defineTool({
      name: 'agent_list',
      description: 'List the agents of this organization.',
      input: z.object({}).strict(),
      handler: (_args, context) => run(async () => ({ agents: (await agents.list(context.orgId)).map(agentView) })),
    }),
    defineTool({
      name: 'agent_read',
      description: 'Read one agent.',
      input: z.object({ agentId: AgentIdSchema }).strict(),
      handler: ({ agentId }, context) => run(async () => agentView(await agents.read(context.orgId, agentId))),
    }),
    defineTool({
      name: 'agent_update',
      description: 'Change an agent: only the fields given change; servers and workflows replace the lists.',
      input: UpdateAgentSchema.extend({ agentId: AgentIdSchema }),
      handler: ({ agentId, ...patch }, context) => run(async () => agentView(await agents.update(context.orgId, agentId, patch))),
    }),
    defineTool({
      name: 'agent_delete',
      description: 'Delete an agent and its chats.',
      input: z.object({ agentId: AgentIdSchema }).strict(),
      handler: ({ agentId }, context) => run(async () => {
        await agents.remove(context.orgId, agentId);
        return { deleted: true, agentId };
      }),
    }),
    defineTool({
      name: AGENT_INVOKE_TOOL,
      description: 'Send a message to an agent and get its answer ({response, chatId, agentId, invocationId, status}). Pass the chatId of an earlier answer to continue that conversation. When the agent needs longer than the wait, the answer is a handle with status RUNNING: read it later with agent_invocation_status. May run as an MCP task (the task id is the invocation id).',
      // the wait plus room for starting the workflow and reading its result
      timeoutMs: (waitSeconds + 30) * 1000,
      taskSupport: 'optional',
      input: agentInvokeInput(waitSeconds),
      handler: (args, context) => run(async () => ({
        ...(await agents.invoke(context.orgId, { ...args, forwardHeaders: { ...context.forwardHeaders }, startedBy: 'agent-management' })),
      })),
    }),
    defineTool({
      name: 'agent_invocation_status',
      description: 'Read an invocation started by agent_invoke: RUNNING, or its answer (COMPLETE), or why it ended (FAILED with error and reason, e.g. BUDGET_EXHAUSTED; TIMEOUT), with its token usage and cost so far.',
      input: z.object({ invocationId: z.string().min(1).max(200) }).strict(),
      handler: ({ invocationId }, context) => run(async () => ({ ...(await agents.status(context.orgId, invocationId)) })),
    }),
    defineTool({
      name: 'chat_create',
      description: 'Start a new chat with an agent; pass its chatId to agent_invoke.',
      input: z.object({ agentId: AgentIdSchema, title: z.string().min(1).max(200).optional() }).strict(),
      handler: ({ agentId, title }, context) => run(async () => ({ ...(await agents.createChat(context.orgId, agentId, title ?? null)) })),
    }),
    defineTool({
      name: 'chat_list',
      description: 'List the chats of this organization, or of one agent.',
      input: z.object({ agentId: AgentIdSchema.optional() }).strict(),
      handler: ({ agentId }, context) => run(async () => ({ chats: await agents.listChats(context.orgId, agentId) })),
    }),
    defineTool({
      name: 'chat_reset_conversation',
      description: 'Forget the conversation of a chat; the next agent_invoke with it starts afresh.',
      input: z.object({ chatId: ChatIdSchema }).strict(),
      handler: ({ chatId }, context) => run(async () => ({ reset: true, ...(await agents.resetChat(context.orgId, chatId)) })),
    }),
    defineTool({
      name: 'chat_list_artifacts',
      description: 'List the files the agent\'s tools produced in a chat, each with a download link.',
      input: z.object({ chatId: ChatIdSchema }).strict(),
      handler: ({ chatId }, context) => run(async () => ({ chatId, artifacts: await agents.artifacts(context.orgId, chatId) })),
    }),
  ];

  const inner = toolServer({
    name: AGENT_MANAGEMENT_SERVER_NAME,
    description: 'Create, list, update, delete and invoke agents, and manage their chats.',
    tools,
  });
  const unprefixed = unprefixedAgentTool;
  return {
    ...inner,
    timeoutMs: (name) => inner.timeoutMs?.(unprefixed(name)),
    callTool: (name, args, context) => inner.callTool(unprefixed(name), args, context),
  };
}
