/**
 * The console's agents page and an agent's chat page (docs/console.md "Agents"). Pure templates:
 * the routes gather the data (routes/console-agents.ts) and these render it. The invocation in
 * progress is one fragment (`liveInvocation`), rendered in the page and again by the poll that
 * agent-chat.js makes, so the page and its live updates show the same thing.
 */
import type { AgentRecord, ChatRecord } from '../../registry/agent-records';
import type { Exchange, LiveInvocation, ToolCallTrace } from '../../console/agents';
import type { UsageView } from '../../common/agent-usage';
import { html, type Html } from './html';
import { statusBadge } from './run-views';

export const MESSAGE_MAX_CHARS = 20_000;

function agentPath(agentId: string): string {
  return `/console/agents/${encodeURIComponent(agentId)}`;
}

function modelOf(agent: AgentRecord, defaultModel: string | undefined): Html {
  if (agent.model.model) return html`<code>${agent.model.model}</code>`;
  return defaultModel ? html`<code>${defaultModel}</code> <span class="meta">(the default)</span>` : html`<span class="meta">none configured</span>`;
}

function toolsOf(agent: AgentRecord): Html {
  const servers = agent.servers.map((s) => ('tools' in s && s.tools ? html`<code>${s.name}</code>: ${Object.keys(s.tools).join(', ')}` : html`<code>${s.name}</code> (all tools)`));
  const workflows = agent.workflows.map((w) => html`<code>${w.toolName ?? `workflow_${w.triggerId}`}</code> (workflow trigger <code>${w.triggerId}</code>)`);
  const all = [...servers, ...workflows];
  return all.length === 0 ? html`<span class="meta">no tools</span>` : html`<ul class="plain">${all.map((item) => html`<li>${item}</li>`)}</ul>`;
}

