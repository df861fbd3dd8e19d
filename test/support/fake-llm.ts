/**
 * A fake OpenAI-compatible chat-completions server on loopback, speaking the real wire format:
 * `POST /v1/chat/completions` with `messages` and `tools`, answering `choices[0].message` with
 * `content` or `tool_calls`, errors as `{error: {message, type, param, code}}`, and 429 with
 * `Retry-After`. Each request takes the next scripted reply; a script entry may be a function of
 * the request, so a test can assert what the model was shown. Each answer reports `usage` (by
 * default 10 prompt and 5 completion tokens; a reply's `usage` sets them, `cached` as
 * `prompt_tokens_details.cached_tokens`, and `usage: null` leaves it out).
 */
import http from 'node:http';
import { listenOnLoopback } from './loopback';

export interface ChatRequest {
  model: string;
  messages: { role: string; content?: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }[];
  tools?: { type: 'function'; function: { name: string; description?: string; parameters: Record<string, unknown> } }[];
  response_format?: { type: string; json_schema?: { name: string; schema: Record<string, unknown> } };
  [field: string]: unknown;
}

/** Tokens an answer reports; `cached` is a part of `prompt`. */
export interface FakeUsage {
  prompt: number;
  completion: number;
  cached?: number;
}

export type FakeReply =
  | { content: string; usage?: FakeUsage | null }
  | { toolCalls: { name: string; arguments: Record<string, unknown> }[]; usage?: FakeUsage | null }
  | { status: number; message: string; type?: string; code?: string; headers?: Record<string, string> }
  /** answer after this many milliseconds */
  | { delayMs: number; then: FakeReply };

export type ScriptEntry = FakeReply | ((request: ChatRequest) => FakeReply);

export interface FakeLlm {
  /** the base URL to configure: `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  requests: { body: ChatRequest; headers: http.IncomingHttpHeaders; at: number }[];
  /** replies in order; when empty, `fallback` answers (by default a 500 with an error body) */
  script: ScriptEntry[];
  fallback?: ScriptEntry;
  close(): Promise<void>;
}

let callIds = 0;

function usageOf(usage: FakeUsage | null | undefined): Record<string, unknown> {
  if (usage === null) return {};
  const { prompt, completion, cached } = usage ?? { prompt: 10, completion: 5 };
  return {
    usage: {
      prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion,
      ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 } }),
    },
  };
}

function completion(model: string, reply: Extract<FakeReply, { content: string } | { toolCalls: unknown }>): Record<string, unknown> {
  const message = 'content' in reply
    ? { role: 'assistant', content: reply.content, refusal: null }
    : {
      role: 'assistant', content: null, refusal: null,
      tool_calls: reply.toolCalls.map((c) => ({ id: `call_${++callIds}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
    };
  return {
    id: `chatcmpl-${callIds++}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: 'content' in reply ? 'stop' : 'tool_calls' }],
    ...usageOf(reply.usage),
  };
}

export async function startFakeLlm(script: ScriptEntry[] = []): Promise<FakeLlm> {
  const fake: FakeLlm = { baseUrl: '', requests: [], script, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sendError = (status: number, message: string, type = 'invalid_request_error', code: string | null = null, headers: Record<string, string> = {}): void => {
        res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
        res.end(JSON.stringify({ error: { message, type, param: null, code } }));
      };
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return sendError(404, `Invalid URL (${req.method} ${req.url})`);
      let body: ChatRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
      } catch {
        return sendError(400, 'We could not parse the JSON body of your request.');
      }
      fake.requests.push({ body, headers: req.headers, at: Date.now() });
      const entry = fake.script.shift() ?? fake.fallback;
      let reply: FakeReply = entry === undefined
        ? { status: 500, message: 'the fake model has no more scripted replies', type: 'server_error' }
        : typeof entry === 'function' ? entry(body) : entry;
      const answer = (): void => {
        if ('delayMs' in reply) {
          const { delayMs, then } = reply;
          reply = then;
          setTimeout(answer, delayMs);
          return;
        }
        if ('status' in reply) return sendError(reply.status, reply.message, reply.type, reply.code ?? null, reply.headers);
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(completion(body.model, reply)));
      };
      answer();
    });
  });
  const listening = await listenOnLoopback(server);
  fake.baseUrl = `${listening.url}/v1`;
  fake.close = listening.close;
  return fake;
}

/** The last message of a request (what the model is answering). */
export function lastMessage(request: ChatRequest): ChatRequest['messages'][number] {
  const last = request.messages.at(-1);
  if (!last) throw new Error('the request has no messages');
  return last;
}
