/**
 * The management API's live-run calls (admin bearer token, the token's organization): disable and
 * enable a trigger, re-run or resume a run, and read or rotate the organization's completion
 * callback signing secret. Status long polls and streams are in live-status.ts.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { expiresAt } from '../../retention/policy';
import { RunRestarts, type RestartRefusal, type RestartRefusalCode } from '../../runs/run-restarts';
import { TriggerService } from '../../runs/trigger-service';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { HttpError, notFound, refusalError, type RefusalStatus } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { callTemporal } from '../temporal-errors';
import { triggerBody } from '../../contracts/trigger-bodies';
import { admin, body, ownRun, parse } from './management';

export const RerunBodySchema = z.object({ version: z.enum(['latest', 'same']).default('latest') }).strict();

const REFUSAL_STATUS: RefusalStatus<RestartRefusalCode> = {
  NOT_RESUMABLE: { status: 409, code: 'not_resumable' },
  WORKFLOW_GONE: { status: 409, code: 'workflow_deleted' },
  VERSION_GONE: { status: 409, code: 'version_unavailable' },
  INPUTS_GONE: { status: 409, code: 'inputs_unavailable' },
  INVALID_INPUTS: { status: 422, code: 'invalid_inputs' },
};

function refused(refusal: RestartRefusal): HttpError {
  return refusalError(REFUSAL_STATUS, refusal);
}

export function runManagementRoutes(deps: GatewayDeps): Router {
  const router = new Router({ prefix: '/api/v1' });
  router.use(requireAdmin({ registry: deps.registry }), jsonBody());
  const { retention } = deps.config;
  const restarts = new RunRestarts({
    registry: deps.registry, blobs: deps.blobs, signer: deps.signer, runs: deps.runs, triggers: new TriggerService(deps),
    blobExpiry: (key, modified) => (retention.enabled ? expiresAt(key, modified, retention) : undefined),
  });

  const setDisabled = (disabled: boolean) => async (ctx: Context): Promise<void> => {
    const trigger = await deps.registry.triggers.setDisabled(admin(ctx).orgId, ctx.params.id ?? '', disabled);
    if (!trigger) throw notFound('unknown_trigger', `no trigger ${ctx.params.id}`);
    ctx.body = triggerBody(trigger, await deps.registry.schedules.get(trigger.orgId, trigger.id));
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
