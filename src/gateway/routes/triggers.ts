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
import { INPUTS_REF_FIELD, isInputsReference } from '../../common/inputs-reference';
import type { RunInput } from '../../common/run-types';
import { checkInputs } from '../../runs/input-schema';
import { inputsForRun, runInputFor } from '../../runs/run-input';
import { runIdFor } from '../../runs/run-service';
import { authenticateApiKey, type ApiKeyPrincipal } from '../auth';
import type { GatewayDeps } from '../deps';
import { badRequest, HttpError, notFound, temporalUnavailable } from '../http-error';
import { preferredWaitSeconds } from '../prefer';
import { pollingHandleBody, statusPath, syncResultBody } from '../run-bodies';
import { callTemporal, isTemporalUnavailable } from '../temporal-errors';
import { readTriggerInputs } from '../trigger-input';

/** Polling advice of interface.md section 8: 2 to 5 seconds typically, 10 to 30 for long runs. */
export const RETRY_AFTER_SECONDS = 5;
export const RETRY_AFTER_LONG_RUN_SECONDS = 10;
/** A run still going after this long a wait counts as a long run for the polling advice. */
const LONG_RUN_SECONDS = 30;

export const TRIGGER_METHODS = 'GET, POST';

const WaitHeaderSchema = z.enum(['true', 'false']).optional();
const IdempotencyKeySchema = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 visible ASCII characters').optional();

export type TriggerKind = 'api' | 'webhook';

function header<T>(ctx: Context, name: string, schema: z.ZodType<T>, message: string): T {
  const parsed = schema.safeParse(ctx.get(name) || undefined);
  if (!parsed.success) throw badRequest('invalid_header', `${name} ${message}`);
  return parsed.data;
}

export function retryAfterSeconds(waitedSeconds: number): number {
  return waitedSeconds >= LONG_RUN_SECONDS ? RETRY_AFTER_LONG_RUN_SECONDS : RETRY_AFTER_SECONDS;
}

/**
 * How long to wait: `x-api-wait: true` waits the configured window; `Prefer: wait=N` waits N
 * seconds, at most the window (RFC 7240; `Preference-Applied` says what was applied). An explicit
 * `x-api-wait: false` wins over a preference.
 */
function waitPlan(ctx: Context, windowSeconds: number): { waitSeconds?: number; applied?: string } {
  const explicit = header(ctx, 'x-api-wait', WaitHeaderSchema, 'must be "true" or "false"');
  if (explicit === 'false') return {};
  const preferred = preferredWaitSeconds(ctx.get('Prefer'));
  if (preferred !== undefined) {
    const waitSeconds = Math.min(preferred, windowSeconds);
    return { waitSeconds, applied: `wait=${waitSeconds}` };
  }
  return explicit === 'true' ? { waitSeconds: windowSeconds } : {};
}

/** Inputs too large for a Temporal payload go to the blob store; the run gets a reference. */
/** Inputs as the caller sent them: a reference to stored inputs is read back. */
async function readableInputs(deps: GatewayDeps, inputs: RunInput['inputs']): Promise<RunInput['inputs']> {
  if (!isInputsReference(inputs)) return inputs;
  const stored = await deps.blobs.read(inputs[INPUTS_REF_FIELD].key);
  return stored ? (JSON.parse(stored.toString('utf8')) as RunInput['inputs']) : inputs;
}

async function removeAll(deps: GatewayDeps, keys: string[]): Promise<void> {
  const results = await Promise.allSettled(keys.map((key) => deps.blobs.remove(key)));
  for (const result of results) {
    if (result.status === 'rejected') deps.log.warn('could not remove a blob of a refused trigger call', { error: result.reason });
  }
}

/**
 * After a start that failed. UNAVAILABLE or DEADLINE_EXCEEDED (or an error we cannot read) may come
 * after the server created the workflow, and that run reads this call's stored inputs and
 * attachments: they are removed only once Temporal says it has no such workflow, and the start's
 * error then stands. When the run exists, this returns and the call goes on as started: the caller
 * gets its run. When Temporal cannot tell (unreachable), the blobs stay, since a few orphaned files
 * cost less than a run whose files are gone, and the caller gets 503 naming the run
 * (`X-Pf-Run-Id`): its status says whether it started (404: it did not), and a retry with the same
 * Idempotency-Key is safe either way. Not covered: a start the server is still committing when
 * describe answers (a DEADLINE_EXCEEDED mid-write); that window is short and rare.
 */
async function settleFailedStart(deps: GatewayDeps, runId: string, automationId: string, storedKeys: string[], startError: unknown): Promise<void> {
  let exists: boolean;
  try {
    exists = await deps.runs.exists(runId);
  } catch (err) {
    deps.log.warn('a run start failed and Temporal could not say whether the run exists; its stored files are kept', {
      runId, error: startError, describeError: err, blobs: storedKeys,
    });
    throw new HttpError(503, 'temporal_unavailable',
      `the workflow service did not confirm whether run ${runId} started; poll its status before calling again (404 means it did not start)`,
      { expose: true, headers: { 'Retry-After': String(RETRY_AFTER_SECONDS), 'X-Pf-Run-Id': runId, 'X-Pf-Automation-Id': automationId } });
  }
  if (exists) {
    deps.log.warn('a run start failed but the run exists; answering as started', { runId, error: startError });
    return;
  }
  await removeAll(deps, storedKeys);
  if (isTemporalUnavailable(startError)) throw temporalUnavailable();
  throw startError;
}

