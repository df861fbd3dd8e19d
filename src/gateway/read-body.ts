/**
 * Reads a whole request body of at most `limit` bytes. A larger one is refused as soon as that
 * shows (from Content-Length, else while it streams) and the rest is drained, so the client can
 * read the answer. Callers map the two errors to their own protocol (HTTP or JSON-RPC).
 */
import type { IncomingMessage } from 'node:http';
import { discardRequest } from '../attachments/receive-multipart';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the body is larger than ${limit} bytes`);
  }
}

export class IncompleteBodyError extends Error {
  constructor() {
    super('the request body ended early');
  }
}

export function readBoundedBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    discardRequest(req);
    return Promise.reject(new BodyTooLargeError(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err?: Error): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onError);
      if (err) {
        discardRequest(req);
        reject(err);
      } else {
        resolve(Buffer.concat(chunks, size));
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) done(new BodyTooLargeError(limit));
      else chunks.push(chunk);
    };
    const onEnd = (): void => done();
    const onError = (): void => done(new IncompleteBodyError());
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onError);
  });
}
