/**
 * Polling (interface.md 4.3, 4.4): status and results of a run, the API key in the path.
 * A run of another organization or of another automation is reported as unknown.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { LruCache } from '../../cache/lru-cache';
import type { DesignatedOutput } from '../../registry';
import type { RunBrief, RunView } from '../../runs/run-service';
import { authenticateApiKey } from '../auth';
import type { GatewayDeps } from '../deps';
import { notFound } from '../http-error';
import { jsonBody } from '../middleware/json-body';
import { auditDecision, decisionAuditFields } from '../middleware/audit';
import { callDecide, decisionAnswer, DecisionBodySchema, decisionRefusalError, decisionReportBody } from '../decisions';
import { designatedOutput, watcherOf } from '../run-access';
import { answerStatus, streamStatus } from '../live-status';
import { resultsBody } from '../../contracts/run-bodies';
import { callTemporal } from '../temporal-errors';
import { principalOf, type GatewayRouter, type GatewayRouterContext, type GatewayState } from '../state';
import { parseBody } from '../validate';
import { DecisionAcceptedSchema, DecisionRecordedSchema, DecisionReportSchema, ResultsBodySchema } from '../../contracts/http-bodies';
import { mount, type Operations } from '../operation';
import { errors, json, jsonRequest } from '../openapi-kit';
import { statusHeaders, statusResponses, streamOperation } from '../openapi-status';

/** the decision body the OpenAPI document shows */
export { DecisionBodySchema };

/**
 * The run named in the path, if it is the key's organization's and of that automation, from
 * describe alone (no worker needed): for decisions, which must be answered whatever the worker does.
 */
async function visibleBrief(ctx: GatewayRouterContext, deps: GatewayDeps): Promise<RunBrief> {
  const { apiKey = '', automationId = '', runId = '' }: Partial<Record<string, string>> = ctx.params;
  const principal = await authenticateApiKey(deps.registry, apiKey);
  ctx.state.principal = principal;
  const brief = await callTemporal(() => deps.runs.brief(runId));
  if (!brief || brief.memo.orgId !== principal.orgId || brief.memo.automationId !== automationId) {
    throw notFound('unknown_run', `no run ${runId} of automation ${automationId}`);
  }
  return brief;
}

async function visibleRun(ctx: GatewayRouterContext, deps: GatewayDeps): Promise<RunView> {
  const { apiKey = '', automationId = '', runId = '' }: Partial<Record<string, string>> = ctx.params;
  const principal = await authenticateApiKey(deps.registry, apiKey);
  ctx.state.principal = principal;
  const view = await callTemporal(() => deps.runs.view(runId));
  if (!view || view.memo.orgId !== principal.orgId || view.memo.automationId !== automationId) {
    throw notFound('unknown_run', `no run ${runId} of automation ${automationId}`);
  }
  return view;
}

const pollingParams = z.object({
  apiKey: z.string().meta({ description: 'an API key of the run\'s organization' }),
  automationId: z.string().meta({ description: 'the run\'s workflow' }),
  runId: z.string(),
});
const RUN = '/ext/webhook/:apiKey/runs/:automationId/:runId';

/** The polling surface: a run's status, results and approval, with an API key of its organization in the path. */
export const POLLING_OPERATIONS = {
  runStatus: {
    method: 'get', path: `${RUN}/status`,
    tags: ['polling'], summary: 'A run\'s status; a long poll with `Prefer: wait=N`, 304 with a current If-None-Match',
    requestParams: { path: pollingParams, header: statusHeaders }, responses: statusResponses(401, 404, 429, 503),
  },
  runStatusStream: { method: 'get', path: `${RUN}/status/stream`, ...streamOperation(['polling'], pollingParams) },
  runResults: {
    method: 'get', path: `${RUN}/results`,
    tags: ['polling'], summary: 'A run\'s results as signed file links', requestParams: { path: pollingParams },
    responses: { '200': json(ResultsBodySchema, 'the run\'s results so far'), ...errors(401, 404, 429, 503) },
  },
  decideApproval: {
    method: 'post', path: `${RUN}/approval`,
    tags: ['approvals'], summary: 'Approve or reject the approval step the run waits on', requestParams: { path: pollingParams }, requestBody: jsonRequest(DecisionBodySchema),
    responses: {
      '200': json(DecisionAcceptedSchema, 'the run took the decision'),
      '202': json(DecisionRecordedSchema, 'the run did not answer in time: the decision is recorded and applied, or refused, when it resumes'),
      ...errors(400, 401, 403, 404, 409, 415, 429, 503),
    },
  },
  approvalDecisionOutcome: {
    method: 'get', path: `${RUN}/approval/:decisionId`,
    tags: ['approvals'], summary: 'What became of a decision this API answered with its ID', requestParams: { path: pollingParams.extend({ decisionId: z.string() }) },
    responses: { '200': json(DecisionReportSchema, 'the decision\'s outcome'), ...errors(401, 404, 429, 503) },
  },
} satisfies Operations;
const OPS = POLLING_OPERATIONS;

