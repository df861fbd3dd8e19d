/**
 * JSON-RPC batches on the tool gateway: a batch's entries each count against the caller's rate
 * limit (the request's own token pays for the first): an entry without a token is answered with an
 * error and not run. At most BATCH_CONCURRENCY entries run at once, in order of the batch. With an
 * `Idempotency-Key` header each entry of a batch of several gets a key of its own, `<key>:<index>`
 * (from 0): one key for different calls would make the second look like a repeat of the first.
 */
import type { JsonRpcResponse } from '../../contracts/mcp';
import { ErrorCode, JsonRpcError, failure, salvageId } from './jsonrpc';

/** A JSON-RPC batch's most entries, and how many of them run at once. */
export const MAX_BATCH_ENTRIES = 100;
export const BATCH_CONCURRENCY = 8;

/** Takes `count` more tokens from the caller's rate-limit budget: how many it got, and when to retry for the rest. */
export type TakeTokens = (count: number) => Promise<{ granted: number; retryAfterSeconds: number }>;

/** Why `raw` is no batch to answer (an invalid request), or undefined when it is one. */
export function batchRefusal(raw: readonly unknown[]): JsonRpcError | undefined {
  if (raw.length === 0) return new JsonRpcError(ErrorCode.INVALID_REQUEST, 'an empty batch is not a request');
  if (raw.length > MAX_BATCH_ENTRIES) return new JsonRpcError(ErrorCode.INVALID_REQUEST, `a batch may hold at most ${MAX_BATCH_ENTRIES} entries, not ${raw.length}`);
  return undefined;
}

export interface BatchAnswers {
  /** in the batch's order; undefined for notifications and client responses */
  answers: (JsonRpcResponse | undefined)[];
  /** set when some entries were refused for want of rate-limit tokens */
  retryAfterSeconds?: number;
}

/** Answers each entry with `answer` (its idempotency key as above), `take` paying for the entries past the first. */
export async function answerBatch(
  raw: readonly unknown[], requestKey: string | undefined, take: TakeTokens | undefined,
  answer: (message: unknown, idempotencyKey: string | undefined) => Promise<JsonRpcResponse | undefined>,
): Promise<BatchAnswers> {
  const answers: (JsonRpcResponse | undefined)[] = new Array(raw.length);
  // the entries past the first, in order, as far as the budget goes
  const grant = take && raw.length > 1 ? await take(raw.length - 1) : { granted: raw.length - 1, retryAfterSeconds: 0 };
  const runnable: number[] = [];
  raw.forEach((message, index) => {
    if (index <= grant.granted) {
      runnable.push(index);
      return;
    }
    answers[index] = failure(salvageId(message), new JsonRpcError(ErrorCode.TOOL_ERROR, `rate limited: this batch entry exceeds the credential's limit; retry in ${grant.retryAfterSeconds} s`));
  });
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, runnable.length) }, async () => {
    while (next < runnable.length) {
      const index = runnable[next++]!;
      const key = requestKey === undefined || raw.length === 1 ? requestKey : `${requestKey}:${index}`;
      answers[index] = await answer(raw[index], key);
    }
  }));
  return { answers, ...(runnable.length < raw.length ? { retryAfterSeconds: grant.retryAfterSeconds } : {}) };
}