/** Every trigger form: authenticate, resolve the trigger, read and check the inputs, start, answer. */
async function handleTrigger(ctx: Context, deps: GatewayDeps, kind: TriggerKind, apiKey: string): Promise<void> {
  if (ctx.method === 'HEAD') {
    throw new HttpError(405, 'method_not_allowed', `HEAD is not allowed here (it would start a run); allowed: ${TRIGGER_METHODS}`, { headers: { Allow: TRIGGER_METHODS } });
  }
  const principal: ApiKeyPrincipal = await authenticateApiKey(deps.registry, apiKey);
  const triggerId = ctx.params.triggerId ?? '';
  const trigger = await deps.registry.triggers.get(triggerId);
  // Another organization's trigger is reported exactly like a missing one.
  if (!trigger || trigger.orgId !== principal.orgId) throw notFound('unknown_trigger', `no trigger ${triggerId}`);
  const version = await deps.registry.workflows.getLatestVersion(trigger.workflowId);
  if (!version) throw new HttpError(409, 'not_published', `the workflow of trigger ${triggerId} has no published version`);
  const plan = waitPlan(ctx, deps.config.syncWaitSeconds);
  const idempotencyKey = header(ctx, 'Idempotency-Key', IdempotencyKeySchema, 'must be 1 to 255 visible ASCII characters');

  const received = await readTriggerInputs(ctx, {
    multipart: kind === 'api', blobs: deps.blobs, signer: deps.signer, orgId: principal.orgId, limits: TRIGGER_LIMITS,
  });
  // Chosen before start, so a start that fails can still ask Temporal about this run.
  const runId = runIdFor(principal.orgId, trigger.id, idempotencyKey);
  let runInput: Omit<RunInput, 'runId'>;
  try {
    const problem = checkInputs({ cacheKey: `${version.workflowId}@${version.version}`, schema: version.definition.inputSchema, coerce: received.textual },
      received.inputs === '' ? {} : received.inputs);
    if (problem) throw new HttpError(problem.code === 'invalid_inputs' ? 422 : 409, problem.code, problem.message);
    const { inputs, storedKey } = await inputsForRun(deps.blobs, principal.orgId, received.inputs);
    if (storedKey) received.storedKeys.push(storedKey);
    runInput = runInputFor({ orgId: principal.orgId, version, triggerId: trigger.id, startedBy: principal.keyId, inputs });
  } catch (err) {
    await removeAll(deps, received.storedKeys);
    throw err;
  }
  let replayed = false;
  // The start failed but the run exists; with a key it may be an earlier call's run, and this
  // call's files are then unused (kept all the same: we cannot tell).
  let recovered = false;
  try {
    replayed = (await deps.runs.start(runInput, idempotencyKey, runId)).existing;
  } catch (err) {
    await settleFailedStart(deps, runId, version.workflowId, received.storedKeys, err);
    recovered = true;
  }
  if (replayed) {
    // A retried call: the first call's run keeps the first call's files; this call's are unused.
    ctx.set('Idempotent-Replayed', 'true');
    await removeAll(deps, received.storedKeys);
  }
  ctx.set('X-Pf-Run-Id', runId);
  ctx.set('X-Pf-Automation-Id', version.workflowId);
  if (plan.applied) {
    ctx.set('Preference-Applied', plan.applied);
    ctx.vary('Prefer');
  }

  if (plan.waitSeconds === undefined) {
    ctx.status = 200;
    ctx.body = '';
    return;
  }
  const outcome = plan.waitSeconds > 0 ? await callTemporal(() => deps.runs.waitFor(runId, plan.waitSeconds! * 1000)) : { done: false as const };
  if (outcome.done) {
    ctx.status = 200;
    // A replayed (or recovered) call answers with the run's own inputs: this call's attachments were not kept.
    const inputs = replayed || recovered ? await readableInputs(deps, await callTemporal(() => deps.runs.startedInputs(runId))) : received.inputs;
    ctx.body = await syncResultBody(outcome.view, inputs, { blobs: deps.blobs, signer: deps.signer, resultUrlTtlSeconds: deps.config.resultUrlTtlSeconds });
    return;
  }
  const retryAfter = retryAfterSeconds(plan.waitSeconds);
  ctx.status = 202;
  ctx.set('Retry-After', String(retryAfter));
  ctx.set('Location', statusPath(apiKey, version.workflowId, runId));
  ctx.body = pollingHandleBody(runId, version.workflowId, apiKey, retryAfter, plan.waitSeconds);
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
  const api = '/ext/triggers/:triggerId';
  const webhook = '/ext/webhook/:apiKey/triggers/:triggerId';
  const apiHandler = (ctx: Context) => handleTrigger(ctx, deps, 'api', ctx.get('X-API-KEY'));
  // The webhook key is a credential in the path: the request log shows the route pattern only.
  const webhookHandler = (ctx: Context) => handleTrigger(ctx, deps, 'webhook', String(ctx.params.apiKey ?? ''));
  router.get(api, apiHandler);
  router.post(api, apiHandler);
  router.all(api, methodNotAllowed);
  router.get(webhook, webhookHandler);
  router.post(webhook, webhookHandler);
  router.all(webhook, methodNotAllowed);
  return router;
}
