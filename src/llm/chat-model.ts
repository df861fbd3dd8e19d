/**
 * The model adapter: one call of an OpenAI-compatible chat-completions API with tool calling,
 * through the `openai` package. Its own retries are off (Temporal retries the activity), and every
 * way a call can fail becomes one ModelError telling whether a retry may help and when.
 */
import OpenAI from 'openai';
import { z } from 'zod';

export interface ModelSettings {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
  temperature?: number;
  maxTokens?: number;
}

/** A message of the chat-completions wire format, as flowgate writes them. */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ModelTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  messages: ChatMessage[];
  tools: ModelTool[];
  /** ask for a JSON answer of this schema */
  outputSchema?: Record<string, unknown>;
}

export interface ModelReply {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: string | null;
  /** as the provider reports it; cachedPromptTokens is a part of promptTokens (OpenAI's prompt_tokens_details.cached_tokens), 0 when not reported */
  usage?: { promptTokens: number; completionTokens: number; cachedPromptTokens: number };
}

export type ModelErrorKind = 'RATE_LIMITED' | 'UNAVAILABLE' | 'REJECTED' | 'BAD_REPLY';

export class ModelError extends Error {
  override readonly name = 'ModelError';
  constructor(readonly kind: ModelErrorKind, message: string, readonly retryAfterMs?: number) {
    super(message);
  }

  get retryable(): boolean {
    return this.kind === 'RATE_LIMITED' || this.kind === 'UNAVAILABLE';
  }
}

// The reply is an outside service's: checked before use.
const ToolCallSchema = z.object({
  id: z.string().min(1),
  type: z.literal('function').default('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string().default('{}') }),
});
const ReplySchema = z.object({
  choices: z.array(z.object({
    message: z.object({ content: z.string().nullish(), tool_calls: z.array(ToolCallSchema).nullish() }),
    finish_reason: z.string().nullish(),
  })).min(1),
  usage: z.object({
    prompt_tokens: z.number().int().min(0), completion_tokens: z.number().int().min(0),
    prompt_tokens_details: z.object({ cached_tokens: z.number().int().min(0).nullish() }).loose().nullish(),
  }).nullish().catch(undefined),
});

const MAX_RETRY_AFTER_MS = 10 * 60_000;

export async function completeChat(settings: ModelSettings, request: ModelRequest, signal?: AbortSignal): Promise<ModelReply> {
  const client = new OpenAI({ baseURL: settings.baseUrl, apiKey: settings.apiKey ?? 'none', maxRetries: 0, timeout: settings.timeoutMs });
  let raw: unknown;
  try {
    raw = await client.chat.completions.create({
      model: settings.model,
      messages: request.messages,
      ...(request.tools.length ? { tools: request.tools.map((t) => ({ type: 'function' as const, function: t })) } : {}),
      ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
      ...(settings.maxTokens === undefined ? {} : { max_tokens: settings.maxTokens }),
      ...(request.outputSchema ? { response_format: { type: 'json_schema' as const, json_schema: { name: 'answer', schema: request.outputSchema } } } : {}),
    }, { signal });
  } catch (error) {
    throw toModelError(error);
  }
  const parsed = ReplySchema.safeParse(raw);
  if (!parsed.success) throw new ModelError('BAD_REPLY', `the model endpoint answered an unexpected shape: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const choice = parsed.data.choices[0]!;
  return {
    content: choice.message.content ?? null,
    toolCalls: (choice.message.tool_calls ?? []).map((c) => ({ id: c.id, type: 'function', function: c.function })),
    finishReason: choice.finish_reason ?? null,
    ...(parsed.data.usage ? {
      usage: {
        promptTokens: parsed.data.usage.prompt_tokens, completionTokens: parsed.data.usage.completion_tokens,
        cachedPromptTokens: Math.min(parsed.data.usage.prompt_tokens_details?.cached_tokens ?? 0, parsed.data.usage.prompt_tokens),
      },
    } : {}),
  };
}

/** How the SDK's errors map: 429 waits for Retry-After; 408, 409, 5xx and network trouble retry; other 4xx do not. */
export function toModelError(error: unknown): ModelError {
  if (error instanceof ModelError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new ModelError('UNAVAILABLE', 'the model endpoint did not answer in time');
  if (error instanceof OpenAI.APIConnectionError) return new ModelError('UNAVAILABLE', `the model endpoint is unreachable: ${error.message}`);
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const detail = upstreamMessage(error);
    if (error.status === 429) return new ModelError('RATE_LIMITED', `the model endpoint is rate limiting (429): ${detail}`, retryAfterMs(error.headers));
    if (error.status === 408 || error.status === 409 || error.status >= 500) return new ModelError('UNAVAILABLE', `the model endpoint answered ${error.status}: ${detail}`);
    return new ModelError('REJECTED', `the model endpoint refused the request (${error.status}): ${detail}`);
  }
  return new ModelError('UNAVAILABLE', `the model call failed: ${error instanceof Error ? error.message : String(error)}`);
}

function upstreamMessage(error: InstanceType<typeof OpenAI.APIError>): string {
  const body = z.object({ message: z.string() }).loose().safeParse(error.error);
  return (body.success ? body.data.message : error.message).slice(0, 500);
}

/** Retry-After in seconds or as an HTTP date (and the OpenAI-specific retry-after-ms). */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return Math.min(ms, MAX_RETRY_AFTER_MS);
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  const wait = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  return Number.isFinite(wait) && wait >= 0 ? Math.min(wait, MAX_RETRY_AFTER_MS) : undefined;
}

/** Names the provider accepts for tools: ^[a-zA-Z0-9_-]{1,64}$, unique within one request. */
export function modelToolName(wanted: string, taken: ReadonlySet<string>): string {
  const base = (wanted.replace(/[^a-zA-Z0-9_-]/g, '_') || 'tool').slice(0, 64);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = `${base.slice(0, 64 - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}
