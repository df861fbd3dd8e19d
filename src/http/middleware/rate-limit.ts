import type { Context, Next } from 'koa';
import { ErrorCode, JsonRpcError, failure } from '../../tools/mcp/jsonrpc';
import { HttpError } from '../http-error';
import type { RateLimit, RateLimitGrant } from '../rate-limit/local';

/** Set on `ctx.state.takeRateTokens` when the request was counted: takes `count` more tokens from its budget. */
export type TakeRateTokens = (count: number) => Promise<RateLimitGrant>;

/** `http`: errors are `{error, message}`; `tools`: the tool gateway answers JSON-RPC envelopes. */
type Surface = 'http' | 'tools';

interface Presented {
  credential: string;
  surface: Surface;
  /** what the bucket counts: a credential, or the client address of a sign-in endpoint (which takes none yet) */
  per: 'credential' | 'address';
}

/**
 * Where a client signs in or obtains a credential without presenting one yet: OAuth dynamic
 * registration, the token, revocation, authorization and consent endpoints, and the console's
 * sign-in form. Their POSTs are counted per client address (Koa's `ctx.ip`), so no one can
 * register clients or try codes, refresh tokens and admin tokens there without limit.
 */
const SIGN_IN_PATHS = ['/oauth/register', '/oauth/token', '/oauth/revoke', '/oauth/authorize', '/oauth/consent', '/console/sign-in'];

/** The same pattern the routes use: a header they would refuse is no credential here either. */
const BEARER = /^Bearer\s+(\S+)$/i;

function bearer(ctx: Context): string | undefined {
  return BEARER.exec(ctx.get('Authorization'))?.[1];
}

/** The router decodes path parameters; decode the same way so one key is one bucket. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The credential a request presents on a surface that takes one. Prefixes are matched without
 * regard to case because the router matches that way: `/EXT/Triggers/…` must not slip past.
 */
function presented(ctx: Context, toolsPrefix: string): Presented | undefined {
  const lower = ctx.path.toLowerCase();
  const under = (prefix: string): boolean => lower === prefix || lower.startsWith(`${prefix}/`);
  // With base path "/", the tool routes are the single-segment paths no other route takes.
  const toolPath = toolsPrefix === '' ? /^\/[^/]+\/?$/.test(lower) && !under('/healthz') : under(toolsPrefix);
  let credential: string | undefined;
  let surface: Surface = 'http';
  if (ctx.method === 'POST' && SIGN_IN_PATHS.some(under)) {
    return { credential: `sign-in endpoints from ${ctx.ip}`, surface, per: 'address' };
  }
  if (under('/ext/triggers') || under('/auth/token')) {
    credential = ctx.get('X-API-KEY');
  } else if (under('/ext/webhook')) {
    credential = decodeSegment(ctx.path.split('/')[3] ?? '');
  } else if (under('/api/v1')) {
    credential = bearer(ctx);
  } else if (toolPath) {
    credential = bearer(ctx);
    surface = 'tools';
  }
  return credential ? { credential, surface, per: 'credential' } : undefined;
}

/**
 * Refuses a request whose credential has used up its bucket with 429 and `Retry-After`, before
 * any route looks the credential up or reads the body: a flood costs no database lookup, and a
 * refused trigger call starts nothing and stores nothing. Node discards the unread body once the
 * answer is sent, so the connection stays usable. Requests without a credential pass (the routes
 * answer them 401); signed files, approval links and /healthz take none.
 */
export function rateLimit(options: {
  limiter: RateLimit;
  toolsBasePath: string;
  /**
   * The API key behind a genuine runtime token. A new token can be had every second, so tokens
   * are counted against their API key: minting more of them buys no more calls.
   */
  runtimeKeyId?: (token: string) => string | undefined;
}) {
  const toolsPrefix = options.toolsBasePath === '/' ? '' : options.toolsBasePath.replace(/\/+$/, '').toLowerCase();
  return async function limitRate(ctx: Context, next: Next): Promise<void> {
    const request = presented(ctx, toolsPrefix);
    if (!request) return next();
    const keyId = request.surface === 'tools' ? options.runtimeKeyId?.(request.credential) : undefined;
    const bucket = keyId ? `runtime tokens of API key ${keyId}` : request.credential;
    const verdict = await options.limiter.take(bucket);
    if (verdict.allowed) {
      // A JSON-RPC batch is many calls in one request: the tool route takes one more token per
      // entry past the first (this request's token) from the same bucket.
      const take: TakeRateTokens = (count) => options.limiter.takeMany(bucket, count);
      ctx.state.takeRateTokens = take;
      return next();
    }
    const retryAfter = String(verdict.retryAfterSeconds);
    const who = request.per === 'address' ? 'this address may make sign-in requests' : 'this credential may make requests';
    const message = `rate limited: ${who}: ${options.limiter.burst} at once and ${options.limiter.perMinute} a minute; retry in ${retryAfter} s`;
    if (request.surface === 'http') throw new HttpError(429, 'rate_limited', message, { headers: { 'Retry-After': retryAfter } });
    ctx.status = 429;
    ctx.set('Retry-After', retryAfter);
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(failure(null, new JsonRpcError(ErrorCode.TOOL_ERROR, message)));
  };
}