/**
 * A run's designated output: its published version never changes, its trigger's may (a change in
 * place, PATCH /api/v1/triggers/{id}), so a kept one is read again after this long.
 */
const CACHED_DESIGNATED_OUTPUTS = 10_000;
const DESIGNATED_OUTPUT_RECHECK_MS = 30_000;

/** A final view's results body as sent, good while its links' expiry (`exp`, whole seconds) is the same. */
interface SerializedResults {
  exp: string;
  json: Buffer;
}

export function runRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>({ prefix: RUN });
  // `null`: no designated output (the cache keeps no undefined).
  const designated = new LruCache<string, DesignatedOutput | null>({ maxEntries: CACHED_DESIGNATED_OUTPUTS, ttlMs: DESIGNATED_OUTPUT_RECHECK_MS });
  const designatedOf = async (view: RunView): Promise<DesignatedOutput | undefined> => (await designated.getOrLoad(
    `${view.memo.triggerId}\n${view.memo.automationId}@${view.memo.automationVersion}`, async () => (await designatedOutput(deps, view)) ?? null)) ?? undefined;
  mount(router, OPS.runStatus, async (ctx) => {
    const view = await visibleRun(ctx, deps);
    await answerStatus(ctx, watcherOf(deps), view);
  });
  mount(router, OPS.runStatusStream, async (ctx) => {
    const view = await visibleRun(ctx, deps);
    streamStatus(ctx, watcherOf(deps), view);
  });
  const readBody = jsonBody({ limit: '16kb' });
  mount(router, OPS.decideApproval, async (ctx) => {
    const run = await visibleBrief(ctx, deps);
    await readBody(ctx, async () => {
      const decision = parseBody(ctx, DecisionBodySchema);
      const principal = principalOf(ctx);
      const outcome = await callDecide(() => deps.runs.decide(run, { ...decision, actor: `api-key:${principal.keyId}`, via: 'api' }));
      const base = { runId: run.runId, automationId: run.memo.automationId };
      const answer = outcome.ok ? decisionAnswer(base, outcome, `${ctx.path}/${outcome.decisionId}`) : undefined;
      const refused = outcome.ok ? undefined : decisionRefusalError(outcome.refusal, outcome.message);
      await auditDecision(deps.audit, ctx, await deps.audit.keyActor(principal.keyId, 'api_key'), {
        orgId: principal.orgId, runId: run.runId, decision: decision.decision, via: 'api', status: refused?.status ?? answer?.status ?? 200,
        ...decisionAuditFields(outcome, decision.approver),
      });
      if (!answer) throw refused;
      ctx.status = answer.status;
      if (answer.location) ctx.set('Location', answer.location);
      ctx.body = answer.body;
    });
  });
  // What became of a decision this API answered with its ID (202: recorded, to be applied).
  mount(router, OPS.approvalDecisionOutcome, async (ctx) => {
    const view = await visibleRun(ctx, deps);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await decisionReportBody(deps, view, ctx.params.decisionId ?? '');
  });

  // Results of a closed run change only with their links' expiry: within one second every poll
  // gets the same signed links, so the body is built and serialized at most once a second per run.
  // Keyed by the view the finished-run cache shares; an entry goes with its view.
  const finalResults = new WeakMap<RunView, SerializedResults>();
  mount(router, OPS.runResults, async (ctx) => {
    const view = await visibleRun(ctx, deps);
    ctx.set('Cache-Control', 'no-store');
    const exp = deps.signer.expiry(deps.config.resultUrlTtlSeconds);
    let serialized = view.final ? finalResults.get(view) : undefined;
    if (serialized?.exp !== exp) {
      const body = resultsBody(view, await designatedOf(view), {
        blobs: deps.blobs, signer: deps.signer, resultUrlTtlSeconds: deps.config.resultUrlTtlSeconds,
      });
      serialized = { exp, json: Buffer.from(JSON.stringify(body)) };
      // (not kept when the second turned while signing: its links may carry either expiry)
      if (view.final && !view.callback && deps.signer.expiry(deps.config.resultUrlTtlSeconds) === exp) finalResults.set(view, serialized);
    }
    ctx.set('Content-Type', 'application/json; charset=utf-8');
    ctx.body = serialized.json;
  });
  return router;
}
