/**
 * Reads a whole request body of at most `limit` bytes. A larger one is refused as soon as that
 * shows (from Content-Length, else while it streams) and the rest is drained, so the client can
 * read the answer. Callers map the errors to their own protocol (HTTP or JSON-RPC).
 */
import type { IncomingMessage } from 'node:http';
import { discardRequest } from '../attachments/receive-multipart';

/** Bodies of a declared length over this are read into one buffer of that length. */
const PREALLOCATE_ABOVE_BYTES = 1024 * 1024;

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

/** A body larger than BodyAdmission.freeBytes that `admit` turned down. */
export class BodyNotAdmittedError extends Error {
  constructor() {
    super('the body was not admitted');
  }
}

/** A check before a large body is read on (memory it would hold; see LargeBodyBudget). */
export interface BodyAdmission {
  /** a body of up to this many bytes is read without asking */
  freeBytes: number;
  /**
   * Asked once, when a body shows to be larger than freeBytes: with its Content-Length, or,
   * streamed without one, with the limit. False refuses it (BodyNotAdmittedError).
   */
  admit(bytes: number): boolean;
}

export function readBoundedBody(req: IncomingMessage, limit: number, admission?: BodyAdmission): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  const known = Number.isFinite(declared);
  const refuse = (error: Error): Promise<never> => {
    discardRequest(req);
    return Promise.reject(error);
  };
  if (known && declared > limit) return refuse(new BodyTooLargeError(limit));
  let admitted = admission === undefined || (known && declared <= admission.freeBytes);
  if (!admitted && known) {
    if (!admission!.admit(declared)) return refuse(new BodyNotAdmittedError());
    admitted = true;
  }
  // A large body of known length is copied into its buffer as it arrives: joining 100 MB of
  // chunks at the end held the event loop for over 0.1 s. A buffer of its own, not a slice of
  // the pool, so that it can be handed to another thread.
  const whole = known && declared > PREALLOCATE_ABOVE_BYTES ? Buffer.allocUnsafeSlow(declared) : undefined;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err?: Error): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onError);
      if (err) {
        discardRequest(req);
        reject(err);
      } else {
        resolve(whole ? whole.subarray(0, size) : Buffer.concat(chunks, size));
      }
    };
    const onData = (chunk: Buffer): void => {
      const at = size;
      size += chunk.length;
      if (size > limit) return done(new BodyTooLargeError(limit));
      if (!admitted && size > admission!.freeBytes) {
        if (!admission!.admit(limit)) return done(new BodyNotAdmittedError());
        admitted = true;
      }
      if (whole) chunk.copy(whole, at);
      else chunks.push(chunk);
    };
    const onEnd = (): void => done();
    const onError = (): void => done(new IncompleteBodyError());
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onError);
  });
}
