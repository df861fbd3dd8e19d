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
import { adminOf as admin, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';
import { ownBrief, ownRun } from '../run-access';
import { callDecide, decisionAnswer, DecisionBodySchema, decisionRefusalError as decisionRefused, decisionReportBody } from '../decisions';
import { DecisionAcceptedSchema, DecisionRecordedSchema, DecisionReportSchema, RestartedRunSchema, TriggerSchema, WebhookSecretSchema } from '../../contracts/http-bodies';
import { mount, on, type Operations } from '../operation';
import { admin as security, errors, id, json, jsonRequest } from '../openapi-kit';

export const RerunBodySchema = z.object({ version: z.enum(['latest', 'same']).default('latest') }).strict();

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
