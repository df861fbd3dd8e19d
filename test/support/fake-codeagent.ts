/**
 * A fake Cursor Cloud Agents v1 backend on loopback, speaking the documented wire protocol: Basic
 * (or Bearer) auth with the key as username, the `{error: {code, message}}` envelope, agents and
 * runs in memory, cursors, one active run per agent (409 agent_busy), archive rules, and a run's
 * SSE stream with ids like `1713033006000-3`, a leading `status` event without an id re-sent on
 * every connection, `invalid_last_event_id` and 410 `stream_expired`.
 *
 * A run goes CREATING → RUNNING → FINISHED on a schedule (`runMs`, `eventCount`); tests steer it:
 * cut the next stream mid-event, expire a stream, answer the next requests with 429, or be slow.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { listenOnLoopback } from './loopback';

export interface FakeEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

export interface FakeRun {
  id: string;
  agentId: string;
  status: 'CREATING' | 'RUNNING' | 'FINISHED' | 'ERROR' | 'CANCELLED' | 'EXPIRED';
  prompt: { text: string };
  createdAt: string;
  updatedAt: string;
  result?: string;
  events: FakeEvent[];
  streamExpired: boolean;
  timers: NodeJS.Timeout[];
}

export interface FakeAgent {
  id: string;
  name: string;
  status: 'ACTIVE' | 'ARCHIVED';
  body: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  runs: FakeRun[];
  artifacts: { path: string; content: string; updatedAt: string }[];
}

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface FakeCodeAgent {
  url: string;
  apiKey: string;
  agents: Map<string, FakeAgent>;
  requests: FakeRequest[];
  /** a run's schedule: RUNNING after a tenth, FINISHED after runMs, eventCount events between */
  runMs: number;
  eventCount: number;
  /** `/v1/models` answers bare ids (mid-2026) or objects (later) */
  modelsAsObjects: boolean;
  /** leave nextCursor out on a last page instead of sending null */
  omitLastCursor: boolean;
  /** answer every API request after this many ms */
  delayMs: number;
  /** the next `count` API requests answer 429 with this Retry-After */
  rateLimit(count: number, retryAfterSeconds: number): void;
  /** the next stream connection sends `afterEvents` id'd events, half of one more, then drops the connection */
  cutNextStream(afterEvents: number): void;
  /** open stream connections (to check that readers let go) */
  openStreams(): number;
  run(agentId: string, runId: string): FakeRun | undefined;
  close(): Promise<void>;
}

const TERMINAL = new Set(['FINISHED', 'ERROR', 'CANCELLED', 'EXPIRED']);

