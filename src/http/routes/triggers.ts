/**
 * The trigger surface (interface.md 4.1, 4.2): the API trigger `/ext/triggers/{triggerId}` with
 * `X-API-KEY`, and the webhook trigger `/ext/webhook/{apiKey}/triggers/{triggerId}` (the key in the
 * path, JSON and form bodies only). Both take POST (query parameters merge into the body's inputs)
 * and GET (query parameters are the inputs). Asynchronous by default; `x-api-wait: true` or
 * `Prefer: wait=N` waits for the result within the window, then answers 202 with a polling handle
 * while the run goes on.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { TRIGGER_LIMITS } from '../../attachments/limits';
import { buildRunMemo } from '../../common/run-memo';
import { CALLBACK_URL_HEADER, CallbackUrlSchema } from '../../runs/callback-url';
import { StartUnconfirmedError, type StartedRun, type TriggerService, type TriggerRefusal } from '../../runs/trigger-service';
import { permissionDenied, authenticateApiKey, type ApiKeyPrincipal } from '../auth';
import { roleHas } from '../../people/roles';
import type { GatewayDeps } from '../deps';
import { badRequest, HttpError, refusalError } from '../http-error';
import { preferredWaitSeconds } from '../prefer';
import { pollingHandleBody, statusPath, syncResultBody } from '../../contracts/run-bodies';
import { temporalRefusal } from '../temporal-errors';
import { readTriggerInputs } from '../trigger-input';
import { answerShapedCall, answerVerifiedCall, TRIGGER_REFUSAL_STATUS } from '../webhook-delivery';

/** Polling advice of interface.md section 8: 2 to 5 seconds typically, 10 to 30 for long runs. */
export const RETRY_AFTER_SECONDS = 5;
export const RETRY_AFTER_LONG_RUN_SECONDS = 10;
/** A run still going after this long a wait counts as a long run for the polling advice. */
const LONG_RUN_SECONDS = 30;

export const TRIGGER_METHODS = 'GET, POST';

export const WaitHeaderSchema = z.enum(['true', 'false']).optional();
export const IdempotencyKeySchema = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 visible ASCII characters').optional();

export type TriggerKind = 'api' | 'webhook';

function header<T>(ctx: Context, name: string, schema: z.ZodType<T>, message: string, normalize: (value: string) => string = (value) => value): T {
  const value = ctx.get(name);
  const parsed = schema.safeParse(value === '' ? undefined : normalize(value));
  if (!parsed.success) throw badRequest('invalid_header', `${name} ${message}`);
  return parsed.data;
}

export function retryAfterSeconds(waitedSeconds: number): number {
  return waitedSeconds >= LONG_RUN_SECONDS ? RETRY_AFTER_LONG_RUN_SECONDS : RETRY_AFTER_SECONDS;
}

/**
 * How long to wait: `x-api-wait: true` (in any case: `TRUE`, `True`) waits the configured window; `Prefer: wait=N` waits N
 * seconds, at most the window (RFC 7240; `Preference-Applied` says what was applied). An explicit
 * `x-api-wait: false` wins over a preference.
 */
function waitPlan(ctx: Context, windowSeconds: number): { waitSeconds?: number; applied?: string } {
  const explicit = header(ctx, 'x-api-wait', WaitHeaderSchema, 'must be "true" or "false"', (value) => value.toLowerCase());
  if (explicit === 'false') return {};
  const preferred = preferredWaitSeconds(ctx.get('Prefer'));
  if (preferred !== undefined) {
    const waitSeconds = Math.min(preferred, windowSeconds);
    return { waitSeconds, applied: `wait=${waitSeconds}` };
  }
  return explicit === 'true' ? { waitSeconds: windowSeconds } : {};
}


function refused(refusal: TriggerRefusal): HttpError {
  return refusalError(TRIGGER_REFUSAL_STATUS, refusal);
}

