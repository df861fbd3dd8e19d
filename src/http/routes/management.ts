/**
 * The management API (ARCHITECTURE.md): organizations, workflows and their versions, triggers and
 * API keys, with an organization's admin bearer token. Every call acts on that token's organization.
 */
import Router from '@koa/router';
import { RegistryError, type WorkflowRecord } from '../../registry';
import type { RunBrief, RunView } from '../../runs/run-service';
import { hashSecret, randomToken } from '../../crypto/secrets';
import { credentialFingerprint } from '../../audit/audit-trail';
import { requireAdmin } from '../auth';
import type { GatewayDeps } from '../deps';
import { conflict, forbidden, notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { adminOf as admin, type GatewayRouter, type GatewayRouterContext, type GatewayState } from '../state';
import { bodyOf as body, parseInput as parse } from '../validate';
import { answerStatus, streamStatus } from '../live-status';
import { resultsBody } from '../../contracts/run-bodies';
import { callTemporal } from '../temporal-errors';
import { designatedOutput, watcherOf } from './runs';
import { triggerBody } from '../../contracts/trigger-bodies';
import { CreateOrgSchema, MANAGEMENT_OPERATIONS as OPS, RunsQuerySchema, TriggersQuerySchema } from '../management-operations';
import { mount } from '../operation';
import { createApiKey, CreateApiKeySchema, createTrigger, CreateTriggerSchema, definitionSchemaOf, deleteTrigger, deleteWorkflow, parseDefinition, revokeApiKey } from './workflow-admin';

export const ADMIN_TOKEN_PREFIX = 'fga_';

/** The audit trail's name of an admin token (`adm_` + the start of its SHA-256), as its records' credential id: never the token. */
export function adminTokenId(tokenHash: string): string {
  return credentialFingerprint('adm_', tokenHash);
}

/** the helpers run-management.ts shares */
export { admin, body, parse };
export { API_KEY_PREFIX } from './workflow-admin';

function workflowBody(w: WorkflowRecord) {
  return { id: w.id, name: w.name, draft: w.draft, publishedVersion: w.publishedVersion, versions: w.versions, createdAt: w.createdAt, updatedAt: w.updatedAt };
}

/** The run if it belongs to the admin's organization: another org's run is a 404 like a missing one. */
export async function ownRun(ctx: GatewayRouterContext, deps: GatewayDeps): Promise<RunView> {
  const view = await callTemporal(() => deps.runs.view(ctx.params.runId ?? ''));
  if (!view || view.memo.orgId !== admin(ctx).orgId) throw notFound('unknown_run', `no run ${ctx.params.runId}`);
  return view;
}

/** As ownRun, from describe alone (no worker needed): for actions that must be answered whatever the worker does. */
export async function ownBrief(ctx: GatewayRouterContext, deps: GatewayDeps): Promise<RunBrief> {
  const brief = await callTemporal(() => deps.runs.brief(ctx.params.runId ?? ''));
  if (!brief || brief.memo.orgId !== admin(ctx).orgId) throw notFound('unknown_run', `no run ${ctx.params.runId}`);
  return brief;
}

export function managementRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: '/api/v1' });
  router.use(requireAdmin(deps), jsonBody());
  const definitionSchema = definitionSchemaOf(deps);

  mount(router, OPS.createOrg, async (ctx) => {
    if (!admin(ctx).instanceAdmin) throw forbidden('only the instance administrator may create organizations');
    const { name } = parse(CreateOrgSchema, body(ctx));
    const org = await deps.registry.orgs.create(name);
    const adminToken = randomToken(ADMIN_TOKEN_PREFIX);
    const hash = hashSecret(adminToken);
    await deps.registry.orgs.addAdminToken(org.id, hash, { instanceAdmin: false });
    ctx.status = 201;
    ctx.body = { id: org.id, name: org.name, adminToken, adminTokenId: adminTokenId(hash) };
  });

  /**
   * A new admin token for an organization; its previous ones stop working at once. Minted by a
   * member (their personal access token rotated it), it names them and ends with them
   * (docs/people-and-roles.md "Offboarding"); the answer's `adminTokenId` is the token's name in
   * the audit trail, and the rotation's record names it with the member as actor.
   */
  const reissueAdminToken = async (orgId: string, memberId: string | null): Promise<{ adminToken: string; adminTokenId: string }> => {
    const adminToken = randomToken(ADMIN_TOKEN_PREFIX);
    const hash = hashSecret(adminToken);
    await deps.registry.orgs.replaceAdminTokens(orgId, hash, { instanceAdmin: false, memberId });
    return { adminToken, adminTokenId: adminTokenId(hash) };
  };

  mount(router, OPS.rotateAdminToken, async (ctx) => {
    if (admin(ctx).instanceAdmin) {
      throw conflict('bootstrap_token', 'the instance administrator\'s token comes from FLOWGATE_ADMIN_TOKEN (or <data>/admin-token): change it there and restart to revoke the old one');
    }
    ctx.status = 201;
    ctx.body = await reissueAdminToken(admin(ctx).orgId, admin(ctx).member?.id ?? null);
  });

  mount(router, OPS.reissueOrgAdminToken, async (ctx) => {
    if (!admin(ctx).instanceAdmin) throw forbidden('only the instance administrator may reissue another organization\'s token');
    const org = await deps.registry.orgs.get(ctx.params.id ?? '');
    if (!org || org.id === admin(ctx).orgId) throw notFound('unknown_org', `no organization ${ctx.params.id} other than the instance administrator's`);
    ctx.status = 201;
    ctx.body = { id: org.id, ...(await reissueAdminToken(org.id, null)) };
  });

  mount(router, OPS.createWorkflow, async (ctx) => {
    const definition = parseDefinition(definitionSchema, body(ctx));
    const workflow = await deps.registry.workflows.create(admin(ctx).orgId, definition);
    ctx.status = 201;
    ctx.body = workflowBody(workflow);
  });

  mount(router, OPS.updateWorkflow, async (ctx) => {
    const definition = parseDefinition(definitionSchema, body(ctx));
    const workflow = await deps.registry.workflows.updateDraft(admin(ctx).orgId, ctx.params.id ?? '', definition);
    if (!workflow) throw notFound('unknown_workflow', `no workflow ${ctx.params.id}`);
    ctx.body = workflowBody(workflow);
  });

  mount(router, OPS.listWorkflows, async (ctx) => {
    ctx.body = { workflows: await deps.registry.workflows.list(admin(ctx).orgId) };
  });

  mount(router, OPS.deleteWorkflow, async (ctx) => {
    if (!(await deleteWorkflow(deps, admin(ctx).orgId, ctx.params.id ?? ''))) throw notFound('unknown_workflow', `no workflow ${ctx.params.id}`);
    ctx.status = 204;
  });

  mount(router, OPS.getWorkflow, async (ctx) => {
    const workflow = await deps.registry.workflows.get(admin(ctx).orgId, ctx.params.id ?? '');
    if (!workflow) throw notFound('unknown_workflow', `no workflow ${ctx.params.id}`);
    ctx.body = workflowBody(workflow);
  });

  mount(router, OPS.publishWorkflow, async (ctx) => {
    // (the trigger's schedules start the latest version from now on: WorkflowPublishing)
    const version = await deps.publishing.publish(admin(ctx).orgId, ctx.params.id ?? '').catch((err: unknown) => {
      if (err instanceof RegistryError && err.code === 'CONFLICT') throw conflict('publish_conflict', err.message);
      throw err;
    });
    if (!version) throw notFound('unknown_workflow', `no workflow ${ctx.params.id}`);
    ctx.status = 201;
    ctx.body = { workflowId: version.workflowId, version: version.version, stepMap: version.stepMap };
  });

  mount(router, OPS.createTrigger, async (ctx) => {
    const created = await createTrigger(deps, admin(ctx).orgId, parse(CreateTriggerSchema, body(ctx)));
    ctx.status = 201;
    ctx.body = created;
  });

  mount(router, OPS.listTriggers, async (ctx) => {
    const { workflowId } = parse(TriggersQuerySchema, ctx.query, 'invalid_query');
    const { orgId } = admin(ctx);
    const schedules = new Map((await deps.registry.schedules.list(orgId, workflowId)).map((s) => [s.triggerId, s]));
    ctx.body = { triggers: (await deps.registry.triggers.list(orgId, workflowId)).map((t) => triggerBody(t, schedules.get(t.id))) };
  });

  mount(router, OPS.deleteTrigger, async (ctx) => {
    if (!(await deleteTrigger(deps, admin(ctx).orgId, ctx.params.id ?? ''))) throw notFound('unknown_trigger', `no trigger ${ctx.params.id}`);
    ctx.status = 204;
  });

  mount(router, OPS.listApiKeys, async (ctx) => {
    const keys = await deps.registry.apiKeys.list(admin(ctx).orgId);
    ctx.body = { apiKeys: keys.map((k) => ({ id: k.id, name: k.name, createdAt: k.createdAt, revokedAt: k.revokedAt, role: k.role, memberId: k.memberId })) };
  });

  mount(router, OPS.createApiKey, async (ctx) => {
    const { name, role } = parse(CreateApiKeySchema, body(ctx));
    ctx.status = 201;
    ctx.body = await createApiKey(deps, admin(ctx).orgId, name ?? null, role ?? null, admin(ctx).member?.id ?? null);
  });

  mount(router, OPS.revokeApiKey, async (ctx) => {
    if (!(await revokeApiKey(deps, admin(ctx).orgId, ctx.params.id ?? ''))) throw notFound('unknown_api_key', `no API key ${ctx.params.id}`);
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
