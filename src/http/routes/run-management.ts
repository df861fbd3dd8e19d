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
import { adminOf as admin } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';
import { ownBrief, ownRun } from '../run-access';
import { callDecide, decisionAnswer, DecisionBodySchema, decisionRefusalError as decisionRefused, decisionReportBody } from '../decisions';

export const RerunBodySchema = z.object({ version: z.enum(['latest', 'same']).default('latest') }).strict();

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

export function runManagementRoutes(deps: GatewayDeps): Router {
  const router = new Router({ prefix: '/api/v1' });
  router.use(requireAdmin(deps), jsonBody());
  const { restarts } = deps;

  const setDisabled = (disabled: boolean) => async (ctx: Context): Promise<void> => {
    ctx.body = settled(await deps.management.triggers.setDisabled(admin(ctx).orgId, ctx.params.id ?? '', disabled));
  };
  router.post('/triggers/:id/disable', setDisabled(true));
  router.post('/triggers/:id/enable', setDisabled(false));

  router.post('/runs/:runId/rerun', async (ctx) => {
    const { version } = parse(RerunBodySchema, body(ctx));
    const view = await ownRun(ctx, deps);
    const started = await callTemporal(() => restarts.rerun(view, version));
    if (!started.ok) throw refused(started);
    ctx.status = 201;
    ctx.body = { ...started, ok: undefined, origin: { kind: 'rerun', runId: view.runId }, statusUrl: `/api/v1/runs/${started.runId}` };
  });

  router.post('/runs/:runId/resume', async (ctx) => {
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
  router.post('/runs/:runId/approval', async (ctx) => {
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
  router.get('/runs/:runId/approval/:decisionId', async (ctx) => {
    const view = await ownRun(ctx, deps);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await decisionReportBody(deps, view, ctx.params.decisionId ?? '');
  });

  const secrets = deps.webhookSecrets;
  if (secrets) {
    router.get('/webhook-secret', async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await secrets.read(admin(ctx).orgId);
    });
    router.post('/webhook-secret/rotate', async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 201;
      ctx.body = await secrets.rotate(admin(ctx).orgId);
    });
  }
  return router;
}
