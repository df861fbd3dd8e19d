/**
 * Signed file links: `GET /files/<key>?exp=&name=&type=&sig=`. The link alone authorizes the
 * download; a tampered or expired link is refused without saying whether the file exists.
 */
import Router from '@koa/router';
import { z } from 'zod';
import type { GatewayDeps } from '../deps';
import type { GatewayRouter, GatewayState } from '../state';
import { HttpError, notFound } from '../http-error';
import { expiresAt } from '../../retention/policy';
import { decodeFileKey } from '../../crypto/signed-urls';

export const FileQuerySchema = z.object({
  exp: z.string().optional(),
  sig: z.string().optional(),
  name: z.string().optional(),
  type: z.string().optional(),
});

export function fileRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>();
  // named by its OpenAPI path: the key may hold slashes, so the route is a RegExp
  router.get('/files/{key}', /^\/files\/(.+)$/, async (ctx) => {
    const key = decodeFileKey(ctx.path.slice('/files/'.length));
    if (key === undefined) throw new HttpError(403, 'invalid_link', 'this link is not valid');
    const query = FileQuerySchema.safeParse(ctx.query);
    if (!query.success) throw new HttpError(403, 'invalid_link', 'this link is not valid');
    const verdict = deps.signer.verify(key, query.data);
    if (verdict === 'expired') throw new HttpError(403, 'expired_link', 'this link has expired');
    if (verdict !== 'ok') throw new HttpError(403, 'invalid_link', 'this link is not valid');
    const { retention } = deps.config;
    // Past its retention period a blob is gone, whether or not the sweep has come by yet.
    const expired = (modified: Date): boolean => retention.enabled && (expiresAt(key, modified, retention) ?? Infinity) <= Date.now();
    const name = query.data.name ?? key.split('/').pop() ?? 'file';
    if (deps.config.blobStore.kind === 's3' && deps.config.blobStore.downloads === 'redirect' && deps.blobs.presign) {
      const stat = await deps.blobs.stat(key);
      if (!stat || expired(stat.modified)) throw notFound('unknown_file', 'the file is gone');
      // The presigned URL lives no longer than the link, nor than the blob.
      const until = Math.min(Number(query.data.exp) * 1000, expiresAt(key, stat.modified, retention) ?? Infinity);
      const url = await deps.blobs.presign(key, {
        expiresInSeconds: Math.max(1, Math.floor((until - Date.now()) / 1000)),
        contentType: query.data.type ?? 'application/octet-stream',
        contentDisposition: attachmentDisposition(name),
      });
      ctx.set('Cache-Control', 'private, no-store');
      ctx.redirect(url);
      return;
    }
    const file = await deps.blobs.open(key);
    if (!file) throw notFound('unknown_file', 'the file is gone');
    if (expired(file.modified)) {
      file.stream.destroy();
      throw notFound('unknown_file', 'the file is gone');
    }
    ctx.set('Content-Type', query.data.type ?? 'application/octet-stream');
    ctx.set('Content-Length', String(file.size));
    ctx.set('Cache-Control', 'private, no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.attachment(name, { type: 'attachment' });
    ctx.body = file.stream;
  });
  return router;
}

/** `attachment; filename="…"; filename*=UTF-8''…` (RFC 6266) for the object store to answer with. */
function attachmentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
