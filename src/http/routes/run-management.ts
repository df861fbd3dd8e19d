/**
 * The management API's live-run calls (admin bearer token, the token's organization): disable and
 * enable a trigger, re-run or resume a run, decide its approval, and read or rotate the organization's completion
 * callback signing secret. Status long polls and streams are in live-status.ts.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { RestartRefusal, RestartRefusalCode } from '../../runs/run-restarts';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { forbidden, refusalError, type HttpError, type RefusalStatus } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { settled } from '../management-status';
import { callTemporal } from '../temporal-errors';
import { adminOf as admin, type GatewayRouterContext, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';
import { operatorOf, ownBrief, ownRun } from '../run-access';
import { callDecide, decisionAnswer, DecisionBodySchema, decisionRefusalError as decisionRefused, decisionReportBody } from '../decisions';
import { DecisionAcceptedSchema, DecisionRecordedSchema, DecisionReportSchema, RestartedRunSchema, TriggerSchema, WebhookSecretSchema } from '../../contracts/http-bodies';
import { PauseAnswerSchema, RunBatchAcceptedSchema, RunBatchBodySchema, RunBatchSchema } from '../../contracts/operator-bodies';
import { BATCH_CONFIRM_ABOVE, BATCH_LIMIT_DEFAULT } from '../../common/run-batch';
import { conflict, notFound, temporalUnavailable } from '../http-error';
import { mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest } from '../openapi-kit';

export const RerunBodySchema = z.object({ version: z.enum(['latest', 'same']).default('latest') }).strict();
export const PauseBodySchema = z.object({ reason: z.string().max(500).optional() }).strict().meta({ id: 'PauseBody' });

const trigger = id('id', 'a trigger');
const runId = id('runId', 'a run');
const org = { type: 'org', id: { org: true } } as const;

export const RUN_MANAGEMENT_OPERATIONS = {
  disableTrigger: {
    method: 'post', path: '/api/v1/triggers/:id/disable', permission: 'triggers.write', audit: on('trigger.disabled', 'trigger', 'id'),
    tags: ['management'], summary: 'Disable a trigger: its calls answer 409 trigger_disabled (its schedule keeps firing into that)', security,
    requestParams: { path: trigger }, responses: { '200': json(TriggerSchema, 'the trigger'), ...errors(401, 404) },
  },
  enableTrigger: {
    method: 'post', path: '/api/v1/triggers/:id/enable', permission: 'triggers.write', audit: on('trigger.enabled', 'trigger', 'id'),
    tags: ['management'], summary: 'Enable a disabled trigger', security, requestParams: { path: trigger }, responses: { '200': json(TriggerSchema, 'the trigger'), ...errors(401, 404) },
  },
  rerunRun: {
    method: 'post', path: '/api/v1/runs/:runId/rerun', permission: 'runs.operate', audit: on('run.rerun', 'run', 'runId', ['runId']),
    tags: ['management'], summary: 'A new run with the same inputs, on the latest (default) or the same version', security,
    requestParams: { path: runId }, requestBody: jsonRequest(RerunBodySchema),
    responses: { '201': json(RestartedRunSchema, 'the new run'), ...errors(400, 401, 404, 409, 415, 422, 503) },
  },
  resumeRun: {
    method: 'post', path: '/api/v1/runs/:runId/resume', permission: 'runs.operate', audit: on('run.resumed', 'run', 'runId', ['runId']),
    tags: ['management'], summary: 'A new run of a FAILED or TIMEOUT run from its first step that did not complete, reusing the earlier outcomes', security,
    requestParams: { path: runId }, responses: { '201': json(RestartedRunSchema, 'the new run'), ...errors(401, 404, 409, 422, 503) },
  },
  pauseRun: {
    method: 'post', path: '/api/v1/runs/:runId/pause', permission: 'runs.operate', audit: on('run.paused', 'run', 'runId', ['applied']),
    tags: ['management'], summary: 'Pause a run at its next step boundary: PAUSED with waitingOn {kind: "operator"} until unpaused', security,
    requestParams: { path: runId }, requestBody: jsonRequest(PauseBodySchema),
    responses: {
      '200': json(PauseAnswerSchema, 'the run took the pause'),
      '202': json(PauseAnswerSchema, 'the run did not answer in time: the pause is in its history and taken when it next runs'),
      ...errors(400, 401, 404, 409, 415, 503),
    },
  },
  unpauseRun: {
    method: 'post', path: '/api/v1/runs/:runId/unpause', permission: 'runs.operate', audit: on('run.unpaused', 'run', 'runId', ['applied']),
    tags: ['management'], summary: 'Lift an operator\'s pause: the run starts its next step', security, requestParams: { path: runId },
    responses: {
      '200': json(PauseAnswerSchema, 'the run took the unpause'),
      '202': json(PauseAnswerSchema, 'the run did not answer in time: the unpause is in its history and taken when it next runs'),
      ...errors(401, 404, 409, 503),
    },
  },
  startRunBatch: {
    method: 'post', path: '/api/v1/runs/batch', permission: 'runs.operate',
    audit: { action: 'run_batch.started', target: { type: 'org', id: { org: true } }, answerFields: ['batchId', 'action', 'matched', 'count'] },
    tags: ['management'], summary: `Cancel, rerun, resume, pause or unpause the runs a filter selects, as one tracked batch (more than ${BATCH_CONFIRM_ABOVE} runs need confirm: true)`,
    security, requestBody: jsonRequest(RunBatchBodySchema),
    responses: {
      '200': json(RunBatchAcceptedSchema, 'a dry run: how many runs the batch would act on'),
      '202': json(RunBatchAcceptedSchema, 'the batch is started: follow statusUrl'),
      ...errors(400, 401, 409, 415, 503),
    },
  },
  getRunBatch: {
    method: 'get', path: '/api/v1/runs/batch/:batchId', permission: 'read',
    tags: ['management'], summary: 'A batch\'s progress and each run\'s outcome', security, requestParams: { path: id('batchId', 'a batch') },
    responses: { '200': json(RunBatchSchema, 'the batch'), ...errors(401, 404, 503) },
  },
  decideRunApproval: {
    method: 'post', path: '/api/v1/runs/:runId/approval', permission: 'approvals.decide', audit: on('approval.decided', 'run', 'runId', ['decisionId', 'applied']),
    tags: ['approvals'], summary: 'Approve or reject the approval the run waits on; a member decides as themselves (their e-mail must be an approver)',
    security, requestParams: { path: runId }, requestBody: jsonRequest(DecisionBodySchema),
    responses: {
      '200': json(DecisionAcceptedSchema, 'the run took the decision'),
      '202': json(DecisionRecordedSchema, 'the run did not answer in time: the decision is recorded and applied, or refused, when it resumes'),
      ...errors(400, 401, 403, 404, 409, 415, 503),
    },
  },
  getRunDecisionOutcome: {
    method: 'get', path: '/api/v1/runs/:runId/approval/:decisionId', permission: 'read',
    tags: ['approvals'], summary: 'What became of a decision this API answered with its ID', security, requestParams: { path: runId.extend({ decisionId: z.string() }) },
    responses: { '200': json(DecisionReportSchema, 'the decision\'s outcome'), ...errors(401, 404, 503) },
  },
  getWebhookSecret: {
    method: 'get', path: '/api/v1/webhook-secret', permission: 'org.manage',
    tags: ['callbacks'], summary: 'The organization\'s completion-callback signing secret (created on first use)', security,
    responses: { '200': json(WebhookSecretSchema, 'the secret'), ...errors(401) },
  },
  rotateWebhookSecret: {
    method: 'post', path: '/api/v1/webhook-secret/rotate', permission: 'org.manage', audit: { action: 'webhook_secret.rotated', target: org },
    tags: ['callbacks'], summary: 'A new signing secret; the previous one signs beside it for 24 hours', security,
    responses: { '201': json(WebhookSecretSchema, 'the new secret'), ...errors(401) },
  },
} satisfies Operations;
const OPS = RUN_MANAGEMENT_OPERATIONS;

const REFUSAL_STATUS: RefusalStatus<RestartRefusalCode> = {
  NOT_RESUMABLE: { status: 409, code: 'not_resumable' },
  WORKFLOW_GONE: { status: 409, code: 'workflow_deleted' },
  VERSION_GONE: { status: 409, code: 'version_unavailable' },
  INPUTS_GONE: { status: 409, code: 'inputs_unavailable' },
  INVALID_INPUTS: { status: 422, code: 'invalid_inputs' },
  STEPS_UNREAD: { status: 503, code: 'run_unreadable' },
};

function refused(refusal: RestartRefusal): HttpError {
  return refusalError(REFUSAL_STATUS, refusal);
}

export function runManagementRoutes(deps: GatewayDeps): Router<GatewayState> {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  router.use(requireAdmin(deps), jsonBody());
  const { restarts } = deps;

  const setDisabled = (disabled: boolean) => async (ctx: Context): Promise<void> => {
    ctx.body = settled(await deps.management.triggers.setDisabled(admin(ctx).orgId, ctx.params.id ?? '', disabled));
  };
  mount(router, OPS.disableTrigger, setDisabled(true));
  mount(router, OPS.enableTrigger, setDisabled(false));

  mount(router, OPS.rerunRun, async (ctx) => {
    const { version } = parse(RerunBodySchema, body(ctx));
    const view = await ownRun(ctx, deps);
    const started = await callTemporal(() => restarts.rerun(view, version));
    if (!started.ok) throw refused(started);
    ctx.status = 201;
    ctx.body = { ...started, ok: undefined, origin: { kind: 'rerun', runId: view.runId }, statusUrl: `/api/v1/runs/${started.runId}` };
  });

  const setPaused = (paused: boolean) => async (ctx: GatewayRouterContext): Promise<void> => {
    const { reason } = paused ? parse(PauseBodySchema, body(ctx)) : { reason: undefined };
    const brief = await ownBrief(ctx, deps);
    const outcome = await callTemporal(() => deps.runs.pause(brief, { paused, by: operatorOf(ctx), ...(reason ? { reason } : {}) }));
    if (!outcome.ok) throw conflict(outcome.refusal === 'CLOSED' ? 'run_closed' : 'pause_refused', outcome.message);
    ctx.status = outcome.applied ? 200 : 202;
    ctx.body = outcome.applied
      ? { runId: brief.runId, paused: outcome.answer.paused, applied: true, status: outcome.answer.status, ...(outcome.answer.pause ? { operatorPause: outcome.answer.pause } : {}) }
      : { runId: brief.runId, paused, applied: false };
  };
  mount(router, OPS.pauseRun, setPaused(true));
  mount(router, OPS.unpauseRun, setPaused(false));

  mount(router, OPS.startRunBatch, async (ctx) => {
    const request = parse(RunBatchBodySchema, body(ctx));
    const batches = deps.batches;
    if (!batches) throw temporalUnavailable();
    const { orgId } = admin(ctx);
    const limit = request.limit ?? BATCH_LIMIT_DEFAULT;
    const selection = await callTemporal(() => batches.choose(orgId, request.filter, limit));
    const matched = selection.runIds.length;
    if (request.dryRun) {
      ctx.body = { action: request.action, dryRun: true, count: matched, limit, scanned: selection.scanned, capped: selection.capped };
      return;
    }
    if (matched > BATCH_CONFIRM_ABOVE && request.confirm !== true) {
      throw conflict('confirmation_required', `the batch would act on ${matched} runs (more than ${BATCH_CONFIRM_ABOVE}): send it again with confirm: true`);
    }
    const batchId = await callTemporal(() => batches.start(orgId, {
      action: request.action, filter: request.filter, limit, by: operatorOf(ctx), ...(request.reason ? { reason: request.reason } : {}),
    }));
    ctx.status = 202;
    ctx.set('Location', `/api/v1/runs/batch/${batchId}`);
    ctx.body = { batchId, action: request.action, matched, limit, statusUrl: `/api/v1/runs/batch/${batchId}` };
  });

  mount(router, OPS.getRunBatch, async (ctx) => {
    const batches = deps.batches;
    if (!batches) throw temporalUnavailable();
    const report = await callTemporal(() => batches.read(admin(ctx).orgId, ctx.params.batchId ?? ''));
    if (!report) throw notFound('unknown_batch', `no batch ${ctx.params.batchId}`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = report;
  });

  mount(router, OPS.resumeRun, async (ctx) => {
    const view = await ownRun(ctx, deps);
    const started = await callTemporal(() => restarts.resume(view));
    if (!started.ok) throw refused(started);
    ctx.status = 201;
    ctx.body = { ...started, ok: undefined, origin: { kind: 'resume', runId: view.runId }, statusUrl: `/api/v1/runs/${started.runId}` };
  });

  /**
   * A decision on the approval the run waits on. A member decides as themselves (their e-mail is
   * the approver, so the step's approvers list must name them: an approver decides only what is
   * addressed to them); an admin token decides as today (optionally naming an approver).
   */
  mount(router, OPS.decideRunApproval, async (ctx) => {
    const decision = parse(DecisionBodySchema, body(ctx));
    const principal = admin(ctx);
    const { member } = principal;
    if (member && decision.approver !== undefined && decision.approver.toLowerCase() !== member.email) {
      throw forbidden(`a member decides as themselves (${member.email}), not as ${decision.approver}`);
    }
    const run = await ownBrief(ctx, deps);
    const outcome = await callDecide(() => deps.runs.decide(run, {
      ...decision, via: 'api',
      ...(member ? { approver: member.email, actor: `member:${member.id}` } : {}),
    }));
    if (!outcome.ok) throw decisionRefused(outcome.refusal, outcome.message);
    const answer = decisionAnswer({ runId: run.runId, automationId: run.memo.automationId }, outcome, `/api/v1/runs/${encodeURIComponent(run.runId)}/approval/${outcome.decisionId}`);
    ctx.status = answer.status;
    if (answer.location) ctx.set('Location', answer.location);
    ctx.body = answer.body;
  });
  // What became of a decision this API answered with its ID (202: recorded, to be applied).
  mount(router, OPS.getRunDecisionOutcome, async (ctx) => {
    const view = await ownRun(ctx, deps);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await decisionReportBody(deps, view, ctx.params.decisionId ?? '');
  });

  const secrets = deps.webhookSecrets;
  if (secrets) {
    mount(router, OPS.getWebhookSecret, async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await secrets.read(admin(ctx).orgId);
    });
    mount(router, OPS.rotateWebhookSecret, async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 201;
      ctx.body = await secrets.rotate(admin(ctx).orgId);
    });
  }
  return router;
}