export async function startFakeCodeAgent(options: { apiKey?: string; runMs?: number; eventCount?: number } = {}): Promise<FakeCodeAgent> {
  const apiKey = options.apiKey ?? `key_${randomUUID()}`;
  const agents = new Map<string, FakeAgent>();
  const requests: FakeRequest[] = [];
  const streams = new Set<http.ServerResponse>();
  const listeners = new Map<string, Set<(e: FakeEvent) => void>>();
  let limited = 0;
  let retryAfter = 0;
  let cutAfter: number | undefined;
  const blobs = new Map<string, string>();

  const now = (): string => new Date().toISOString();
  const fail = (res: http.ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify({ error: { code, message } }));
  };
  const send = (res: http.ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  };

  const emit = (run: FakeRun, event: string, data: Record<string, unknown>): void => {
    const base = Date.parse(run.createdAt);
    const e = { id: `${base}-${run.events.length}`, event, data };
    run.events.push(e);
    for (const listener of listeners.get(run.id) ?? []) listener(e);
  };
  const setStatus = (run: FakeRun, status: FakeRun['status']): void => {
    run.status = status;
    run.updatedAt = now();
    emit(run, 'status', { runId: run.id, status });
  };
  const finish = (agent: FakeAgent, run: FakeRun, status: FakeRun['status']): void => {
    for (const t of run.timers) clearTimeout(t);
    run.timers = [];
    if (status === 'FINISHED') {
      run.result = `Done: ${run.prompt.text}`;
      agent.artifacts = [{ path: 'artifacts/report.md', content: `# Report for ${run.id}\n`, updatedAt: now() }, { path: 'artifacts/logs/run.txt', content: 'log line\n', updatedAt: now() }];
    }
    run.status = status;
    run.updatedAt = now();
    emit(run, 'result', { runId: run.id, status, ...(run.result ? { text: run.result } : {}), durationMs: Date.now() - Date.parse(run.createdAt) });
    emit(run, 'done', {});
  };
  const schedule = (agent: FakeAgent, run: FakeRun): void => {
    const runMs = fake.runMs;
    const count = fake.eventCount;
    run.timers.push(setTimeout(() => setStatus(run, 'RUNNING'), Math.floor(runMs / 10)));
    for (let i = 0; i < count; i++) {
      const at = Math.floor(runMs / 10) + Math.floor(((i + 1) * (runMs * 0.8)) / (count + 1));
      run.timers.push(setTimeout(() => {
        const kind = i % 4;
        if (kind === 0) emit(run, 'assistant', { text: `step ${i}\nline two` });
        else if (kind === 1) emit(run, 'thinking', { text: `thinking ${i}` });
        else if (kind === 2) emit(run, 'tool_call', { callId: `call-${i}`, name: 'edit_file', status: 'completed', args: { path: `f${i}.ts` } });
        else emit(run, 'heartbeat', {});
      }, at));
    }
    run.timers.push(setTimeout(() => finish(agent, run, run.prompt.text.includes('[fail]') ? 'ERROR' : 'FINISHED'), runMs));
  };
  const newRun = (agent: FakeAgent, prompt: { text: string }): FakeRun => {
    const run: FakeRun = { id: `run-${randomUUID()}`, agentId: agent.id, status: 'CREATING', prompt, createdAt: now(), updatedAt: now(), events: [], streamExpired: false, timers: [] };
    agent.runs.unshift(run);
    schedule(agent, run);
    return run;
  };
  const runView = (run: FakeRun): Record<string, unknown> => ({
    id: run.id, agentId: run.agentId, status: run.status, createdAt: run.createdAt, updatedAt: run.updatedAt,
    ...(TERMINAL.has(run.status) ? { durationMs: Date.parse(run.updatedAt) - Date.parse(run.createdAt), ...(run.result ? { result: run.result } : {}) } : {}),
  });
  const agentView = (agent: FakeAgent, full: boolean): Record<string, unknown> => ({
    id: agent.id, name: agent.name, status: agent.status, env: { type: 'cloud' }, url: `https://cursor.com/agents/${agent.id}`,
    createdAt: agent.createdAt, updatedAt: agent.updatedAt, ...(agent.runs[0] ? { latestRunId: agent.runs[0].id } : {}),
    ...(full ? { repos: agent.body.repos, branchName: agent.body.branchName, autoCreatePR: agent.body.autoCreatePR ?? false } : {}),
  });
  const pageOf = <T>(items: T[], query: URLSearchParams): Record<string, unknown> | string => {
    const limit = query.has('limit') ? Number(query.get('limit')) : 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) return 'limit must be between 1 and 100';
    const cursor = query.get('cursor');
    const start = cursor === null ? 0 : Number(Buffer.from(cursor, 'base64url').toString('utf8').replace(/^o:/, ''));
    if (!Number.isInteger(start) || start < 0) return 'invalid cursor';
    const slice = items.slice(start, start + limit);
    const more = start + limit < items.length;
    const next = more ? Buffer.from(`o:${start + limit}`).toString('base64url') : null;
    return { items: slice, ...(next === null && fake.omitLastCursor ? {} : { nextCursor: next }) };
  };

  const authorized = (req: http.IncomingMessage): boolean => {
    const header = req.headers.authorization ?? '';
    if (header === `Bearer ${apiKey}`) return true;
    if (!header.startsWith('Basic ')) return false;
    return Buffer.from(header.slice(6), 'base64').toString('utf8') === `${apiKey}:`;
  };

  const stream = (req: http.IncomingMessage, res: http.ServerResponse, run: FakeRun): void => {
    if (run.streamExpired) return fail(res, 410, 'stream_expired', 'The stream for this run has expired; use Get Run for the final state');
    const last = req.headers['last-event-id'];
    let from = 0;
    if (typeof last === 'string' && last !== '') {
      const index = run.events.findIndex((e) => e.id === last);
      if (index < 0) return fail(res, 400, 'invalid_last_event_id', 'Last-Event-ID does not belong to this run');
      from = index + 1;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Cursor-Stream-Retention-Seconds': '3600' });
    streams.add(res);
    const cut = cutAfter;
    cutAfter = undefined;
    let sent = 0;
    res.write(`: connected\n\nevent: status\ndata: ${JSON.stringify({ runId: run.id, status: run.status })}\n\n`);
    const write = (e: FakeEvent): void => {
      if (res.destroyed) return;
      if (cut !== undefined && sent > cut) return;
      if (cut !== undefined && sent === cut) {
        sent++;
        // half an event, then the connection drops: a reader must not take it
        res.write(`id: ${e.id}\r\nevent: ${e.event}\r\ndata: ${JSON.stringify(e.data).slice(0, 5)}`, () => res.destroy());
        return;
      }
      sent++;
      // the data's own newlines become several data lines, as SSE requires
      const lines = JSON.stringify(e.data, null, e.event === 'assistant' ? 1 : undefined).split('\n').map((l) => `data: ${l}`).join('\r\n');
      res.write(`id: ${e.id}\r\nevent: ${e.event}\r\n${lines}\r\n\r\n`);
      if (e.event === 'done') res.end();
    };
    for (const e of run.events.slice(from)) write(e);
    if (res.writableEnded || res.destroyed) {
      streams.delete(res);
      return;
    }
    const set = listeners.get(run.id) ?? new Set();
    listeners.set(run.id, set);
    set.add(write);
    res.on('close', () => {
      set.delete(write);
      streams.delete(res);
    });
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      return fail(res, 400, 'validation_error', 'body is not JSON');
    }
    if (url.pathname.startsWith('/s3/')) {
      const content = blobs.get(url.pathname.slice(4));
      if (content === undefined) return void res.writeHead(403).end('<Error>AccessDenied</Error>');
      res.writeHead(200, { 'Content-Type': 'text/markdown' }).end(content);
      return;
    }
    requests.push({ method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body });
    if (fake.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.delayMs));
    if (res.destroyed) return;
    if (!authorized(req)) return fail(res, 401, 'unauthorized', 'Invalid API key');
    if (limited > 0) {
      limited--;
      return fail(res, 429, 'rate_limit_exceeded', 'Too many requests', { 'Retry-After': String(retryAfter), 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '0' });
    }
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const method = req.method ?? 'GET';
    const record = (body ?? {}) as Record<string, unknown>;
    if (parts[0] !== 'v1') return fail(res, 404, 'not_found', 'No such endpoint');
    const [, top, agentId, sub, runId, action] = parts;

    if (top === 'me' && method === 'GET') return send(res, 200, { apiKeyName: 'flowgate test key', createdAt: '2026-01-01T00:00:00Z', userEmail: 'dev@example.test' });
    if (top === 'models' && method === 'GET') {
      const ids = ['composer-2', 'claude-4.5-sonnet'];
      return send(res, 200, { items: fake.modelsAsObjects ? ids.map((id) => ({ id, displayName: id.toUpperCase() })) : ids });
    }
    if (top === 'repositories' && method === 'GET') return send(res, 200, { items: [{ url: 'https://github.com/acme/widgets' }, { url: 'https://github.com/acme/gears' }] });
    if (top === 'sub-tokens' && method === 'POST') {
      const email = record.forUserEmail;
      const userId = record.forUserId;
      if ((email === undefined) === (userId === undefined)) return fail(res, 400, 'validation_error', 'Send exactly one of forUserEmail or forUserId');
      return send(res, 200, { accessToken: `sub_${randomUUID()}`, expiresAt: new Date(Date.now() + 3600_000).toISOString(), userId: typeof userId === 'number' ? userId : 42, teamId: 7 });
    }
    if (top !== 'agents') return fail(res, 404, 'not_found', 'No such endpoint');

    if (agentId === undefined) {
      if (method === 'POST') {
        const prompt = record.prompt as { text?: unknown } | undefined;
        const repos = record.repos;
        if (!prompt || typeof prompt.text !== 'string' || prompt.text === '') return fail(res, 400, 'validation_error', 'prompt.text is required');
        if (!Array.isArray(repos) || repos.length !== 1) return fail(res, 400, 'validation_error', 'repos must have exactly one entry');
        const agent: FakeAgent = { id: `bc-${randomUUID()}`, name: prompt.text.slice(0, 40), status: 'ACTIVE', body: record, createdAt: now(), updatedAt: now(), runs: [], artifacts: [] };
        agents.set(agent.id, agent);
        const run = newRun(agent, { text: prompt.text });
        return send(res, 201, { agent: agentView(agent, true), run: runView(run) });
      }
      if (method !== 'GET') return fail(res, 405, 'method_not_allowed', 'Method not allowed');
      const prUrl = url.searchParams.get('prUrl');
      const all = [...agents.values()].reverse()
        .filter((a) => url.searchParams.get('includeArchived') === 'true' || a.status !== 'ARCHIVED')
        .filter((a) => prUrl === null || (a.body.repos as { prUrl?: string }[] | undefined)?.[0]?.prUrl === prUrl);
      const answer = pageOf(all.map((a) => agentView(a, false)), url.searchParams);
      return typeof answer === 'string' ? fail(res, 400, 'validation_error', answer) : send(res, 200, answer);
    }
    const agent = agents.get(agentId);
    if (!agent) return fail(res, 404, 'agent_not_found', `Agent ${agentId} not found`);
    if (sub === undefined) {
      if (method === 'GET') return send(res, 200, agentView(agent, true));
      if (method === 'DELETE') {
        for (const r of agent.runs) for (const t of r.timers) clearTimeout(t);
        agents.delete(agent.id);
        return send(res, 200, { id: agent.id });
      }
    }
    if ((sub === 'archive' || sub === 'unarchive') && method === 'POST') {
      agent.status = sub === 'archive' ? 'ARCHIVED' : 'ACTIVE';
      agent.updatedAt = now();
      return send(res, 200, { id: agent.id });
    }
    if (sub === 'artifacts' && runId === undefined && method === 'GET') {
      return send(res, 200, { items: agent.artifacts.map((a) => ({ path: a.path, sizeBytes: Buffer.byteLength(a.content), updatedAt: a.updatedAt })) });
    }
    if (sub === 'artifacts' && runId === 'download' && method === 'GET') {
      const wanted = url.searchParams.get('path') ?? '';
      if (!wanted.startsWith('artifacts/')) return fail(res, 400, 'validation_error', 'path must be relative and under artifacts/');
      const artifact = agent.artifacts.find((a) => a.path === wanted);
      if (!artifact) return fail(res, 404, 'artifact_not_found', `No artifact ${wanted}`);
      const token = randomUUID();
      blobs.set(token, artifact.content);
      return send(res, 200, { url: `${fake.url}/s3/${token}?X-Amz-Signature=fake`, expiresAt: new Date(Date.now() + 15 * 60_000).toISOString() });
    }
    if (sub === 'runs') {
      if (runId === undefined) {
        if (method === 'POST') {
          const prompt = record.prompt as { text?: unknown } | undefined;
          if (!prompt || typeof prompt.text !== 'string' || prompt.text === '') return fail(res, 400, 'validation_error', 'prompt.text is required');
          if (agent.status === 'ARCHIVED') return fail(res, 409, 'agent_archived', 'The agent is archived; unarchive it first');
          if (agent.runs.some((r) => !TERMINAL.has(r.status))) return fail(res, 409, 'agent_busy', 'The agent already has an active run');
          return send(res, 201, { run: runView(newRun(agent, { text: prompt.text })) });
        }
        const answer = pageOf(agent.runs.map(runView), url.searchParams);
        return typeof answer === 'string' ? fail(res, 400, 'validation_error', answer) : send(res, 200, answer);
      }
      const run = agent.runs.find((r) => r.id === runId);
      if (!run) return fail(res, 404, 'run_not_found', `Run ${runId} not found`);
      if (action === undefined && method === 'GET') return send(res, 200, runView(run));
      if (action === 'cancel' && method === 'POST') {
        if (TERMINAL.has(run.status)) return fail(res, 409, 'run_not_cancellable', `The run is ${run.status}`);
        finish(agent, run, 'CANCELLED');
        return send(res, 200, { id: run.id });
      }
      if (action === 'stream' && method === 'GET') return stream(req, res, run);
    }
    return fail(res, 404, 'not_found', 'No such endpoint');
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) fail(res, 500, 'internal_error', String(error));
    });
  });
  const listening = await listenOnLoopback(server);
  const fake: FakeCodeAgent = {
    url: listening.url, apiKey, agents, requests,
    runMs: options.runMs ?? 1500, eventCount: options.eventCount ?? 8, modelsAsObjects: false, omitLastCursor: false, delayMs: 0,
    rateLimit(count, seconds) {
      limited = count;
      retryAfter = seconds;
    },
    cutNextStream(afterEvents) {
      cutAfter = afterEvents;
    },
    openStreams: () => streams.size,
    run: (a, r) => agents.get(a)?.runs.find((x) => x.id === r),
    async close() {
      for (const a of agents.values()) for (const r of a.runs) for (const t of r.timers) clearTimeout(t);
      await listening.close();
    },
  };
  return fake;
}
