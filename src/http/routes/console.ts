/**
 * The console at /console (docs/console.md): sign-in with the organization's admin token, the runs
 * page and a run's page, with their actions, and the audit page; the page families listed in
 * src/http/console-pages.ts (workflows, API keys, people, agents, connections, tool servers) are
 * added to the same router. Server-rendered HTML (../console/), one stylesheet and
 * one script served from the package; every action goes through the services the API uses
 * (src/console/, built in src/app/services.ts). Its pages are a UI, not API: they are not in the
 * OpenAPI document (app.ts mounts this router outside the documented ones).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { RunBrief, RunView } from '../../runs/run-service';
import { readTextPrefix } from '../../contracts/run-bodies';
import type { GatewayDeps } from '../deps';
import { ASSETS } from '../console/assets';
import { consoleState, parseConsoleForm, refusalExplained, refusePage, sameOrigin, sessionCookie, cookieValue } from '../console/guard';
import { html } from '../console/html';
import { page, send } from '../console/layout';
import { RUN_FILTER_STATUSES, runBody, runsBody, SINCE_CHOICES, temporalUiRunUrl, type RunPageData, type StepFiles } from '../console/run-views';
import { consoleRunEvents, liveRunStatuses } from '../console/live';
import { auditBody } from '../console/audit-views';
import { AuditQuerySchema } from '../../contracts/audit-bodies';
import { APPROVAL_DECIDED, CONSOLE_SIGNED_IN, CONSOLE_SIGNED_OUT, CONSOLE_SIGN_IN_REFUSED } from '../../audit/actions';
import { auditSignIn, auditTokenSignIn, noteForAudit } from '../console/audit';
import { consoleRouteKit, type ConsolePageFamily } from '../console/kit';
import { HttpError } from '../http-error';
import { permissionDenied } from '../auth';
import { roleHas } from '../../people/roles';
import { callTemporal } from '../temporal-errors';
import { callDecide } from '../decisions';
import { decisionAuditFields } from '../middleware/audit';
import { noneMatch } from '../live-status';
import { formOf } from '../validate';
import { designatedOutput } from '../run-access';
import { mimeTypeOfName } from '../../common/file-types';
import { codecCookie } from '../../crypto/codec-sessions';

const ID_OR_EMPTY = z.union([z.literal(''), z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/)]).optional();
const RunsFilterSchema = z.object({
  workflowId: ID_OR_EMPTY, triggerId: ID_OR_EMPTY, status: z.union([z.literal(''), z.enum(RUN_FILTER_STATUSES)]).optional(),
  since: z.union([z.literal(''), z.enum(['1h', '24h', '7d', '30d'])]).optional(),
});
/** `stepIndex`: the approval step the page showed (the decision is for that one) */
const DecisionFormSchema = z.object({
  decision: z.enum(['approve', 'reject']), approver: z.string().min(1).max(320).optional(), comment: z.string().max(2000).optional(), stepIndex: z.coerce.number().int().min(1).max(10_000).optional(),
});
const RerunFormSchema = z.object({ version: z.enum(['latest', 'same']).default('latest') });
/** What an action's redirect may say on the run page (only these: nothing from the request is echoed). */
const NOTICES: Record<string, string> = {
  approve: 'Your approval was recorded.', reject: 'Your rejection was recorded.', cancel: 'Cancellation requested; the run ends once it reads it.',
  rerun: 'This is the re-run you started.', resume: 'This is the resumed run you started.',
};
/** a step's stdout shown on the run page: its first 16 KiB, for the first 50 steps */
const [STDOUT_PREVIEW_BYTES, STEPS_WITH_STDOUT] = [16 * 1024, 50];

