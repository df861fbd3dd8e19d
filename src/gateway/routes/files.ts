/**
 * Signed file links: `GET /files/<key>?exp=&name=&type=&sig=`. The link alone authorizes the
 * download; a tampered or expired link is refused without saying whether the file exists.
 */
import Router from '@koa/router';
import { z } from 'zod';
import type { GatewayDeps } from '../deps';
import { HttpError, notFound } from '../http-error';
import { decodeFileKey } from '../../signed-urls';

export const FileQuerySchema = z.object({
  exp: z.string().optional(),
  sig: z.string().optional(),
  name: z.string().optional(),
  type: z.string().optional(),
});

export function fileRoutes(deps: GatewayDeps): Router {
  const router = new Router();
  // named by its OpenAPI path: the key may hold slashes, so the route is a RegExp
  router.get('/files/{key}', /^\/files\/(.+)$/, async (ctx) => {
    const key = decodeFileKey(ctx.path.slice('/files/'.length));
    if (key === undefined) throw new HttpError(403, 'invalid_link', 'this link is not valid');
    const query = FileQuerySchema.safeParse(ctx.query);
    if (!query.success) throw new HttpError(403, 'invalid_link', 'this link is not valid');
    const verdict = deps.signer.verify(key, query.data);
    if (verdict === 'expired') throw new HttpError(403, 'expired_link', 'this link has expired');
    if (verdict !== 'ok') throw new HttpError(403, 'invalid_link', 'this link is not valid');
    const file = await deps.blobs.open(key);
    if (!file) throw notFound('unknown_file', 'the file is gone');
    ctx.set('Content-Type', query.data.type ?? 'application/octet-stream');
    ctx.set('Content-Length', String(file.size));
    ctx.set('Cache-Control', 'private, no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.attachment(query.data.name ?? key.split('/').pop(), { type: 'attachment' });
    ctx.body = file.stream;
  });
  return router;
}