export function agentsBody(agents: AgentRecord[], defaultModel: string | undefined, notice?: string): Html {
  return html`<h1>Agents</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
<p class="actions"><a class="button" id="create-agent" data-needs="agents.write" href="/console/agents/new">Create an agent</a></p>
${agents.length === 0 ? html`<p class="notice">No agents yet (the API's <code>POST /api/v1/agents</code> and the <code>agent_create</code> tool make them too).</p>` : html`<table>
<caption class="visually-hidden">Agents</caption>
<thead><tr><th scope="col">Agent</th><th scope="col">Model</th><th scope="col">Tools and servers</th><th scope="col">Changed</th></tr></thead>
<tbody>${agents.map((a) => html`<tr><td><a href="${agentPath(a.id)}">${a.name}</a> <span class="meta"><code>${a.id}</code></span>${a.description ? html`<br><span class="meta">${a.description}</span>` : ''}</td>
<td>${modelOf(a, defaultModel)}</td><td>${toolsOf(a)}</td><td>${a.updatedAt}</td></tr>`)}</tbody></table>`}`;
}

function usageLine(usage: UsageView | undefined): Html {
  if (!usage || usage.totalTokens === 0) return html``;
  const cost = usage.costUsd === null ? '' : `, ${usage.costUsd} USD`;
  return html`<p class="meta usage">Used ${usage.totalTokens} tokens (${usage.promptTokens} prompt, ${usage.completionTokens} completion)${cost} in ${usage.byModel.reduce((n, m) => n + m.calls, 0)} model call(s).</p>`;
}

function toolCalls(calls: ToolCallTrace[]): Html {
  if (calls.length === 0) return html``;
  return html`<ol class="tool-calls" aria-label="Tool calls">${calls.map((c) => html`<li class="tool-call${c.result === undefined ? ' pending' : c.ok ? '' : ' failed'}">
<p><strong>Tool call</strong> <code class="tool-name">${c.name}</code> <span class="meta">turn ${c.turn + 1}${c.result === undefined ? ', running…' : c.ok ? '' : ', error'}</span></p>
<details open><summary>Arguments</summary><pre class="tool-args">${c.arguments}</pre></details>
${c.result === undefined ? '' : html`<details open><summary>Result</summary><pre class="tool-result">${c.result}</pre></details>`}</li>`)}</ol>`;
}

function exchangeBlock(e: Exchange): Html {
  return html`<li class="exchange" id="${e.invocationId}">
<div class="msg user"><p class="who">You <span class="meta">${e.at}</span></p><p class="text">${e.user}</p></div>
${toolCalls(e.toolCalls)}
<div class="msg assistant"><p class="who">Agent</p><p class="text answer">${e.assistant}</p>${usageLine(e.usage)}</div></li>`;
}

/** The invocation in progress (or ended outside the history): shown in the page and answered to the live poll. */
export function liveInvocation(live: LiveInvocation, refresh: string): Html {
  const { view } = live;
  return html`<div class="msg user"><p class="who">You</p><p class="text">${live.message ?? '…'}</p></div>
<p>Invocation <code>${view.invocationId}</code>: <span id="invocation-status">${statusBadge(view.status)}</span></p>
${toolCalls(live.toolCalls)}
${view.status === 'COMPLETE' ? html`<div class="msg assistant"><p class="who">Agent</p><p class="text answer">${view.response}</p></div>` : ''}
${view.status === 'FAILED' || view.status === 'TIMEOUT' ? html`<p class="error" role="alert">${view.error ?? view.status}${view.reason ? html` (<code>${view.reason}</code>)` : ''}</p>` : ''}
${usageLine(view.usage)}
${view.status === 'RUNNING' ? html`<p class="meta">The agent is working. This part follows it live; without script, <a href="${refresh}">reload the page</a>.</p>` : ''}`;
}

export interface AgentPageData {
  agent: AgentRecord;
  defaultModel: string | undefined;
  csrf: string;
  chats: ChatRecord[];
  chat?: ChatRecord;
  exchanges: Exchange[];
  live?: LiveInvocation;
  message?: string;
  error?: string;
  /** what the page says after a change (created, saved) */
  notice?: string;
}

export function agentBody(data: AgentPageData): Html {
  const { agent, chat, live } = data;
  const base = agentPath(agent.id);
  const refresh = live ? `${base}?chat=${encodeURIComponent(live.view.chatId)}&inv=${encodeURIComponent(live.view.invocationId)}` : base;
  const poll = live?.view.status === 'RUNNING' ? html` data-agent-poll="${base}/invocations/${encodeURIComponent(live.view.invocationId)}/live"` : '';
  return html`<p><a href="/console/agents">← Agents</a></p>
<h1>${agent.name}</h1>
${data.notice ? html`<p class="notice" role="status">${data.notice}</p>` : ''}
${agent.description ? html`<p>${agent.description}</p>` : ''}
<dl class="facts"><dt>ID</dt><dd><code>${agent.id}</code></dd><dt>Model</dt><dd>${modelOf(agent, data.defaultModel)}</dd>
<dt>Tools</dt><dd>${toolsOf(agent)}</dd>
<dt>Limits</dt><dd>${agent.limits.maxTurns} model calls, ${agent.limits.maxToolCalls} tool calls, ${agent.limits.timeoutSeconds} s</dd></dl>
<p class="actions"><a class="button secondary-link" id="edit-agent" data-needs="agents.write" href="${base}/edit">Edit the agent</a></p>
<form method="post" data-needs="agents.write" action="${base}/delete" data-confirm="Delete this agent? Its chats go with it; runs already started go on."><input type="hidden" name="csrf" value="${data.csrf}"><button type="submit" class="danger">Delete the agent</button></form>
<h2>Chats</h2>
<p><a href="${base}"${chat ? '' : html` aria-current="page"`}>New chat</a></p>
${data.chats.length === 0 ? html`<p class="meta">No chats yet.</p>` : html`<ul class="chats">${data.chats.slice(0, 50).map((c) => html`<li><a href="${base}?chat=${encodeURIComponent(c.id)}"${chat?.id === c.id ? html` aria-current="page"` : ''}>${c.title ?? c.id}</a> <span class="meta">${c.updatedAt}</span></li>`)}</ul>`}
<section aria-labelledby="conversation-title">
<h2 id="conversation-title">${chat ? html`Chat <code>${chat.id}</code>` : 'A new chat'}</h2>
${data.exchanges.length === 0 && !live ? html`<p class="meta">No messages yet. Each message starts an invocation of the agent; the next ones continue the same chat.</p>` : ''}
<ol class="conversation">${data.exchanges.map(exchangeBlock)}</ol>
${live ? html`<div class="exchange live" id="live-invocation" aria-live="polite"${poll}>${liveInvocation(live, refresh)}</div>` : ''}
</section>
${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
<form method="post" data-needs="runs.operate" action="${base}/chat" class="chat-form">
<input type="hidden" name="csrf" value="${data.csrf}">
${chat ? html`<input type="hidden" name="chatId" value="${chat.id}">` : ''}
<label for="message">${chat ? 'Your next message' : 'Your message'}</label>
<textarea id="message" name="message" required maxlength="${MESSAGE_MAX_CHARS}">${data.message ?? ''}</textarea>
<div class="actions"><button type="submit">Send</button></div></form>
<script src="/console/assets/agent-chat.js" defer></script>`;
}
