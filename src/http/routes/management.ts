/**
 * The management API (ARCHITECTURE.md): organizations, workflows and their versions, triggers and
 * API keys, with an organization's admin bearer token. Every call acts on that token's organization.
 * HTTP only: each route parses, calls the management room (src/management/) and answers; a
 * refusal's status comes from src/http/management-status.ts.
 */
import Router from '@koa/router';
import type { WorkflowRecord } from '../../registry';
import { CreateApiKeySchema, CreateOrgSchema, CreateTriggerSchema, UpdateTriggerSchema } from '../../management/schemas';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { conflict } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { actorOf, settled } from '../management-status';
import { adminOf as admin, type GatewayRouter, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';
import { answerStatus, streamStatus } from '../live-status';
import { resultsBody } from '../../contracts/run-bodies';
import { callTemporal } from '../temporal-errors';
import { designatedOutput, ownBrief, ownRun, watcherOf } from '../run-access';
import { triggerBody } from '../../contracts/trigger-bodies';
import { MANAGEMENT_OPERATIONS as OPS, RunsQuerySchema, TriggersQuerySchema } from '../management-operations';
import { mount } from '../operation';

function workflowBody(w: WorkflowRecord) {
  return { id: w.id, name: w.name, draft: w.draft, publishedVersion: w.publishedVersion, versions: w.versions, createdAt: w.createdAt, updatedAt: w.updatedAt };
}

export function managementRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  router.use(requireAdmin(deps), jsonBody());
  const { workflows, triggers, keys } = deps.management;

  mount(router, OPS.createOrg, async (ctx) => {
    const actor = actorOf(admin(ctx));
    settled(keys.mayCreateOrgs(actor)); // (before the body is read: a refused caller is told so first)
    const { name } = parse(CreateOrgSchema, body(ctx));
    const created = settled(await keys.createOrg(actor, name));
    ctx.status = 201;
    ctx.body = created;
  });

  /**
   * A new admin token for an organization; its previous ones stop working at once (KeyAdmin: minted
   * by a member, it names them and ends with them). The rotation's record names the answer's
   * `adminTokenId` with the member as actor.
   */
  mount(router, OPS.rotateAdminToken, async (ctx) => {
    const issued = settled(await keys.rotateAdminToken(actorOf(admin(ctx))));
    ctx.status = 201;
    ctx.body = issued;
  });

  mount(router, OPS.reissueOrgAdminToken, async (ctx) => {
    const issued = settled(await keys.reissueAdminToken(actorOf(admin(ctx)), ctx.params.id ?? ''));
    ctx.status = 201;
    ctx.body = issued;
  });

  mount(router, OPS.createWorkflow, async (ctx) => {
    const workflow = settled(await workflows.create(admin(ctx).orgId, body(ctx)));
    ctx.status = 201;
    ctx.body = workflowBody(workflow);
  });

  mount(router, OPS.updateWorkflow, async (ctx) => {
    ctx.body = workflowBody(settled(await workflows.updateDraft(admin(ctx).orgId, ctx.params.id ?? '', body(ctx))));
  });

  mount(router, OPS.listWorkflows, async (ctx) => {
    ctx.body = { workflows: await deps.registry.workflows.list(admin(ctx).orgId) };
  });

  mount(router, OPS.deleteWorkflow, async (ctx) => {
    settled(await workflows.delete(admin(ctx).orgId, ctx.params.id ?? ''));
    ctx.status = 204;
  });

  mount(router, OPS.getWorkflow, async (ctx) => {
    ctx.body = workflowBody(settled(await workflows.get(admin(ctx).orgId, ctx.params.id ?? '')));
  });

  mount(router, OPS.publishWorkflow, async (ctx) => {
    // (the trigger's schedules start the latest version from now on: WorkflowAdmin.publish)
    const version = settled(await workflows.publish(admin(ctx).orgId, ctx.params.id ?? ''));
    ctx.status = 201;
    ctx.body = { workflowId: version.workflowId, version: version.version, stepMap: version.stepMap };
  });

  mount(router, OPS.createTrigger, async (ctx) => {
    const input = parse(CreateTriggerSchema, body(ctx));
    const created = settled(await callTemporal(() => triggers.create(admin(ctx).orgId, input)));
    ctx.status = 201;
    ctx.body = created;
  });

  mount(router, OPS.listTriggers, async (ctx) => {
    const { workflowId } = parse(TriggersQuerySchema, ctx.query, 'invalid_query');
    const { orgId } = admin(ctx);
    const schedules = new Map((await deps.registry.schedules.list(orgId, workflowId)).map((s) => [s.triggerId, s]));
    ctx.body = { triggers: (await deps.registry.triggers.list(orgId, workflowId)).map((t) => triggerBody(t, schedules.get(t.id))) };
  });

  mount(router, OPS.updateTrigger, async (ctx) => {
    const input = parse(UpdateTriggerSchema, body(ctx));
    ctx.body = settled(await callTemporal(() => triggers.update(admin(ctx).orgId, ctx.params.id ?? '', input)));
  });

  mount(router, OPS.deleteTrigger, async (ctx) => {
    settled(await triggers.delete(admin(ctx).orgId, ctx.params.id ?? ''));
    ctx.status = 204;
  });

  mount(router, OPS.listApiKeys, async (ctx) => {
    const keys = await deps.registry.apiKeys.list(admin(ctx).orgId);
    ctx.body = { apiKeys: keys.map((k) => ({ id: k.id, name: k.name, createdAt: k.createdAt, revokedAt: k.revokedAt, role: k.role, memberId: k.memberId })) };
  });

  mount(router, OPS.createApiKey, async (ctx) => {
    const { name, role } = parse(CreateApiKeySchema, body(ctx));
    ctx.status = 201;
    ctx.body = await keys.createApiKey(admin(ctx).orgId, name ?? null, role ?? null, admin(ctx).member?.id ?? null);
  });

  mount(router, OPS.revokeApiKey, async (ctx) => {
    settled(await keys.revokeApiKey(admin(ctx).orgId, ctx.params.id ?? ''));
    ctx.status = 204;
  });

  mount(router, OPS.listRuns, async (ctx) => {
    const query = parse(RunsQuerySchema, ctx.query, 'invalid_query');
    ctx.body = { runs: await callTemporal(() => deps.runs.list(admin(ctx).orgId, query)) };
  });

  /** The polling status body (interface.md 2.5) of any run of the organization, without an API key. */
  mount(router, OPS.getRun, async (ctx) => {
    const view = await ownRun(ctx, deps);
    // The run's page in the Temporal Web UI, when this gateway knows the UI (`flowgate runs open`);
    // a header, so the status body (2.5) and its ETag stay as they are. The workflow ID is the run ID.
    if (deps.temporalUiUrl) {
      ctx.set('Link', `<${deps.temporalUiUrl}/namespaces/${encodeURIComponent(deps.config.temporal.namespace)}/workflows/${encodeURIComponent(view.runId)}>; rel="temporal-ui"`);
    }
    await answerStatus(ctx, watcherOf(deps), view);
  });

  /** The run's step transitions as Server-Sent Events (as …/status/stream of the polling surface). */
  mount(router, OPS.getRunStream, async (ctx) => {
    const view = await ownRun(ctx, deps);
    streamStatus(ctx, watcherOf(deps), view);
  });

  mount(router, OPS.getRunResults, async (ctx) => {
    const view = await ownRun(ctx, deps);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = resultsBody(view, await designatedOutput(deps, view), {
      blobs: deps.blobs, signer: deps.signer, resultUrlTtlSeconds: deps.config.resultUrlTtlSeconds,
    });
  });

  /**
   * Temporal cancellation: the current step's activity is cancelled and the run ends FAILED with
   * error "the run was cancelled". 202: Temporal took the request (no worker needed: the run closes
   * once one reads it); 409 when it already ended.
   */
  mount(router, OPS.cancelRun, async (ctx) => {
    const run = await ownBrief(ctx, deps);
    if ((await callTemporal(() => deps.runs.cancel(run))) === 'closed') throw conflict('run_closed', `run ${run.runId} has already ended`);
    ctx.status = 202;
    ctx.body = { runId: run.runId, automationId: run.memo.automationId, cancelRequested: true };
  });

  mount(router, OPS.getRunApprovals, async (ctx) => {
    const view = await ownRun(ctx, deps);
    const waiting = view.waitingOn?.kind === 'approval' ? view.waitingOn : undefined;
    const exp = waiting ? Math.floor(Date.parse(waiting.deadline) / 1000) : 0;
    ctx.body = {
      runId: view.runId,
      automationId: view.memo.automationId,
      status: view.status,
      approvals: waiting ? [{
        stepIndex: waiting.stepIndex,
        stepName: view.memo.steps[waiting.stepIndex - 1]?.name,
        message: waiting.message,
        deadline: waiting.deadline,
        required: waiting.required,
        decisions: waiting.decisions,
        approvers: waiting.approvers.map((approver) => {
          const decided = waiting.decisions.some((d) => d.approver.toLowerCase() === approver.toLowerCase());
          return { approver, decided, ...(decided ? {} : { link: deps.approvalLinks.url({ runId: view.runId, stepIndex: waiting.stepIndex, approver, exp }) }) };
        }),
      }] : [],
      decisionOutcomes: (view.decisionOutcomes ?? []).map(({ outcome, ...rest }) => ({ ...rest, status: outcome })),
    };
  });

  return router;
}
