import type { Next } from 'koa';
import { koaBody } from 'koa-body';
import { HttpError } from '../http-error';
import type { GatewayContext } from '../state';
import { jsonDepthExceeds, tooDeepMessage } from '../../common/json-depth';

export const JSON_BODY_LIMIT = '1mb';

function hasBody(ctx: GatewayContext): boolean {
  return Boolean(ctx.request.length) || ctx.get('Transfer-Encoding') !== '';
}

/**
 * JSON bodies only: anything else with a body is a 415, a body that is not JSON or nests deeper
 * than MAX_JSON_DEPTH a 400, one over the limit a 413. Mounted after authentication, so a caller without a credential learns nothing
 * about its body. Sets `ctx.state.hasBody` so handlers can tell "no body" from "a JSON null".
 */
export function jsonBody(options: { limit?: string } = {}) {
  const parse = koaBody({
    json: true, jsonStrict: false, urlencoded: false, multipart: false, text: false, jsonLimit: options.limit ?? JSON_BODY_LIMIT,
    onError(error) {
      if ('status' in error && error.status === 413) throw new HttpError(413, 'payload_too_large', `the body is larger than ${options.limit ?? JSON_BODY_LIMIT}`);
      throw new HttpError(400, 'invalid_json', 'the body is not valid JSON');
    },
  });
  return async function parseJsonBody(ctx: GatewayContext, next: Next): Promise<void> {
    ctx.state.hasBody = hasBody(ctx);
    if (!ctx.state.hasBody) return next();
    if (!ctx.is('json')) {
      throw new HttpError(415, 'unsupported_media_type', `this endpoint takes application/json, not ${ctx.get('Content-Type') || 'an untyped body'}`);
    }
    await parse(ctx, async () => {
      if (jsonDepthExceeds(ctx.request.body)) throw new HttpError(400, 'too_deep', tooDeepMessage());
      await next();
    });
  };
}
