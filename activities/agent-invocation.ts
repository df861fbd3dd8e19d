/**
 * Activities of the invokeAgent workflow, one per thing that touches the world: prepare (read the
 * agent, open the chat, list its tools, write the first prompt), one model call, and finish
 * (append the exchange to the chat's history). The conversation lives in the blob store under the
 * invocation (`conv-<turn>.json`, `reply-<turn>.json`), so workflow history carries references and
 * short replies only, and each activity rewrites only its own keys: a retry is the same call.
 */
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { AgentRecord } from '../src/registry/agent-records';
import {
  chatHistoryKey, invocationKey, type AgentInvocationInput, type FinishRequest, type ModelTurnRequest, type ModelTurnResult, type PrepareResult,
  type ToolBinding,
} from '../src/common/agent-invocation';
import { readChatHistory } from '../src/agents/chat-history';
import { checkOutput } from '../src/agents/output-schema';
import type { BlobStore } from '../src/blobs/blob-store';
import type { Config } from '../src/config/config';
import { modelFor } from '../src/llm/model-config';
import type { ModelError} from '../src/llm/chat-model';
import { completeChat, modelToolName, toModelError, type ChatMessage, type ModelTool, type ToolCall } from '../src/llm/chat-model';
import type { Registry, UsageCall } from '../src/registry';
import { monthlyBudgetReached, monthOf, usdToNano, type CallUsage, type MonthTotals, type UsageBudget } from '../src/common/agent-usage';
import { ownJson } from '../src/common/narrow';
import { costOf, type PriceTable } from '../src/llm/prices';
import type { ToolEntry, ToolServer } from '../src/tools/server';

export interface ToolCatalogView {
  servers(orgId: string): Promise<ToolServer[]>;
  listOf(server: ToolServer, orgId: string, signal?: AbortSignal): Promise<readonly ToolEntry[]>;
}

export interface AgentActivityDeps {
  registry: Registry;
  blobs: BlobStore;
  llm: Readonly<Config['llm']>;
  catalog?: ToolCatalogView;
  /** FLOWGATE_MODEL_PRICES */
  prices?: PriceTable;
  /** told of every model call's usage and the organization's month totals after it (the worker's metrics, budget alerts) */
  meter?: (call: UsageCall, month: MonthTotals) => void;
}

/** What prepare freezes for the model calls of one invocation: its tools and model settings. */
interface InvocationSetup {
  agentId: string;
  agentVersion: string;
  tools: ModelTool[];
  outputSchema: Record<string, unknown> | null;
  model: AgentRecord['model'];
}

// Blobs under the invocation are written only by these activities.
async function readJson<T>(blobs: BlobStore, key: string): Promise<T | undefined> {
  const data = await blobs.read(key);
  return data === undefined ? undefined : ownJson<T>(data.toString('utf8'));
}

function systemPrompt(agent: AgentRecord): string {
  if (!agent.outputSchema) return agent.instructions;
  return `${agent.instructions}\n\nGive your final answer as one JSON value, without any other text, that validates against this JSON Schema:\n${JSON.stringify(agent.outputSchema)}`;
}

/** Heartbeats while a long call runs, so a dead worker is noticed in seconds, not at the call's time limit. */
async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => Context.current().heartbeat(), 2000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

