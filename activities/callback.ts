/**
 * The postCallback activity: one attempt at POSTing a run's completion callback, signed in the
 * Standard Webhooks format with the organization's secret (`webhook-id` is the same on every
 * attempt, so a receiver can drop a repeat; `webhook-timestamp` and `webhook-signature` are made
 * per attempt). A 2xx answer delivers it; anything else throws and Temporal retries with backoff
 * (deliverRunCallback's policy). The URL goes through the outbound guard: a private address, when
 * not allowed, and 410 Gone are not retried.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { messageOf } from '../src/common/narrow';
import { CALLBACK_REFUSED, type CallbackRequest } from '../src/common/run-types';
import { httpStream, OutboundRefusedError } from '../src/net/http-client';
import type { WebhookSecrets } from '../src/runs/webhook-secrets';
import type { SignedUrlSigner } from '../src/crypto/signed-urls';

export interface CallbackDependencies {
  webhookSecrets?: WebhookSecrets;
  /** signs the result links in the body; without it the body carries inline results only */
  signer?: SignedUrlSigner;
  resultUrlTtlSeconds?: number;
  allowPrivateNetwork: boolean;
}

const TIMEOUT_MS = 15_000;

const EVENT_TYPES = { COMPLETE: 'run.completed', FAILED: 'run.failed', TIMEOUT: 'run.timeout' } as const;

/** The JSON body of a callback (docs/http-api.md "Completion callbacks"). */
export function callbackBody(request: CallbackRequest, deps: Pick<CallbackDependencies, 'signer' | 'resultUrlTtlSeconds'>) {
  const { run } = request;
  return {
    type: EVENT_TYPES[request.status],
    timestamp: request.ended,
    data: {
      runId: run.runId,
      automationId: run.automationId,
      automationVersion: run.automationVersion,
      automationName: run.automationName,
      triggerId: run.triggerId,
      started: run.started,
      ended: request.ended,
      status: request.status,
      ...(request.error ? { error: request.error } : {}),
      results: request.outcomes.map((o) => ({
        stepIndex: o.stepIndex,
        stepVersion: run.stepMap[String(o.stepIndex)] ?? 1,
        status: o.status,
        resultType: o.resultType,
        result: o.result,
        truncated: o.truncated,
        exitCode: o.exitCode,
        duration: o.duration,
        ...(deps.signer ? {
          resultUrls: Object.fromEntries(Object.entries(o.files).map(([name, file]) =>
            [name, { url: deps.signer!.sign(file.key, deps.resultUrlTtlSeconds ?? 3600, { type: file.mimeType }), mimeType: file.mimeType, size: file.size }])),
        } : {}),
      })),
    },
  };
}

export function callbackMessageId(runId: string): string {
  return `msg_${runId}`;
}

export function createPostCallback(deps: CallbackDependencies) {
  return async function postCallback(request: CallbackRequest): Promise<{ attempt: number; status: number }> {
    const { attempt } = Context.current().info;
    const fail = (message: string, refused = false): never => {
      throw ApplicationFailure.create({ message, type: refused ? CALLBACK_REFUSED : 'CALLBACK_FAILED', nonRetryable: refused, details: [{ attempt }] });
    };
    if (!deps.webhookSecrets) fail('this worker has no webhook secrets to sign callbacks with', false);
    const body = JSON.stringify(callbackBody(request, deps));
    const timestamp = new Date();
    const messageId = callbackMessageId(request.run.runId);
    const signature = await deps.webhookSecrets!.sign(request.run.orgId, messageId, timestamp, body);
    let status: number;
    try {
      const answer = await httpStream({
        method: 'POST',
        url: request.url,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'flowgate-callback/1',
          'webhook-id': messageId,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
        timeoutMs: TIMEOUT_MS,
        maxRedirects: 0,
        allowPrivateNetwork: deps.allowPrivateNetwork,
        signal: Context.current().cancellationSignal,
      });
      status = answer.status;
      // The receiver's answer body means nothing here.
      answer.body.destroy();
    } catch (err) {
      if (err instanceof OutboundRefusedError) return fail(`the callback URL is refused: ${err.message}`, true);
      return fail(`the callback could not be sent: ${messageOf(err)}`);
    }
    if (status === 410) return fail('the receiver answered 410 Gone: no more attempts', true);
    if (status < 200 || status > 299) return fail(`the receiver answered ${status}`);
    return { attempt, status };
  };
}
