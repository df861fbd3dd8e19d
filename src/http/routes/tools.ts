/**
 * The tool gateway's HTTP side (contract 4.5 and 7; docs/tool-gateway.md): `POST
 * {toolsBasePath}/<server>` with a runtime token is a stateless MCP Streamable HTTP endpoint, one
 * JSON reply per POST (202 when there is nothing to answer), `GET`/`DELETE` 405; both protocol
 * eras (2025-11-25 and older with `initialize`, 2026-07-28 without: src/tools/mcp/era.ts), the
 * standard MCP request headers passed on for the 2026 era's checks. This route only
 * does HTTP: the Origin and Host checks (src/http/origin-policy.ts), authentication, headers, the body, statuses, and writing the one streamed answer
 * (`tasks/result` to a client that accepts `text/event-stream`) as SSE. What a message means is
 * the MCP endpoint's (src/tools/mcp/endpoint.ts: the method table, batches, the task result
 * stream, elicitation). Bodies are limited per server before they are read (4 MiB; codeagent,
 * whose tools take images, about 110 MiB: ToolServer.maxRequestBytes), and one over 4 MiB is
 * parsed off the event loop (json-thread.ts) within a budget of such bodies per process.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import Router from '@koa/router';
import type { Context } from 'koa';
import { ToolCallError, type ToolServer } from '../../tools';
import { DEFAULT_MAX_REQUEST_BYTES, type ToolProgress } from '../../tools/server';
import type { CallOptions } from '../../tools/caller';
import { forwardableHeaders } from '../../tools/forward-headers';
import type { JsonRpcResponse } from '../../contracts/mcp';
import { ErrorCode, IDEMPOTENCY_KEY_PATTERN, JsonRpcError, failure } from '../../tools/mcp/jsonrpc';
import { batchRefusal } from '../../tools/mcp/batch';
import { mcpRequestHeaders } from '../../tools/mcp/era';
import { McpEndpoint, type McpCall } from '../../tools/mcp/endpoint';
import type { RuntimePrincipal } from '../../crypto/runtime-tokens';
import { toolCredentials } from '../tool-credentials';
import { LazyAbortController } from '../../common/lazy-abort';
import type { GatewayDeps } from '../deps';
import { sourceOf } from '../middleware/audit';
import { jsonDepthExceeds, MAX_JSON_DEPTH, tooDeepMessage } from '../../common/json-depth';
import type { TakeRateTokens } from '../middleware/rate-limit';
import { parseJsonOffThread } from '../../documents/json-thread';
import { LargeBodyBudget } from '../large-body-budget';
import { BodyNotAdmittedError, BodyTooLargeError, readBoundedBody } from '../read-body';
import { originPolicyOf } from '../origin-policy';
import { acceptsEventStream, acceptsJson, reply, streamMessages } from '../mcp-replies';
import { fieldOf, isRecord } from '../../common/narrow';

/** The body limit of a server whose tools take no more (most); codeagent's is about 110 MiB. */
export const TOOLS_BODY_LIMIT_BYTES = DEFAULT_MAX_REQUEST_BYTES;
/** What a caller refused for want of room for its large body is told to wait. */
const LARGE_BODY_RETRY_SECONDS = 2;

const mebibytes = (bytes: number): number => Math.round((bytes / (1024 * 1024)) * 10) / 10;

const rpcError = (code: (typeof ErrorCode)[keyof typeof ErrorCode], message: string): JsonRpcError => new JsonRpcError(code, message);

