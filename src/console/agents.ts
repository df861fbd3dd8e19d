/**
 * What the console does with an organization's agents, through the agent service the API uses
 * (AgentService: records, chats, invocations): no rule is implemented twice. It adds one read of
 * its own, an invocation's trace: the model's tool calls and their results as the invocation's
 * activities write them to the blob store (`reply-<turn>.json`, `tool-<turn>-<index>.json`,
 * `conv-<turn>.json`), so the page shows each call while the invocation runs. Every call names the
 * session's organization; another organization's agent, chat or invocation is undefined, as a
 * missing one.
 */
import { AgentError, type AgentService, type InvocationView } from '../agents/service';
import type { AgentRecord, ChatRecord } from '../registry/agent-records';
import { readChatHistory } from '../agents/chat-history';
import { invocationUsage } from '../agents/budgets';
import type { BlobStore } from '../blobs/blob-store';
import type { Registry } from '../registry';
import { invocationKey } from '../common/agent-invocation';
import type { UsageView } from '../common/agent-usage';
import { ownJson } from '../common/narrow';

const ID = /^[A-Za-z0-9_.:-]{1,200}$/;
/** the most turns a trace reads (an agent's maxTurns is bounded well below) */
const MAX_TURNS = 100;
const PREVIEW_CHARS = 2000;
/** the exchanges of a chat shown with their tool calls (older ones: the messages only) */
const TRACED_EXCHANGES = 20;

/** One tool call the model asked for: its arguments, and its result once there is one. */
export interface ToolCallTrace {
  turn: number;
  name: string;
  arguments: string;
  /** the result as the model got it (cut to a preview); undefined while it runs */
  result?: string;
  /** false when the result is an error object */
  ok?: boolean;
}

export interface Exchange {
  invocationId: string;
  user: string;
  assistant: string;
  at: string;
  toolCalls: ToolCallTrace[];
  usage?: UsageView;
}

/** An invocation as the chat page shows it while it runs (or once it ended outside the history: failed, timed out). */
export interface LiveInvocation {
  view: InvocationView;
  /** the user's message, once the invocation has read it */
  message?: string;
  toolCalls: ToolCallTrace[];
}

interface StoredMessage {
  role: string;
  content?: string | null;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

function preview(text: string, limit = PREVIEW_CHARS): string {
  return text.length <= limit ? text : `${text.slice(0, limit)} […]`;
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function isError(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) && 'error' in value;
  } catch {
    return false;
  }
}

export class ConsoleAgents {
  constructor(private readonly deps: { agents: AgentService; blobs: BlobStore; registry: Registry }) {}

  list(orgId: string): Promise<AgentRecord[]> {
    return this.deps.agents.list(orgId);
  }

  /** Deletes the organization's agent (as DELETE /api/v1/agents/{id}); false when it has none with that ID. */
  async remove(orgId: string, agentId: string): Promise<boolean> {
    if (!ID.test(agentId)) return false;
    return this.deps.agents.remove(orgId, agentId).then(() => true, (err: unknown) => {
      if (err instanceof AgentError && err.code === 'NOT_FOUND') return false;
      throw err;
    });
  }

  /** The organization's agent, or undefined (missing, or another organization's). */
  async agent(orgId: string, agentId: string): Promise<AgentRecord | undefined> {
    if (!ID.test(agentId)) return undefined;
    return this.deps.agents.read(orgId, agentId).catch((err: unknown) => {
      if (err instanceof AgentError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    });
  }

  /** The agent's chats, most recently used first. */
  async chats(orgId: string, agentId: string): Promise<ChatRecord[]> {
    const chats = await this.deps.agents.listChats(orgId, agentId);
    return [...chats].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  }

  /** The agent's chat with its exchanges (the latest with their tool calls and usage), or undefined. */
  async conversation(orgId: string, agentId: string, chatId: string): Promise<{ chat: ChatRecord; exchanges: Exchange[] } | undefined> {
    if (!ID.test(chatId)) return undefined;
    const chat = await this.deps.registry.agents.getChat(orgId, chatId);
    if (!chat || chat.agentId !== agentId) return undefined;
    const history = await readChatHistory(this.deps.blobs, orgId, chatId);
    const exchanges = await Promise.all(history.map(async (h, i): Promise<Exchange> => {
      const traced = i >= history.length - TRACED_EXCHANGES;
      return {
        invocationId: h.invocationId, user: h.user, assistant: h.assistant, at: h.at,
        toolCalls: traced ? await this.trace(orgId, h.invocationId, false) : [],
        ...(traced ? { usage: await invocationUsage(this.deps.registry, orgId, h.invocationId) } : {}),
      };
    }));
    return { chat, exchanges };
  }

  /** Starts an invocation as the API's invoke does, without waiting: the page follows it. */
  invoke(orgId: string, agentId: string, message: string, chatId?: string): Promise<InvocationView> {
    return this.deps.agents.invoke(orgId, { agentId, message, ...(chatId ? { chatId } : {}), startedBy: 'console', waitSeconds: 0 });
  }

  /** The agent's invocation as it stands, with its tool calls so far; undefined for another agent's or organization's. */
  async invocation(orgId: string, agentId: string, invocationId: string): Promise<LiveInvocation | undefined> {
    if (!ID.test(invocationId)) return undefined;
    let view: InvocationView;
    try {
      view = await this.deps.agents.status(orgId, invocationId);
    } catch (err) {
      if (err instanceof AgentError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    }
    if (view.agentId !== agentId) return undefined;
    const first = await this.json<StoredMessage[]>(orgId, invocationId, 'conv-0.json');
    const message = first?.filter((m) => m.role === 'user').pop()?.content ?? undefined;
    return { view, ...(message ? { message } : {}), toolCalls: await this.trace(orgId, invocationId, view.status === 'RUNNING') };
  }

  /** The tool calls of an invocation, turn by turn, from what its activities wrote; `running`: a call without a result is still under way. */
  private async trace(orgId: string, invocationId: string, running: boolean): Promise<ToolCallTrace[]> {
    const calls: ToolCallTrace[] = [];
    for (let turn = 0; turn < MAX_TURNS; turn++) {
      const reply = await this.json<StoredMessage>(orgId, invocationId, `reply-${turn}.json`);
      if (!reply?.tool_calls?.length) break;
      let next: StoredMessage[] | undefined | null = null; // read once, when a result is not in its own file
      for (const [index, call] of reply.tool_calls.entries()) {
        let result = (await this.deps.blobs.read(invocationKey(orgId, invocationId, `tool-${turn}-${index}.json`)))?.toString('utf8');
        if (result === undefined) {
          // a workflow tool's or a refused call's result is inline in the next turn's conversation
          if (next === null) next = await this.json<StoredMessage[]>(orgId, invocationId, `conv-${turn + 1}.json`);
          const content = next?.find((m) => m.role === 'tool' && m.tool_call_id === call.id)?.content;
          result = content ?? undefined;
        }
        calls.push({
          turn, name: call.function.name, arguments: preview(pretty(call.function.arguments || '{}')),
          ...(result === undefined ? (running ? {} : { result: '(no result recorded)', ok: false }) : { result: preview(pretty(result)), ok: !isError(result) }),
        });
      }
    }
    return calls;
  }

  private async json<T>(orgId: string, invocationId: string, file: string): Promise<T | undefined> {
    const data = await this.deps.blobs.read(invocationKey(orgId, invocationId, file));
    if (data === undefined) return undefined;
    try {
      return ownJson<T>(data.toString('utf8'));
    } catch {
      return undefined;
    }
  }
}
