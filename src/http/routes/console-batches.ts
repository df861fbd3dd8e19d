/**
 * The console's bulk actions on runs (docs/console.md "Acting on all matching runs"): the runs
 * page's "Act on all matching runs" counts the runs its filter selects (a dry run), a confirmation
 * starts the batch, and a batch's page shows its progress, refreshing while it runs. The same
 * service as `POST /api/v1/runs/batch` and `GET /api/v1/runs/batch/{batchId}` (RunBatches,
 * src/runs/run-batch.ts), the same body schema (src/console/batch-form.ts), the same permission
 * (runs.operate) and audit action (`run_batch.started`, a dry run too, as the API records it).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { BATCH_LIMIT_DEFAULT } from '../../common/run-batch';
import { readBatchForm } from '../../console/batch-form';
import type { RunBatches } from '../../runs/run-batch';
import type { GatewayDeps } from '../deps';
import { noteForAudit } from '../console/audit';
import { batchBody, batchCountBody, batchesBody, batchForm, batchInProgress, type RecentBatch } from '../console/batch-views';
import { consoleState, refusePage } from '../console/guard';
import type { ConsoleRouteKit } from '../console/kit';
import { page, send } from '../console/layout';
import { callTemporal } from '../temporal-errors';
import { html } from '../console/html';

/** How often a running batch's page reloads itself. */
export const BATCH_PAGE_REFRESH_SECONDS = 2;
/** The recent batches: the newest `run_batch.started` records read, and how many are listed. */
const RECENT_RECORDS = 200;
const RECENT_LISTED = 20;

export function consoleBatchRoutes(router: Router, deps: GatewayDeps, kit: ConsoleRouteKit): void {
  const { session, csrf, audited, apiAction, parseForm } = kit;
  const started = apiAction('POST', '/api/v1/runs/batch');

  /** The batch service, or a 503 page (a gateway without Temporal's client). */
  const batchesOf = (ctx: Context): RunBatches | undefined => {
    if (!deps.batches) refusePage(ctx, 503, 'Temporal is unreachable', 'This gateway has no batch service.');
    return deps.batches;
  };
  const who = (ctx: Context): string => {
    const { session: s } = consoleState(ctx);
    return s.member ? `member:${s.member.email}` : s.instanceAdmin ? 'instance-admin' : 'admin';
  };

  /** The count (a dry run), with the confirmation; a refused field shows the form again with why. */
  router.post('/batches/count', session, audited(started, 'org', { noteTarget: 'orgId' }), parseForm, csrf, async (ctx) => {
    const { session: s } = consoleState(ctx);
    noteForAudit(ctx, { orgId: s.orgId, dryRun: true });
    const form = readBatchForm(ctx.request.body, { dryRun: true });
    if (!form.ok) {
      send(ctx, 400, page({ title: 'Act on all matching runs', csrf: s.csrfToken, section: 'runs' }, html`<p><a href="/console/runs">← Runs</a></p><h1>Act on all matching runs</h1>
<p class="error" role="alert" id="form-problems">The batch was not counted: see below.</p>${batchForm({ csrf: s.csrfToken, values: form.values, errors: form.errors, open: true })}`));
      return;
    }
    const batches = batchesOf(ctx);
    if (!batches) return;
    const selection = await callTemporal(() => batches.choose(s.orgId, form.request.filter, BATCH_LIMIT_DEFAULT));
    noteForAudit(ctx, { action: form.request.action, count: selection.runIds.length });
    send(ctx, 200, page({ title: 'Confirm the batch', csrf: s.csrfToken, section: 'runs' }, batchCountBody({
      request: form.request, values: form.values, count: selection.runIds.length, limit: BATCH_LIMIT_DEFAULT, scanned: selection.scanned, capped: selection.capped, csrf: s.csrfToken,
    })));
  });

  /** The confirmation: starts the batch and goes to its page. */
  router.post('/batches', session, audited(started, 'org', { noteTarget: 'orgId' }), parseForm, csrf, async (ctx) => {
    const { session: s } = consoleState(ctx);
    noteForAudit(ctx, { orgId: s.orgId });
    const form = readBatchForm(ctx.request.body, { dryRun: false });
    if (!form.ok || form.request.confirm !== true) {
      refusePage(ctx, 400, 'Batch not started', form.ok ? 'Count the runs first, then confirm the batch on the count\'s page.' : Object.values(form.errors).join(' '));
      return;
    }
    const batches = batchesOf(ctx);
    if (!batches) return;
    const { action, filter, reason } = form.request;
    const matched = (await callTemporal(() => batches.choose(s.orgId, filter, BATCH_LIMIT_DEFAULT))).runIds.length;
    const batchId = await callTemporal(() => batches.start(s.orgId, { action, filter, limit: BATCH_LIMIT_DEFAULT, by: who(ctx), ...(reason ? { reason } : {}) }));
    noteForAudit(ctx, { batchId, action, matched });
    ctx.status = 303;
    ctx.redirect(`/console/batches/${encodeURIComponent(batchId)}`);
  });

  router.get('/batches', session, async (ctx) => {
    const { session: s } = consoleState(ctx);
    const { records } = await deps.audit.list(s.orgId, { action: started, outcome: 'success' }, RECENT_RECORDS);
    const recent: RecentBatch[] = records.flatMap((r) => {
      const { batchId, action, matched } = r.details;
      if (typeof batchId !== 'string' || typeof action !== 'string') return [];
      return [{ batchId, action, at: r.at, actor: r.actorName ?? r.actor, ...(typeof matched === 'number' ? { matched } : {}) }];
    }).slice(0, RECENT_LISTED);
    send(ctx, 200, page({ title: 'Batches', csrf: s.csrfToken, section: 'runs' }, batchesBody(recent)));
  });

  router.get('/batches/:batchId', session, async (ctx) => {
    const { session: s } = consoleState(ctx);
    const batches = batchesOf(ctx);
    if (!batches) return;
    const report = await callTemporal(() => batches.read(s.orgId, String(ctx.params.batchId ?? '')));
    if (!report) {
      refusePage(ctx, 404, 'No such batch', 'This organization has no batch with that ID.');
      return;
    }
    const running = batchInProgress(report);
    send(ctx, 200, page({ title: 'Batch', csrf: s.csrfToken, section: 'runs', ...(running ? { reloadSeconds: BATCH_PAGE_REFRESH_SECONDS } : {}) }, batchBody(report, BATCH_PAGE_REFRESH_SECONDS)));
  });
}