/** The HTTP face of a start that failed: Temporal unreachable or busy, or unsure whether the run exists. */
function startFailed(err: unknown): unknown {
  if (err instanceof StartUnconfirmedError) {
    return new HttpError(503, 'temporal_unavailable',
      `the workflow service did not confirm whether run ${err.runId} started; poll its status before calling again (404 means it did not start)`,
      { expose: true, headers: { 'Retry-After': String(RETRY_AFTER_SECONDS), 'X-Pf-Run-Id': err.runId, 'X-Pf-Automation-Id': err.automationId } });
  }
  return temporalRefusal(err) ?? err;
}

/**
 * Before a synchronous wait: an informational 103 carrying the run's IDs (and its status link),
 * so a caller whose connection drops during the wait still knows which run to poll instead of
 * starting another. Clients that ignore 1xx answers never see it. HTTP/1.0 has no 1xx.
 */
function announceRun(ctx: Context, statusLink: string, runId: string, automationId: string): void {
  if (ctx.req.httpVersionMajor < 1 || (ctx.req.httpVersionMajor === 1 && ctx.req.httpVersionMinor < 1) || ctx.res.headersSent) return;
  ctx.res.writeEarlyHints({ link: `<${statusLink}>; rel="monitor"`, 'x-pf-run-id': runId, 'x-pf-automation-id': automationId });
}

/**
 * Every trigger form: authenticate, resolve the trigger, read the inputs, start (TriggerService),
 * answer. A synchronous call's wait window counts from the moment the call has been received (its
 * body in: a large upload on a slow link is the client's time, not the wait), not from the start's
 * answer: under a burst the start itself takes seconds, and the caller still gets its answer (the
 * 202 handle at the latest) when the window ends, or as soon as the start answers if that is later.
 */
async function handleTrigger(ctx: Context, deps: GatewayDeps, service: TriggerService, kind: TriggerKind, apiKey: string): Promise<void> {
  if (ctx.method === 'HEAD') {
    throw new HttpError(405, 'method_not_allowed', `HEAD is not allowed here (it would start a run); allowed: ${TRIGGER_METHODS}`, { headers: { Allow: TRIGGER_METHODS } });
  }
  const principal: ApiKeyPrincipal = await authenticateApiKey(deps.registry, apiKey);
  // a key limited to a role starts runs only when the role may (docs/people-and-roles.md)
  if (principal.role && !roleHas(principal.role, 'runs.operate')) throw permissionDenied({ role: principal.role }, 'runs.operate');
  const target = await service.resolve(principal.orgId, ctx.params.triggerId ?? '');
  if (!target.ok) throw refused(target);
  const plan = waitPlan(ctx, deps.config.syncWaitSeconds);
  const idempotencyKey = header(ctx, 'Idempotency-Key', IdempotencyKeySchema, 'must be 1 to 255 visible ASCII characters');
  const callbackUrl = header(ctx, CALLBACK_URL_HEADER, CallbackUrlSchema.optional(), 'must be an absolute http or https URL without user or password (at most 2048 characters)');

  const received = await readTriggerInputs(ctx, {
    multipart: kind === 'api', blobs: deps.blobs, signer: deps.signer, orgId: principal.orgId, limits: TRIGGER_LIMITS,
  });
  // a debounced or batched trigger: the call joins its window (docs/webhooks.md)
  if (target.trigger.shaping) return answerShapedCall(ctx, deps, target.trigger, received.inputs, idempotencyKey);
  const accepted = Date.now();
  const run = await service.prepare(target, { inputs: received.inputs, coerce: received.textual, startedBy: principal.keyId, storedKeys: received.storedKeys, callbackUrl });
  if (!run.ok) throw refused(run);
  let started: StartedRun;
  try {
    // a caller that waits gets its run's first step sooner when this process's worker takes it at once
    started = await service.start(deps.runs, run, idempotencyKey, { eager: (plan.waitSeconds ?? 0) > 0 });
  } catch (err) {
    throw startFailed(err);
  }
  const { runId, replayed, recovered } = started;
  const automationId = run.input.automationId;
  if (replayed) ctx.set('Idempotent-Replayed', 'true');
  ctx.set('X-Pf-Run-Id', runId);
  ctx.set('X-Pf-Automation-Id', automationId);
  if (plan.applied) {
    ctx.set('Preference-Applied', plan.applied);
    ctx.vary('Prefer');
  }

  if (plan.waitSeconds === undefined) {
    ctx.status = 200;
    ctx.body = '';
    return;
  }
  if (plan.waitSeconds > 0) announceRun(ctx, statusPath(apiKey, automationId, runId), runId, automationId);
  // A run this call started has the memo built here: its completed view needs no describe.
  const memo = replayed || recovered ? undefined : buildRunMemo(run.input);
  const windowLeftMs = accepted + plan.waitSeconds * 1000 - Date.now();
  // The run is started: from here a Temporal that fails to answer makes this a 202 with the polling
  // handle (the run goes on), never a 503, which would say nothing was done.
  const finished = windowLeftMs > 0 ? await answerWhenDone(deps, runId, async () => {
    const outcome = await deps.runs.waitFor(runId, windowLeftMs, memo);
    if (!outcome.done) return undefined;
    // A replayed (or recovered) call answers with the run's own inputs: this call's attachments were not kept.
    const inputs = replayed || recovered ? await service.startedInputs(deps.runs, runId) : received.inputs;
    return { view: outcome.view, inputs };
  }) : undefined;
  if (finished) {
    deps.metrics?.syncAnswer(200);
    ctx.status = 200;
    ctx.body = await syncResultBody(finished.view, finished.inputs, { blobs: deps.blobs, signer: deps.signer, resultUrlTtlSeconds: deps.config.resultUrlTtlSeconds });
    return;
  }
  const retryAfter = retryAfterSeconds(plan.waitSeconds);
  deps.metrics?.syncAnswer(202);
  ctx.status = 202;
  ctx.set('Retry-After', String(retryAfter));
  ctx.set('Location', statusPath(apiKey, automationId, runId));
  ctx.body = pollingHandleBody(runId, automationId, apiKey, retryAfter, plan.waitSeconds);
}

