import { HttpError } from '../http-error';
import { temporalRefusal } from '../temporal-errors';
import type { Logger } from '../../observability/logger';
import { routeTemplate } from './observe';
import type { GatewayContext } from '../state';

/** Koa errors carry `status` and `expose` (body parsers, `ctx.throw`): keep their meaning. */
interface KoaLikeError {
  message?: string;
  status?: number;
  statusCode?: number;
  expose?: boolean;
}

const CODE_BY_STATUS: Record<number, string> = {
  400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 405: 'method_not_allowed',
  409: 'conflict', 413: 'payload_too_large', 415: 'unsupported_media_type', 422: 'invalid_inputs', 429: 'rate_limited',
  501: 'not_implemented',
};

/**
 * Every error leaves as `{error, message}` with its status. Unexpected errors are a plain 500 for
 * the client and a full record (with the request id) in the log; no stack trace crosses the wire.
 */
export function answerError(ctx: GatewayContext, raw: unknown, log: Logger): void {
  const { requestId } = ctx.state;
  if (raw instanceof HttpError) {
    const err = raw;
    ctx.status = err.status;
    for (const [name, value] of Object.entries(err.options.headers ?? {})) ctx.set(name, value);
    ctx.body = err.expose ? { error: err.code, message: err.message } : { error: 'internal', message: 'internal error' };
    if (!err.expose) log.error('request failed', { requestId, error: err });
    return;
  }
  // a Temporal call no route wrapped: unreachable or at its limit is a 503 with Retry-After, never a 500
  const refusal = temporalRefusal(raw);
  if (refusal) {
    answerError(ctx, refusal, log);
    return;
  }
  const err = koaLike(raw);
  const status = err.status ?? err.statusCode;
  if (status && ((status >= 400 && status < 500) || status === 501) && err.expose !== false) {
    ctx.status = status;
    ctx.body = { error: CODE_BY_STATUS[status] ?? 'bad_request', message: clientMessage(err, status) };
    return;
  }
  // The route pattern, not the path: webhook paths carry an API key.
  log.error('request failed', { requestId, method: ctx.method, route: routeTemplate(ctx), error: raw });
  ctx.status = 500;
  ctx.body = { error: 'internal', message: `internal error (request ${requestId ?? 'unknown'})` };
}

/** What a thrown value says of itself; something thrown that is not an object says nothing. */
function koaLike(raw: unknown): KoaLikeError {
  return typeof raw === 'object' && raw !== null ? raw : {};
}

function clientMessage(err: KoaLikeError, status: number): string | undefined {
  if (status === 413) return 'the body is larger than this endpoint accepts';
  if (status === 415) return 'this endpoint does not accept that content type';
  return err.message;
}