export function createAgentInvocationActivities(deps: AgentActivityDeps) {
  const { blobs, registry } = deps;

  async function bindTools(agent: AgentRecord, signal: AbortSignal): Promise<{ bindings: ToolBinding[]; tools: ModelTool[] } | string> {
    const bindings: ToolBinding[] = [];
    const tools: ModelTool[] = [];
    const taken = new Set<string>();
    if (agent.servers.length > 0) {
      if (!deps.catalog) return 'this worker has no tool catalog';
      const servers = await deps.catalog.servers(agent.orgId);
      for (const attached of agent.servers) {
        const name = attached.name.replace(/^\/+/, '');
        const server = servers.find((s) => s.name === name);
        if (!server) return `the agent's server ${name} is no longer in this organization's catalog`;
        const entries = await deps.catalog.listOf(server, agent.orgId, signal);
        const wanted = 'tools' in attached ? new Set(Object.keys(attached.tools)) : undefined;
        for (const entry of entries) {
          if (wanted && !wanted.has(entry.name)) continue;
          const modelName = modelToolName(`${name}_${entry.name}`, taken);
          taken.add(modelName);
          bindings.push({ modelName, kind: 'tool', server: name, tool: entry.name });
          tools.push({ name: modelName, description: entry.description.slice(0, 1000), parameters: entry.inputSchema });
        }
      }
    }
    for (const workflow of agent.workflows) {
      const trigger = await registry.triggers.get(workflow.triggerId);
      if (!trigger || trigger.orgId !== agent.orgId) return `the agent's workflow trigger ${workflow.triggerId} is no longer in this organization`;
      const version = await registry.workflows.getLatestVersion(trigger.workflowId);
      const modelName = modelToolName(workflow.toolName ?? `workflow_${workflow.triggerId}`, taken);
      taken.add(modelName);
      bindings.push({ modelName, kind: 'workflow', triggerId: workflow.triggerId });
      tools.push({
        name: modelName,
        description: (workflow.description ?? `Runs the workflow ${version?.name ?? trigger.workflowId} and answers its result.`).slice(0, 1000),
        parameters: { type: 'object', properties: { inputs: version?.definition.inputSchema ?? { type: 'object' } }, required: ['inputs'] },
      });
    }
    return { bindings, tools };
  }

  return {
    async prepareAgentInvocation(input: AgentInvocationInput): Promise<PrepareResult> {
      const agent = await registry.agents.get(input.orgId, input.agentId);
      // Another organization's agent is reported exactly like a missing one.
      if (!agent) return { ok: false, error: `no agent ${input.agentId} in this organization` };
      const model = modelFor(deps.llm, agent);
      if (typeof model === 'string') return { ok: false, error: model };
      const chat = await registry.agents.getChat(input.orgId, input.chatId)
        ?? await registry.agents.createChat(input.orgId, agent.id, null, input.chatId);
      if (chat.agentId !== agent.id) return { ok: false, error: `chat ${input.chatId} belongs to another agent` };

      const budget: UsageBudget = {
        ...(agent.limits.maxTokens == null ? {} : { maxTokens: agent.limits.maxTokens }),
        ...(agent.limits.maxCostUsd == null ? {} : { maxCostNanoUsd: usdToNano(agent.limits.maxCostUsd) }),
      };
      if (budget.maxCostNanoUsd !== undefined && !deps.prices?.has(model.model)) {
        return { ok: false, error: `the agent has a cost budget (limits.maxCostUsd) but model ${model.model} has no price in FLOWGATE_MODEL_PRICES` };
      }
      const orgBudget = await registry.agentUsage.budget(input.orgId);
      if (orgBudget.monthlyMaxTokens !== null) budget.monthlyMaxTokens = orgBudget.monthlyMaxTokens;
      if (orgBudget.monthlyMaxCostNanoUsd !== null) budget.monthlyMaxCostNanoUsd = orgBudget.monthlyMaxCostNanoUsd;
      if (orgBudget.monthlyMaxTokens !== null || orgBudget.monthlyMaxCostNanoUsd !== null) {
        const reached = monthlyBudgetReached(budget, await registry.agentUsage.month(input.orgId, monthOf(new Date())));
        if (reached) return { ok: false, error: `refused: ${reached}`, budget: true };
      }

      const bound = await bindTools(agent, Context.current().cancellationSignal);
      if (typeof bound === 'string') return { ok: false, error: bound };
      const history = await readChatHistory(blobs, input.orgId, input.chatId);
      const messages: ChatMessage[] = [
        { role: 'system', content: systemPrompt(agent) },
        ...history.flatMap((h): ChatMessage[] => [{ role: 'user', content: h.user }, { role: 'assistant', content: h.assistant }]),
        { role: 'user', content: input.message },
      ];
      const setup: InvocationSetup = { agentId: agent.id, agentVersion: agent.updatedAt, tools: bound.tools, outputSchema: agent.outputSchema, model: agent.model };
      await blobs.put(invocationKey(input.orgId, input.invocationId, 'setup.json'), JSON.stringify(setup));
      await blobs.put(invocationKey(input.orgId, input.invocationId, 'conv-0.json'), JSON.stringify(messages));
      return {
        ok: true,
        plan: {
          agentName: agent.name, maxTurns: agent.limits.maxTurns, maxToolCalls: agent.limits.maxToolCalls,
          toolResultChars: agent.limits.toolResultChars, tools: bound.bindings, ...(Object.keys(budget).length ? { budget } : {}),
        },
      };
    },

    async callAgentModel(request: ModelTurnRequest): Promise<ModelTurnResult> {
      const key = (file: string): string => invocationKey(request.orgId, request.invocationId, file);
      const setup = await readJson<InvocationSetup>(blobs, key('setup.json'));
      if (!setup) throw ApplicationFailure.nonRetryable(`invocation ${request.invocationId} was not prepared`, 'AGENT_UNAVAILABLE');
      let messages: ChatMessage[];
      if (request.turn === 0) {
        messages = (await readJson<ChatMessage[]>(blobs, key('conv-0.json'))) ?? [];
      } else {
        const before = await readJson<ChatMessage[]>(blobs, key(`conv-${request.turn - 1}.json`));
        const reply = await readJson<ChatMessage>(blobs, key(`reply-${request.turn - 1}.json`));
        if (!before || !reply) throw ApplicationFailure.nonRetryable(`turn ${request.turn - 1} of invocation ${request.invocationId} is missing`, 'AGENT_UNAVAILABLE');
        const results = await Promise.all(request.toolResults.map(async (r): Promise<ChatMessage> => ({
          role: 'tool', tool_call_id: r.toolCallId, content: r.text ?? (r.key ? (await blobs.read(r.key))?.toString('utf8') ?? '' : ''),
        })));
        messages = [...before, reply, ...results, ...(request.note ? [{ role: 'user' as const, content: request.note }] : [])];
        await blobs.put(key(`conv-${request.turn}.json`), JSON.stringify(messages));
      }
      const model = modelFor(deps.llm, setup);
      if (typeof model === 'string') throw ApplicationFailure.nonRetryable(model, 'AGENT_UNAVAILABLE');
      let reply;
      try {
        reply = await withHeartbeat(() => completeChat({
          ...model, apiKey: deps.llm.apiKey, timeoutMs: deps.llm.timeoutMs, temperature: setup.model.temperature, maxTokens: setup.model.maxTokens,
        }, { messages, tools: setup.tools, outputSchema: setup.outputSchema ?? undefined }, Context.current().cancellationSignal));
      } catch (error) {
        const failure = toModelError(error);
        log.warn('model call failed', { invocationId: request.invocationId, turn: request.turn, kind: failure.kind, retryable: failure.retryable });
        throw modelFailure(failure);
      }
      // Recorded before anything else can fail: a retry calls the model again, and is counted again.
      let usage: CallUsage | undefined;
      let month;
      if (reply.usage) {
        usage = { model: model.model, ...reply.usage, costNanoUsd: costOf(deps.prices, model.model, reply.usage) };
        const call: UsageCall = {
          ...usage, orgId: request.orgId, agentId: setup.agentId, invocationId: request.invocationId, turn: request.turn,
          attempt: Context.current().info.attempt, month: monthOf(new Date()),
        };
        month = await registry.agentUsage.record(call);
        deps.meter?.(call, month);
      }
      const assistant: ChatMessage = { role: 'assistant', content: reply.content, ...(reply.toolCalls.length ? { tool_calls: reply.toolCalls } : {}) };
      await blobs.put(key(`reply-${request.turn}.json`), JSON.stringify(assistant));
      const result: ModelTurnResult = {
        content: reply.content, toolCalls: reply.toolCalls.map((c: ToolCall) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
        ...(usage ? { usage } : {}), ...(month ? { month } : {}),
      };
      if (result.toolCalls.length === 0 && setup.outputSchema) {
        const check = checkOutput(`${setup.agentId}@${setup.agentVersion}`, setup.outputSchema, reply.content ?? '');
        if (check.ok) result.output = check.value;
        else result.invalidOutput = check.problem;
      }
      return result;
    },

    async finishAgentInvocation(request: FinishRequest): Promise<void> {
      const history = await readChatHistory(blobs, request.orgId, request.chatId);
      // a retried finish finds its own exchange already there
      if (!history.some((h) => h.invocationId === request.invocationId)) {
        history.push({ invocationId: request.invocationId, user: request.message, assistant: request.response, at: new Date().toISOString() });
        await blobs.put(chatHistoryKey(request.orgId, request.chatId), JSON.stringify(history));
      }
      await registry.agents.touchChat(request.orgId, request.chatId);
    },
  };
}

/** 429 waits as long as the endpoint asked; other transient trouble follows the retry policy; the rest fails the invocation. */
function modelFailure(error: ModelError): ApplicationFailure {
  return ApplicationFailure.create({
    type: `LLM_${error.kind}`,
    message: error.message,
    nonRetryable: !error.retryable,
    ...(error.retryAfterMs === undefined ? {} : { nextRetryDelay: error.retryAfterMs }),
  });
}