/** The caller's `params._meta.progressToken` of a single `tools/call`, when it gave one. */
function progressTokenOf(raw: unknown): string | number | undefined {
  if (!isRecord(raw) || raw.method !== 'tools/call') return undefined;
  const token = fieldOf(fieldOf(raw.params, '_meta'), 'progressToken');
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

export function toolRoutes(deps: GatewayDeps): Router {
  const router = new Router({ prefix: deps.config.toolsBasePath === '/' ? '' : deps.config.toolsBasePath.replace(/\/+$/, '') });

  const largeBodies = new LargeBodyBudget(deps.config.toolsLargeBodyBytes);
  /**
   * Where the progress of a `tools/call` answered as a stream goes (see answerStreamed): the
   * endpoint's calls pass through here, and a call made while a stream listens reports to it.
   */
  const progressListener = new AsyncLocalStorage<(report: ToolProgress) => void>();
  const tools = {
    list: deps.tools.list.bind(deps.tools),
    call: (orgId: string, target: string | ToolServer, toolName: string, args: Record<string, unknown>, options?: CallOptions) => {
      const listener = progressListener.getStore();
      // the options' own getters (a lazily made signal) stay lazy behind the added listener
      const withProgress: CallOptions | undefined = listener ? Object.create(options ?? null, { progress: { value: listener, enumerable: true } }) as CallOptions : options;
      return deps.tools.call(orgId, target, toolName, args, withProgress);
    },
  };
  const endpoint = new McpEndpoint({ tools, tasks: deps.tasks, log: deps.log, audit: deps.audit });

  /**
   * A `tools/call` whose caller accepts a stream and asked for progress: answered as JSON unless
   * the tool reports progress (a remote server streaming it, say); then as SSE, each
   * `notifications/progress` (with the caller's token) written as it comes, the result last.
   */
  async function answerStreamed(ctx: Context, raw: unknown, call: McpCall, requestKey: string | undefined, token: string | number): Promise<void> {
    const res = ctx.res;
    let streaming = false;
    const write = (message: unknown): void => {
      if (!res.writableEnded && !res.destroyed) res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    };
    const answer = await progressListener.run((report) => {
      if (!streaming) {
        streaming = true;
        ctx.status = 200;
        ctx.respond = false;
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
      }
      write({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, ...report } });
    }, () => endpoint.answer(raw, call, requestKey));
    if (!streaming) {
      if (answer === undefined) reply(ctx, 202, undefined);
      else reply(ctx, 'error' in answer && answer.error.code === ErrorCode.INVALID_REQUEST ? 400 : 200, answer);
      return;
    }
    if (answer) write(answer);
    res.end();
  }

  /**
   * The most a request to `server` may carry: the default, or what the server's tools take (see
   * ToolServer.maxRequestBytes), though never more than this process may hold of large bodies.
   */
  function bodyLimitOf(server: ToolServer): number {
    const wanted = server.maxRequestBytes ?? TOOLS_BODY_LIMIT_BYTES;
    return wanted <= TOOLS_BODY_LIMIT_BYTES ? wanted : Math.max(TOOLS_BODY_LIMIT_BYTES, Math.min(wanted, largeBodies.bytes));
  }

  /**
   * The request's JSON, or undefined once a refusal has been answered. A body over the default
   * limit is read only when `admit` grants its memory, and parsed off the event loop, after a
   * pass that refuses one nesting too deep or large otherwise than through its strings.
   */
  async function readJson(ctx: Context, server: ToolServer, limit: number, admit: (bytes: number) => boolean): Promise<{ raw: unknown } | undefined> {
    const refuse = (status: number, code: (typeof ErrorCode)[keyof typeof ErrorCode], message: string): undefined => {
      reply(ctx, status, failure(null, rpcError(code, message)));
      return undefined;
    };
    const notJson = (): undefined => refuse(400, ErrorCode.PARSE_ERROR, 'parse error: the body is not valid JSON');
    const tooDeep = (): undefined => refuse(400, ErrorCode.INVALID_REQUEST, `invalid request: ${tooDeepMessage()}`);
    let body: Buffer;
    try {
      body = await readBoundedBody(ctx.req, limit, { freeBytes: TOOLS_BODY_LIMIT_BYTES, admit });
    } catch (error) {
      if (error instanceof BodyTooLargeError) return refuse(413, ErrorCode.TOOL_ERROR, `the body is larger than ${limit} bytes (${mebibytes(limit)} MiB), the most /${server.name} takes`);
      if (error instanceof BodyNotAdmittedError) {
        ctx.set('Retry-After', String(LARGE_BODY_RETRY_SECONDS));
        return refuse(503, ErrorCode.TOOL_ERROR,
          `busy: this gateway holds as many large request bodies as it may (FLOWGATE_TOOLS_LARGE_BODIES_MB); retry in ${LARGE_BODY_RETRY_SECONDS} s`);
      }
      return notJson();
    }
    if (body.length <= TOOLS_BODY_LIMIT_BYTES) {
      let raw: unknown;
      try {
        raw = JSON.parse(body.toString('utf8'));
      } catch {
        return notJson();
      }
      return jsonDepthExceeds(raw) ? tooDeep() : { raw };
    }
    const parsed = await parseJsonOffThread(body, { maxDepth: MAX_JSON_DEPTH, maxStructureBytes: TOOLS_BODY_LIMIT_BYTES });
    switch (parsed.kind) {
      case 'parsed':
        return { raw: parsed.value };
      case 'invalid':
        return notJson();
      case 'too-deep':
        return tooDeep();
      case 'too-structured':
        return refuse(413, ErrorCode.TOOL_ERROR,
          `a body over ${TOOLS_BODY_LIMIT_BYTES} bytes may be large only through its strings (base64 images, say): at most ${TOOLS_BODY_LIMIT_BYTES} bytes outside them`);
      case 'failed':
        deps.log.error('the tool gateway could not parse a large body', { requestId: ctx.state.requestId, server: server.name, bytes: body.length, reason: parsed.reason });
        return refuse(500, ErrorCode.INTERNAL_ERROR, `internal error (request ${String(ctx.state.requestId ?? 'unknown')})`);
    }
  }

  const { authenticate, challenge, scopeRefusal } = toolCredentials(deps);
  const origins = originPolicyOf(deps);

  router.post('/:server', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    // DNS rebinding protection (the MCP transport's MUST): before the credential is looked at
    const refused = origins.refusal(ctx);
    if (refused) {
      reply(ctx, 403, failure(null, rpcError(ErrorCode.TOOL_ERROR, refused.message)));
      return;
    }
    // no promise (nor the await's) for the common case of an answer already known
    const verified = authenticate(ctx, ctx.params.server ?? '');
    const principal = verified instanceof Promise ? await verified : verified;
    if (!principal) {
      ctx.set('WWW-Authenticate', challenge(ctx, ctx.params.server ?? ''));
      reply(ctx, 401, failure(null, rpcError(ErrorCode.TOOL_ERROR, 'unauthorized: send Authorization: Bearer <runtime token> (from POST /auth/token), or sign in by OAuth (WWW-Authenticate names the metadata)')));
      return;
    }
    if (!ctx.is('application/json')) {
      reply(ctx, 415, failure(null, rpcError(ErrorCode.TOOL_ERROR, `unsupported media type: the body must be application/json, not ${ctx.get('Content-Type') || 'untyped'}`)));
      return;
    }
    if (!acceptsJson(ctx.get('Accept'))) {
      reply(ctx, 406, failure(null, rpcError(ErrorCode.TOOL_ERROR, 'not acceptable: the Accept header must include application/json')));
      return;
    }
    const requestKey = ctx.get('Idempotency-Key') || undefined;
    if (requestKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(requestKey)) {
      reply(ctx, 400, failure(null, rpcError(ErrorCode.INVALID_REQUEST, 'invalid request: Idempotency-Key must be 1 to 255 visible ASCII characters')));
      return;
    }
    let server: ToolServer;
    try {
      const resolved = deps.tools.server(principal.orgId, ctx.params.server ?? '');
      server = resolved instanceof Promise ? await resolved : resolved;
    } catch (error) {
      if (!(error instanceof ToolCallError)) throw error;
      reply(ctx, 404, failure(null, rpcError(ErrorCode.TOOL_ERROR, error.message)));
      return;
    }
    const limit = bodyLimitOf(server);
    let held = 0;
    try {
      const read = await readJson(ctx, server, limit, (bytes) => {
        if (!largeBodies.take(bytes)) return false;
        held = bytes;
        return true;
      });
      if (read) await answerRequest(ctx, read.raw, server, principal, requestKey);
    } finally {
      // a large body's share is given back once it has been answered: its parsed arguments lived that long
      largeBodies.give(held);
    }
  });

  async function answerRequest(ctx: Context, raw: unknown, server: ToolServer, principal: RuntimePrincipal, requestKey: string | undefined): Promise<void> {
    const caller = new LazyAbortController();
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) caller.abort(new Error('the caller went away'));
    });
    const requestId = ctx.state.requestId === undefined ? undefined : String(ctx.state.requestId);
    const headers = mcpRequestHeaders(ctx.req.headers);
    const call: McpCall = { server, principal, caller, requestId, forwardHeaders: () => forwardableHeaders(ctx.req.headers), headers, source: sourceOf(ctx) };
    const beyond = scopeRefusal(principal, raw, server.name); // an OAuth grant that asked for less than it now needs
    if (beyond) return reply(ctx, 403, beyond.answer, { 'WWW-Authenticate': beyond.challenge });
    if (Array.isArray(raw)) {
      const refusal = batchRefusal(raw)
        ?? (McpEndpoint.batchHasModernMessage(raw) ? rpcError(ErrorCode.INVALID_REQUEST, 'Bad Request: JSON-RPC batches may not contain requests for protocol revision 2026-07-28 or later') : undefined);
      if (refusal) {
        reply(ctx, 400, failure(null, refusal));
        return;
      }
      const take: TakeRateTokens | undefined = ctx.state.takeRateTokens;
      const batch = await endpoint.answerBatch(raw, call, requestKey, take);
      if (batch.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(batch.retryAfterSeconds));
      const answers = batch.answers.filter((a): a is JsonRpcResponse => a !== undefined);
      reply(ctx, answers.length === 0 ? 202 : 200, answers.length === 0 ? undefined : answers);
      return;
    }
    if (acceptsEventStream(ctx.get('Accept'))) {
      const stream = await endpoint.taskResultStream(raw, call);
      if (stream) {
        streamMessages(ctx, stream);
        return;
      }
      const progressToken = progressTokenOf(raw);
      if (progressToken !== undefined) {
        await answerStreamed(ctx, raw, call, requestKey, progressToken);
        return;
      }
    }
    const { answer, status } = await endpoint.answerMessage(raw, call, requestKey);
    reply(ctx, answer === undefined ? 202 : status, answer);
  }

  return router;
}