/** A started run's synchronous answer, or undefined (answer 202) when it is not done or waiting for it failed (Temporal slow or away). */
async function answerWhenDone<T>(deps: GatewayDeps, runId: string, fn: () => Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    deps.log.warn('a synchronous call could not wait for its started run: answered with the polling handle', { runId, error: err instanceof Error ? err.message : String(err) });
    return undefined;
  }
}

function methodNotAllowed(ctx: Context): void {
  if (ctx.method === 'OPTIONS') {
    ctx.status = 204;
    ctx.set('Allow', TRIGGER_METHODS);
    return;
  }
  throw new HttpError(405, 'method_not_allowed', `${ctx.method} is not allowed here; allowed: ${TRIGGER_METHODS}`, { headers: { Allow: TRIGGER_METHODS } });
}

export function triggerRoutes(deps: GatewayDeps): Router {
  const router = new Router();
  const service = deps.triggers;
  const api = '/ext/triggers/:triggerId';
  const webhook = '/ext/webhook/:apiKey/triggers/:triggerId';
  const apiHandler = async (ctx: Context) => {
    // a verified trigger's call carries the sender's signature instead of an API key (docs/webhooks.md)
    if (await answerVerifiedCall(ctx, deps)) return;
    await handleTrigger(ctx, deps, service, 'api', ctx.get('X-API-KEY'));
  };
  // The webhook key is a credential in the path: the request log shows the route pattern only.
  const webhookHandler = (ctx: Context) => handleTrigger(ctx, deps, service, 'webhook', String(ctx.params.apiKey ?? ''));
  router.get(api, apiHandler);
  router.post(api, apiHandler);
  router.all(api, methodNotAllowed);
  router.get(webhook, webhookHandler);
  router.post(webhook, webhookHandler);
  router.all(webhook, methodNotAllowed);
  return router;
}