export function consoleRoutes(deps: GatewayDeps, families: readonly ConsolePageFamily[] = []): Router | undefined {
  const services = deps.console;
  if (!services) return undefined;
  const { sessions, runs } = services;
  const router = new Router({ prefix: '/console' });
  const kit = consoleRouteKit(deps, sessions);
  const { session, csrf, audited } = kit;
  const apiAction = (route: string): string => kit.apiAction('POST', route);
  const lifetimeSeconds = deps.config.consoleSessionMinutes * 60;
  /** The positional form of kit.audited that the agent, connection and server routes take. */
  const auditedAt = (action: string, targetType: string, param?: string, noteTarget?: string) => audited(action, targetType, { ...(param ? { param } : {}), ...(noteTarget ? { noteTarget } : {}) });

  // Errors of the services (Temporal unreachable, say) as a page, not the API's JSON.
  router.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!(err instanceof HttpError) || !err.expose || ctx.headerSent) throw err;
      if (err.code === 'permission_denied') {
        const { session: s } = consoleState(ctx);
        refusePage(ctx, 403, 'Not allowed for your role', err.message, refusalExplained(s.role, err.message));
        return;
      }
      refusePage(ctx, err.status, err.status === 503 ? 'Temporal is unreachable' : 'Request refused', err.message);
    }
  });

  router.get('/', (ctx) => ctx.redirect('/console/runs'));
  router.get('/assets/:name', (ctx) => {
    const asset = ASSETS[ctx.params.name ?? ''];
    if (!asset || !Object.hasOwn(ASSETS, ctx.params.name ?? '')) {
      ctx.status = 404;
      return;
    }
    ctx.set('ETag', asset.etag);
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (noneMatch(ctx.get('If-None-Match'), asset.etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = asset.type;
    ctx.body = asset.body;
  });

  /** With `?org=<id>` of an organization that has an identity provider: its "Sign in with <name>" first. */
  const signInPage = (ctx: Context, status: number, error?: string, provider?: { orgId: string; name: string }): void => send(ctx, status, page({ title: 'Sign in' }, html`<div class="signin">
<h1>Sign in to the console</h1>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
${provider ? html`<p class="actions"><a class="button" id="oidc-sign-in" href="/console/oidc/start?org=${provider.orgId}">Sign in with ${provider.name}</a></p>` : ''}
<form method="post" action="/console/sign-in">
<label for="token">Admin token or personal access token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required spellcheck="false">
<p class="hint">A token the management API takes: an organization's admin token, or a member's personal access token (<code>fgp_…</code>, signs in with the member's role). It is not kept: the console keeps a session of its own.</p>
<div class="actions"><button type="submit">Sign in</button></div></form></div>`));

  router.get('/sign-in', async (ctx) => {
    const org = typeof ctx.query.org === 'string' && /^[A-Za-z0-9_.-]{1,100}$/.test(ctx.query.org) ? ctx.query.org : undefined;
    const name = org ? await deps.identityProviders?.nameOf(org) : undefined;
    signInPage(ctx, 200, undefined, org && name ? { orgId: org, name } : undefined);
  });
  router.post('/sign-in', parseConsoleForm, async (ctx) => {
    const token = formOf(ctx).token;
    if (!sameOrigin(ctx, deps.config.publicUrl)) {
      // a cross-site sign-in with a real admin token is worth a record under its organization
      const grant = typeof token === 'string' ? await sessions.grantOf(token.trim()) : undefined;
      refusePage(ctx, 403, 'Request refused', 'Sign-in is accepted from this console\'s own page only.');
      if (grant) await auditSignIn(deps.audit, ctx, CONSOLE_SIGN_IN_REFUSED, 403, grant);
      return;
    }
    const signedIn = typeof token === 'string' ? await sessions.signIn(token.trim()) : undefined;
    if (!signedIn) {
      // a member's personal access token opens a session with the member's role
      const member = typeof token === 'string' ? await sessions.signInMemberToken(token.trim()) : undefined;
      if (member) {
        await auditTokenSignIn(deps.audit, ctx, member.session, String(token).trim());
        sessionCookie(ctx, member.id, lifetimeSeconds);
        ctx.status = 303;
        ctx.redirect('/console/runs');
        return;
      }
      // an unknown token names no organization: the access log has it, as the API's 401s
      signInPage(ctx, 401, 'That is neither an admin token nor a personal access token of this flowgate.');
      return;
    }
    const { session: opened } = signedIn;
    await auditSignIn(deps.audit, ctx, CONSOLE_SIGNED_IN, 303, { orgId: opened.orgId, instanceAdmin: opened.instanceAdmin, tokenHash: opened.adminTokenHash }, opened);
    sessionCookie(ctx, signedIn.id, lifetimeSeconds);
    ctx.status = 303;
    ctx.redirect('/console/runs');
  });
  router.post('/sign-out', session, audited(CONSOLE_SIGNED_OUT, 'console_session'), parseConsoleForm, csrf, async (ctx) => {
    await sessions.signOut(cookieValue(ctx) ?? '');
    sessionCookie(ctx, '', 0); // and the codec sign-in it may have made ("Open in the Temporal Web UI"):
    if (consoleState(ctx).session.instanceAdmin) ctx.append('Set-Cookie', codecCookie('', 0, deps.config.publicUrl?.startsWith('https:') ?? false));
    ctx.status = 303;
    ctx.redirect('/console/sign-in');
  });

  router.get('/runs', session, async (ctx) => {
    const { session: s } = consoleState(ctx);
    const parsed = RunsFilterSchema.safeParse(ctx.query);
    const filter = parsed.success ? parsed.data : {};
    const since = SINCE_CHOICES.find((c) => c.value === filter.since);
    const [workflows, triggers] = await Promise.all([deps.registry.workflows.list(s.orgId), deps.registry.triggers.list(s.orgId)]);
    const listed = await callTemporal(() => runs.listByState(s.orgId, filter.status || undefined, {
      ...(filter.workflowId ? { workflowId: filter.workflowId } : {}), ...(filter.triggerId ? { triggerId: filter.triggerId } : {}),
      ...(since ? { startedSince: new Date(Date.now() - since.ms).toISOString() } : {}),
    }));
    const liveIds = listed.filter((r) => r.status === 'RUNNING').slice(0, 25).map((r) => r.runId);
    send(ctx, 200, page({ title: 'Runs', csrf: s.csrfToken, section: 'runs' }, runsBody({
      filter, runs: listed, liveIds, csrf: s.csrfToken,
      workflows: workflows.map((w) => ({ id: w.id, name: w.name })),
      triggers: triggers.map((t) => ({ id: t.id, name: t.name ? `${t.name} (${t.id})` : t.id })),
      ...(parsed.success ? {} : { error: 'A filter was not understood and was left out.' }),
    })));
  });
  router.get('/runs/live', session, async (ctx) => liveRunStatuses(ctx, deps, consoleState(ctx).session.orgId));

  /** The session's organization's run, or a 404 page (another organization's run looks missing). */
  const ownRun = async (ctx: Context): Promise<RunView | undefined> => {
    const view = await callTemporal(() => runs.view(consoleState(ctx).session.orgId, String(ctx.params.runId ?? '')));
    if (!view) refusePage(ctx, 404, 'No such run', 'This organization has no run with that ID.');
    return view;
  };

  const runPage = async (ctx: Context, view: RunView, status = 200, extra: Pick<RunPageData, 'notice' | 'error'> = {}): Promise<void> => {
    const ttl = deps.config.resultUrlTtlSeconds;
    const [designated, story, trigger] = await Promise.all([
      designatedOutput(deps, view).catch(() => undefined), callTemporal(() => runs.story(view)), deps.registry.triggers.get(view.memo.triggerId),
    ]);
    const files: StepFiles[] = await Promise.all(view.outcomes.map(async (o, i): Promise<StepFiles> => {
      const out = o.files['output.txt'];
      const std = o.files['stdout.txt'];
      const stdout = std.size > 0 && i < STEPS_WITH_STDOUT ? await readTextPrefix(deps.blobs, std.key, STDOUT_PREVIEW_BYTES).catch(() => undefined) : undefined;
      // the designated output downloads under its own name (report.md), as the results body names it
      const own = designated && designated.stepIndex === o.stepIndex && o.stepPath === undefined ? designated.fileName : undefined;
      const outName = own ?? `step-${o.stepPath ?? o.stepIndex}-output.txt`;
      return {
        output: { url: deps.signer.sign(out.key, ttl, { name: outName, type: own ? mimeTypeOfName(own, out.mimeType) : out.mimeType }), size: out.size, name: outName },
        stdout: { url: deps.signer.sign(std.key, ttl, { name: `step-${o.stepPath ?? o.stepIndex}-stdout.txt`, type: std.mimeType }), size: std.size, ...(stdout ? { text: stdout.text, whole: stdout.whole } : {}) },
      };
    }));
    const startedWith = story.files.map((f) => ({ ...f, ...(f.key ? { url: deps.signer.sign(f.key, ttl, { name: f.filename, type: f.contentType }) } : {}) }));
    const temporalUiUrl = temporalUiRunUrl(deps, view.runId);
    const lastEventId = view.transitions?.[view.transitions.length - 1]?.seq ?? 0;
    const { session: s } = consoleState(ctx);
    send(ctx, status, page({ title: view.memo.automationName, csrf: s.csrfToken, section: 'runs' }, runBody({
      view, csrf: s.csrfToken, files, lastEventId, ...(temporalUiUrl ? { temporalUiUrl, codecSignIn: s.instanceAdmin && deps.codec?.endpoint !== undefined } : {}), ...extra,
      story: { ...story, files: startedWith }, role: s.role, ...(s.member ? { memberEmail: s.member.email } : {}),
      ...(trigger?.orgId === s.orgId && trigger.name ? { triggerName: trigger.name } : {}),
      ...(designated ? { designated: { stepIndex: designated.stepIndex, fileName: designated.fileName ?? 'output.txt' } } : {}),
    })));
  };

  router.get('/runs/:runId', session, async (ctx) => {
    const view = await ownRun(ctx);
    if (!view) return;
    const notice = typeof ctx.query.done === 'string' ? NOTICES[ctx.query.done] : undefined;
    await runPage(ctx, view, 200, notice ? { notice } : {});
  });
  router.get('/runs/:runId/events', session, async (ctx) => {
    const view = await ownRun(ctx);
    if (view) consoleRunEvents(ctx, deps, view);
  });

  const after = (ctx: Context, runId: string, done: string): void => void (ctx.status = 303, ctx.redirect(`/console/runs/${encodeURIComponent(runId)}?done=${done}`));
  /** The session's organization's run from describe alone (decisions and cancellations must not wait for a worker), or a 404 page. */
  const ownBrief = async (ctx: Context): Promise<RunBrief | undefined> => {
    const brief = await callTemporal(() => runs.brief(consoleState(ctx).session.orgId, String(ctx.params.runId ?? '')));
    if (!brief) refusePage(ctx, 404, 'No such run', 'This organization has no run with that ID.');
    return brief;
  };
  /** An action's answer that is no redirect (a refusal, a recorded decision): a short page back to the run; it reads nothing more of the run. */
  const actionPage = (ctx: Context, runId: string, status: number, title: string, message: string): void => {
    send(ctx, status, page({ title, csrf: consoleState(ctx).session.csrfToken, section: 'runs' }, html`<h1>${title}</h1>
<p${status >= 400 ? html` class="error"` : ''}>${message}</p>
<p><a href="/console/runs/${encodeURIComponent(runId)}">Back to run <code>${runId}</code></a></p>`));
  };
  router.post('/runs/:runId/decision', session, audited(APPROVAL_DECIDED, 'run', { param: 'runId' }), parseConsoleForm, csrf, async (ctx) => {
    const run = await ownBrief(ctx);
    if (!run) return;
    const form = DecisionFormSchema.safeParse(ctx.request.body);
    if (!form.success) return actionPage(ctx, run.runId, 400, 'Nothing decided', 'Choose Approve or Reject.');
    noteForAudit(ctx, { decision: form.data.decision });
    // a member decides as themselves: their e-mail must be one of the step's approvers
    const { member } = consoleState(ctx).session;
    const request = member ? { ...form.data, approver: member.email, memberId: member.id } : form.data;
    const outcome = await callDecide(() => runs.decide(consoleState(ctx).session.orgId, run, request));
    noteForAudit(ctx, decisionAuditFields(outcome, request.approver));
    if (!outcome.ok) return actionPage(ctx, run.runId, outcome.refusal === 'NOT_AN_APPROVER' ? 403 : 409, 'Decision refused', outcome.message);
    if (!outcome.applied) {
      return actionPage(ctx, run.runId, 202, 'Decision recorded', `Your ${form.data.decision === 'approve' ? 'approval' : 'rejection'} is recorded as decision ${outcome.decisionId}. `
        + 'The run has not answered yet (it is busy, or paused while its workers are away): the decision is applied when it resumes, unless the approval '
        + 'has been decided, or has ended, by then. The run\'s page shows what became of it.');
    }
    after(ctx, run.runId, form.data.decision);
  });
  router.post('/runs/:runId/cancel', session, audited(apiAction('/api/v1/runs/:runId/cancel'), 'run', { param: 'runId' }), parseConsoleForm, csrf, async (ctx) => {
    const run = await ownBrief(ctx);
    if (!run) return;
    if ((await callTemporal(() => runs.cancel(run))) === 'closed') return actionPage(ctx, run.runId, 409, 'Nothing to cancel', 'The run has already ended.');
    after(ctx, run.runId, 'cancel');
  });
  router.post('/runs/:runId/rerun', session, audited(apiAction('/api/v1/runs/:runId/rerun'), 'run', { param: 'runId' }), parseConsoleForm, csrf, async (ctx) => {
    const view = await ownRun(ctx);
    if (!view) return;
    const form = RerunFormSchema.safeParse(ctx.request.body);
    const started = await callTemporal(() => runs.rerun(view, form.success ? form.data.version : 'latest'));
    if (!started.ok) return runPage(ctx, view, 409, { error: started.message });
    noteForAudit(ctx, { runId: started.runId });
    after(ctx, started.runId, 'rerun');
  });
  router.post('/runs/:runId/resume', session, audited(apiAction('/api/v1/runs/:runId/resume'), 'run', { param: 'runId' }), parseConsoleForm, csrf, async (ctx) => {
    const view = await ownRun(ctx);
    if (!view) return;
    const started = await callTemporal(() => runs.resume(view));
    if (!started.ok) return runPage(ctx, view, started.code === 'STEPS_UNREAD' ? 503 : 409, { error: started.message });
    noteForAudit(ctx, { runId: started.runId });
    after(ctx, started.runId, 'resume');
  });
  router.get('/audit', session, async (ctx) => {
    const { session: s } = consoleState(ctx);
    // as GET /api/v1/audit: the admin's only (a member's session carries its role)
    if (!roleHas(s.role, 'audit.read')) throw permissionDenied(s, 'audit.read');
    // empty fields of the filter form are absent, not invalid
    const query: Record<string, string> = Object.fromEntries(Object.entries(ctx.query)
      .filter((entry): entry is [string, string] => ['action', 'actor', 'outcome', 'cursor'].includes(entry[0]) && typeof entry[1] === 'string' && entry[1] !== ''));
    const parsed = AuditQuerySchema.safeParse(query);
    const filter = { ...query };
    if (!parsed.success) {
      send(ctx, 400, page({ title: 'Audit', csrf: s.csrfToken, section: 'audit' }, auditBody({ filter, records: [], nextCursor: null, error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') })));
      return;
    }
    const { limit, ...auditFilter } = parsed.data;
    const listed = await deps.audit.list(s.orgId, auditFilter, limit);
    send(ctx, 200, page({ title: 'Audit', csrf: s.csrfToken, section: 'audit' }, auditBody({ filter, records: listed.records, nextCursor: listed.nextCursor })));
  });
  const positional = { deps, session, csrf, audited: auditedAt, apiAction };
  for (const add of families) add(router, { deps, kit, positional, shownOnce: services.shownOnce });
  return router;
}
