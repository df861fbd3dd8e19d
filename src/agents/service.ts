/**
 * The agent operations behind both doors, the agent-management tools and /api/v1/agents: records
 * (with `servers` checked against the organization's catalog), chats, and invocations started as
 * invokeAgent workflows and waited for within a window, like the triggers' synchronous wait.
 */
import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import { z } from 'zod';
import type { BlobStore } from '../blobs/blob-store';
import { startPriority } from '../common/priority';
import { ENGINE_LEVEL } from '../common/run-types';
import { nameAttribute, SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { WORKFLOW_TYPES, type InvokeAgentWorkflow } from '../common/workflow-contracts';
import type { Config } from '../config/config';
import { modelFor } from '../llm/model-config';
import type { Registry } from '../registry';
import { agentFields, newChatId } from '../registry/agents';
import { newId } from '../crypto/secrets';
import type { SignedUrlSigner } from '../crypto/signed-urls';
import { readChatHistory } from './chat-history';
import type { AgentInvocationInput } from '../common/agent-invocation';
import { chatHistoryKey } from '../common/agent-invocation';
import { AgentError } from './errors';
import { failureReason, invocationUsage, monthlyBudgetRefusal } from './budgets';
import { outputSchemaProblem } from './output-schema';
import type { InvocationView, InvokeRequest } from './invocations';
import { isNamed, type AgentRecord, type ChatRecord, type CreateAgentInput, type UpdateAgentInput } from '../registry/agent-records';

export { AgentError, type AgentErrorCode } from './errors';
export { agentView } from '../registry/agent-records';

/** Servers an agent may not attach: its own management server (an agent invoking agents from inside an activity). */
const NOT_ATTACHABLE = new Set(['agent-management']);
const LINK_TTL_SECONDS = 3600;

/**
 * What the agent service reads of the tool catalog: a server's name and kind, and its tools' names.
 * The dispatcher (src/tools) answers it; agents import nothing of src/tools, which imports agents.
 */
export interface CatalogServer {
  readonly name: string;
  readonly description: string;
  /** built into flowgate (true) or a custom server of one organization (false) */
  readonly embedded: boolean;
}

export interface CatalogTool {
  readonly name: string;
}

export interface AgentServiceDeps<S extends CatalogServer = CatalogServer> {
  registry: Registry;
  blobs: BlobStore;
  temporal: Client;
  taskQueue: string;
  config: Pick<Readonly<Config>, 'llm' | 'agentWaitSeconds'>;
  /** the organization's catalog: built-ins and its own servers */
  servers(orgId: string): Promise<S[]>;
  tools(server: S, orgId: string, signal: AbortSignal): Promise<readonly CatalogTool[]>;
  signer?: Pick<SignedUrlSigner, 'sign'>;
}

export type { InvocationView, InvokeRequest } from './invocations';

// Memos are written by flowgate, but a workflow ID may name anything in the namespace.
const InvocationMemoSchema = z.object({
  agent: z.object({ orgId: z.string(), agentId: z.string(), chatId: z.string(), mcpTask: z.boolean().optional(), taskTtlMs: z.number().optional() }).loose(),
}).loose();
type InvocationMemo = z.infer<typeof InvocationMemoSchema>;

/** `S`: the catalog's own server type, handed back to its `tools` as it came from `servers`. */
export class AgentService<S extends CatalogServer = CatalogServer> {
  constructor(private readonly deps: AgentServiceDeps<S>) {}

  // --- records ---

  async create(orgId: string, input: CreateAgentInput): Promise<AgentRecord> {
    const fields = agentFields(input);
    await this.check(orgId, fields);
    return this.deps.registry.agents.create(orgId, fields);
  }

  list(orgId: string): Promise<AgentRecord[]> {
    return this.deps.registry.agents.list(orgId);
  }

  async read(orgId: string, agentId: string): Promise<AgentRecord> {
    const agent = await this.deps.registry.agents.get(orgId, agentId);
    if (!agent) throw new AgentError('NOT_FOUND', `no agent ${agentId} in this organization`);
    return agent;
  }

  /**
   * Only the fields given change; `servers` and `workflows` replace the lists, `model` replaces the
   * model settings, and a partial `limits` merges into the stored limits (the bounds not given keep
   * their values; `null` clears maxTokens or maxCostUsd).
   */
  async update(orgId: string, agentId: string, patch: UpdateAgentInput): Promise<AgentRecord> {
    const current = await this.read(orgId, agentId);
    const { id: _id, orgId: _org, createdAt: _c, updatedAt: _u, ...fields } = current;
    const next = {
      ...fields,
      ...(patch.name === undefined ? {} : { name: patch.name }),
      ...(patch.description === undefined ? {} : { description: patch.description }),
      ...(patch.instructions === undefined ? {} : { instructions: patch.instructions }),
      ...(patch.outputSchema === undefined ? {} : { outputSchema: patch.outputSchema }),
      ...(patch.servers === undefined ? {} : { servers: patch.servers }),
      ...(patch.workflows === undefined ? {} : { workflows: patch.workflows }),
      ...(patch.model === undefined ? {} : { model: patch.model }),
      limits: { ...fields.limits, ...patch.limits },
      ...(patch.priority === undefined ? {} : { priority: patch.priority }),
    };
    await this.check(orgId, next);
    const updated = await this.deps.registry.agents.update(orgId, agentId, next);
    if (!updated) throw new AgentError('NOT_FOUND', `no agent ${agentId} in this organization`);
    return updated;
  }

  async remove(orgId: string, agentId: string): Promise<void> {
    if (!(await this.deps.registry.agents.remove(orgId, agentId))) throw new AgentError('NOT_FOUND', `no agent ${agentId} in this organization`);
  }

  /**
   * `servers[].name` must be a server of the organization's catalog, by its path or id (never a
   * display name), with at least one tool; named tools must exist there. The refusal lists the
   * valid names so the caller can correct it.
   */
  private async check(orgId: string, fields: Pick<AgentRecord, 'servers' | 'workflows' | 'outputSchema'>): Promise<void> {
    if (fields.outputSchema) {
      const problem = outputSchemaProblem(fields.outputSchema);
      if (problem) throw new AgentError('INVALID', `outputSchema is not a usable JSON Schema: ${problem}`);
    }
    if (fields.servers.length > 0) {
      const catalog = (await this.deps.servers(orgId)).filter((s) => !NOT_ATTACHABLE.has(s.name));
      const usable = new Map<string, { server: S; tools: readonly CatalogTool[] }>();
      await Promise.all(catalog.map(async (server) => {
        const tools = await this.deps.tools(server, orgId, AbortSignal.timeout(15_000)).catch(() => []);
        if (tools.length > 0) usable.set(server.name, { server, tools });
      }));
      const valid = [...usable.values()].map(({ server }) => (server.embedded ? server.name : `${server.name} (custom: ${server.description})`)).sort();
      const seen = new Set<string>();
      for (const [i, attached] of fields.servers.entries()) {
        const name = attached.name.replace(/^\/+/, '');
        if (seen.has(name)) throw new AgentError('INVALID', `servers[${i}].name: ${name} is attached twice`);
        seen.add(name);
        const found = usable.get(name);
        if (!found) throw new AgentError('INVALID', `servers[${i}].name: no server ${JSON.stringify(attached.name)} in this organization's catalog; valid names and ids: ${valid.join(', ') || '(none)'}`);
        if (isNamed(attached)) {
          const known = found.tools.map((t) => t.name);
          const unknown = Object.keys(attached.tools).filter((t) => !known.includes(t));
          if (unknown.length) throw new AgentError('INVALID', `servers[${i}].tools: ${name} has no tool ${unknown.join(', ')}; its tools: ${known.join(', ')}`);
        }
      }
    }
    for (const [i, workflow] of fields.workflows.entries()) {
      const trigger = await this.deps.registry.triggers.get(workflow.triggerId);
      if (!trigger || trigger.orgId !== orgId) throw new AgentError('INVALID', `workflows[${i}].triggerId: no trigger ${workflow.triggerId} in this organization`);
    }
  }

  // --- chats ---

  async createChat(orgId: string, agentId: string, title: string | null): Promise<ChatRecord> {
    await this.read(orgId, agentId);
    return this.deps.registry.agents.createChat(orgId, agentId, title);
  }

  async listChats(orgId: string, agentId?: string): Promise<ChatRecord[]> {
    if (agentId !== undefined) await this.read(orgId, agentId);
    return this.deps.registry.agents.listChats(orgId, agentId);
  }

  async chat(orgId: string, chatId: string): Promise<ChatRecord & { messages: { role: 'user' | 'assistant'; content: string; at: string }[] }> {
    const chat = await this.deps.registry.agents.getChat(orgId, chatId);
    if (!chat) throw new AgentError('NOT_FOUND', `no chat ${chatId} in this organization`);
    const history = await readChatHistory(this.deps.blobs, orgId, chatId);
    return { ...chat, messages: history.flatMap((h) => [{ role: 'user' as const, content: h.user, at: h.at }, { role: 'assistant' as const, content: h.assistant, at: h.at }]) };
  }

  /** Forgets the conversation; the chat (and its artifacts) stay. */
  async resetChat(orgId: string, chatId: string): Promise<ChatRecord> {
    const chat = await this.deps.registry.agents.getChat(orgId, chatId);
    if (!chat) throw new AgentError('NOT_FOUND', `no chat ${chatId} in this organization`);
    await this.deps.blobs.remove(chatHistoryKey(orgId, chatId));
    await this.deps.registry.agents.touchChat(orgId, chatId);
    return chat;
  }

  async artifacts(orgId: string, chatId: string): Promise<{ name: string; mimeType: string; size: number; createdAt: string; url?: string }[]> {
    const chat = await this.deps.registry.agents.getChat(orgId, chatId);
    if (!chat) throw new AgentError('NOT_FOUND', `no chat ${chatId} in this organization`);
    return (await this.deps.registry.agents.listArtifacts(chatId)).map((a) => ({
      name: a.name, mimeType: a.mimeType, size: a.size, createdAt: a.createdAt,
      ...(this.deps.signer ? { url: this.deps.signer.sign(a.key, LINK_TTL_SECONDS, { name: a.name, type: a.mimeType }) } : {}),
    }));
  }

  // --- invocations ---

  /** Starts an invocation and waits for it within the window; past it, answers a RUNNING handle. */
  async invoke(orgId: string, request: InvokeRequest): Promise<InvocationView> {
    const agent = await this.read(orgId, request.agentId);
    const model = modelFor(this.deps.config.llm, agent);
    if (typeof model === 'string') throw new AgentError('NOT_CONFIGURED', model);
    const refusal = await monthlyBudgetRefusal(this.deps.registry, orgId);
    if (refusal) throw new AgentError('BUDGET_EXHAUSTED', refusal);
    let chatId = request.chatId;
    if (chatId === undefined) {
      chatId = (await this.deps.registry.agents.createChat(orgId, agent.id, null, newChatId())).id;
    } else {
      const chat = await this.deps.registry.agents.getChat(orgId, chatId);
      if (!chat) throw new AgentError('NOT_FOUND', `no chat ${chatId} in this organization`);
      if (chat.agentId !== agent.id) throw new AgentError('INVALID', `chat ${chatId} belongs to agent ${chat.agentId}, not ${agent.id}`);
    }
    const invocationId = newId('inv');
    const input: AgentInvocationInput = {
      invocationId, orgId, agentId: agent.id, chatId, message: request.message, forwardHeaders: request.forwardHeaders ?? {}, startedBy: request.startedBy,
      engine: ENGINE_LEVEL,
    };
    await this.deps.temporal.workflow.start<InvokeAgentWorkflow>(WORKFLOW_TYPES.invokeAgent, {
      workflowId: invocationId,
      taskQueue: this.deps.taskQueue,
      args: [input],
      workflowExecutionTimeout: agent.limits.timeoutSeconds * 1000,
      memo: { agent: { orgId, agentId: agent.id, chatId, ...(request.asTask ? { mcpTask: true, ...(request.taskTtlMs === undefined ? {} : { taskTtlMs: request.taskTtlMs }) } : {}) } } satisfies InvocationMemo,
      typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.orgId, value: orgId }, { key: SEARCH_ATTRIBUTES.agentId, value: agent.id }, { key: SEARCH_ATTRIBUTES.workflowName, value: nameAttribute(`agent ${agent.name}`) }],
      staticSummary: `agent ${agent.name} (${agent.id}) · ${request.asTask ? 'MCP task' : 'invocation'} by ${request.startedBy}`.slice(0, 400),
      staticDetails: `Agent **${agent.name}** (${agent.id}) in chat ${chatId}, started by ${request.startedBy}${request.asTask ? ' as an MCP task' : ''}.`,
      priority: startPriority(orgId, agent.priority), // inherited by its model and tool calls
    });
    const waitMs = (request.waitSeconds ?? this.deps.config.agentWaitSeconds) * 1000;
    return this.await(orgId, invocationId, waitMs);
  }

  /** The invocation as it stands now; NOT_FOUND for another organization's. */
  status(orgId: string, invocationId: string): Promise<InvocationView> {
    return this.await(orgId, invocationId, 0);
  }

  /** The invocation once it closed, or RUNNING after `waitMs` (or when `signal` aborts). */
  wait(orgId: string, invocationId: string, waitMs: number, signal?: AbortSignal): Promise<InvocationView> {
    return this.await(orgId, invocationId, waitMs, signal);
  }

  /** The view with the invocation's usage as the registry holds it (every call, in every state). */
  private async await(orgId: string, invocationId: string, waitMs: number, signal?: AbortSignal): Promise<InvocationView> {
    const view = await this.view(orgId, invocationId, waitMs, signal);
    return { ...view, usage: await invocationUsage(this.deps.registry, orgId, invocationId) };
  }

  private async view(orgId: string, invocationId: string, waitMs: number, signal?: AbortSignal): Promise<InvocationView> {
    const handle = this.deps.temporal.workflow.getHandle<InvokeAgentWorkflow>(invocationId);
    let description;
    try {
      description = await handle.describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new AgentError('NOT_FOUND', `no invocation ${invocationId} in this organization`);
      throw err;
    }
    const memo = InvocationMemoSchema.safeParse(description.memo);
    if (description.type !== WORKFLOW_TYPES.invokeAgent || !memo.success || memo.data.agent.orgId !== orgId) {
      throw new AgentError('NOT_FOUND', `no invocation ${invocationId} in this organization`);
    }
    const base = { invocationId, agentId: memo.data.agent.agentId, chatId: memo.data.agent.chatId };
    const running = description.status.name === 'RUNNING';
    if (running && waitMs <= 0) return { ...base, status: 'RUNNING' };
    // A closed invocation's result is read in full; only an open one's wait is bounded.
    const abort = new AbortController();
    const timer = running ? setTimeout(() => abort.abort(), waitMs) : undefined;
    const stop = (): void => abort.abort();
    if (running) signal?.addEventListener('abort', stop, { once: true });
    try {
      const { usage: _usage, ...result } = await this.deps.temporal.connection.withAbortSignal(abort.signal, () => handle.result());
      return { ...result, status: 'COMPLETE' };
    } catch (err) {
      if (abort.signal.aborted) return { ...base, status: 'RUNNING' };
      if (!(err instanceof WorkflowFailedError)) throw err;
      const cause = err.cause;
      if (cause instanceof TimeoutFailure) return { ...base, status: 'TIMEOUT', error: 'the invocation exceeded its time limit (limits.timeoutSeconds)' };
      const error = cause instanceof CancelledFailure ? 'the invocation was cancelled'
        : cause instanceof TerminatedFailure ? 'the invocation was terminated'
          : cause instanceof ApplicationFailure ? cause.message : cause?.message ?? err.message;
      const reason = failureReason(cause);
      return { ...base, status: 'FAILED', error, ...(reason ? { reason } : {}) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    }
  }
}
