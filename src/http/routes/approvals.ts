/**
 * Approval links: `GET /approvals/<token>` shows what is being approved with Approve and Reject
 * buttons; the form posts back to the same URL. The link alone authorizes its approver's one
 * decision; a used, expired or undecidable link answers 409 with a page that says why. A decision
 * the run does not answer in time (no worker, a slow one) is recorded to be applied when the run
 * resumes: 202 with a page that says so and names the decision (src/http/decisions.ts); the link's
 * page then shows what became of it.
 */
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import { z } from 'zod';
import type { ApprovalLinkClaims } from '../../crypto/approval-links';
import type { DecisionOutcome, WaitingOn } from '../../common/run-types';
import type { DecideOutcome, RunBrief, RunView } from '../../runs/run-service';
import type { GatewayDeps } from '../deps';
import { callTemporal } from '../temporal-errors';
import { credentialFingerprint, type AuditActor } from '../../audit/audit-trail';
import { hashSecret } from '../../crypto/secrets';
import { auditDecision, decisionAuditFields } from '../middleware/audit';
import { callDecide } from '../decisions';
import type { GatewayContext, GatewayRouter, GatewayRouterContext, GatewayState } from '../state';
import { escapeHtml, sendStandalonePage } from '../standalone-page';
import { mount, type Operations } from '../operation';

export const FormSchema = z.object({ decision: z.enum(['approve', 'reject']), comment: z.string().max(2000).optional() });

const html = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });

/** An approver's link: the signed token alone authorizes it. */
export const APPROVAL_LINK_OPERATIONS = {
  approvalPage: {
    method: 'get', path: '/approvals/:token',
    tags: ['approvals'], summary: 'An approval link: an HTML page with Approve and Reject', requestParams: { path: z.object({ token: z.string() }) },
    responses: { '200': html('the page'), '403': { description: 'invalid link (HTML)' }, '409': { description: 'expired or decided (HTML)' } },
  },
  approvalDecide: {
    method: 'post', path: '/approvals/:token',
    tags: ['approvals'], summary: 'The approval page\'s form: decide for the link\'s approver', requestParams: { path: z.object({ token: z.string() }) },
    requestBody: { content: { 'application/x-www-form-urlencoded': { schema: FormSchema } } },
    responses: {
      '200': html('decision applied (HTML)'), '202': html('decision recorded, applied when the run resumes; names the decision (HTML)'),
      '403': { description: 'invalid link (HTML)' }, '409': { description: 'cannot be decided now (HTML)' },
    },
  },
} satisfies Operations;

const APPROVAL_STYLE = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}
dt{font-weight:600;margin-top:.6rem}blockquote{white-space:pre-wrap;border-left:4px solid #ccc;margin:1rem 0;padding:.5rem 1rem;background:#f6f6f6}
textarea{width:100%;min-height:4rem}button{font-size:1rem;padding:.5rem 1.5rem;margin:1rem .5rem 0 0;cursor:pointer}
.approve{background:#1b7f3b;color:#fff;border:0}.reject{background:#b3261e;color:#fff;border:0}`;

function page(ctx: GatewayContext, status: number, title: string, body: string): void {
  sendStandalonePage(ctx, status, { title: escapeHtml(title), heading: escapeHtml(title), style: APPROVAL_STYLE, body });
}

type ApprovalWait = Extract<WaitingOn, { kind: 'approval' }>;

const DECISION_FORM = `<form method="post">
<label for="comment">Comment (optional)</label><textarea id="comment" name="comment" maxlength="2000"></textarea>
<button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button class="reject" type="submit" name="decision" value="reject">Reject</button>
</form>`;

/** What became of the latest decision sent through a link of this approver and step, if the run has said. */
function lastOutcome(view: RunView, claims: ApprovalLinkClaims): DecisionOutcome | undefined {
  return view.decisionOutcomes?.filter((o) => o.via === 'link' && o.stepIndex === claims.stepIndex && o.approver.toLowerCase() === claims.approver.toLowerCase()).pop();
}

function outcomeNote(outcome: DecisionOutcome): string {
  const which = `Your decision <code>${escapeHtml(outcome.decisionId)}</code> (<strong>${escapeHtml(outcome.decision)}</strong>)`;
  return outcome.outcome === 'applied'
    ? `<p>${which} was applied at ${escapeHtml(outcome.at)}.</p>`
    : `<p>${which} was refused at ${escapeHtml(outcome.at)}: ${escapeHtml(outcome.message ?? outcome.refusal ?? 'refused')}.</p>`;
}

/** The approval this link is for, if the run is waiting on it now. */
async function pendingApproval(deps: GatewayDeps, claims: ApprovalLinkClaims): Promise<{ view: RunView | undefined; waiting: ApprovalWait | undefined }> {
  const view = await callTemporal(() => deps.runs.view(claims.runId));
  const waiting = view?.waitingOn;
  if (!view || waiting?.kind !== 'approval' || waiting.stepIndex !== claims.stepIndex) return { view, waiting: undefined };
  return { view, waiting };
}

export function approvalRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>();
  const parseForm = koaBody({ json: false, urlencoded: true, multipart: false, text: false, formLimit: '16kb' });

  const claimsOf = (ctx: GatewayRouterContext): ApprovalLinkClaims | undefined => {
    const verdict = deps.approvalLinks.verify(ctx.params.token ?? '');
    if (verdict.status === 'invalid') {
      page(ctx, 403, 'This link is not valid', '<p>Check that the whole link was copied.</p>');
      return undefined;
    }
    if (verdict.status === 'expired') {
      page(ctx, 409, 'This approval has expired', '<p>The approval step timed out; no decision can be taken through this link.</p>');
      return undefined;
    }
    return verdict.claims;
  };

  /**
   * The audit record of a decision through a link: the approver the link names is the actor, a
   * fingerprint of the link the credential. The run's organization is read from the run (a
   * link carries none); a run Temporal does not know leaves the record to the log.
   */
  const auditLinkDecision = async (ctx: GatewayRouterContext, claims: ApprovalLinkClaims, run: RunBrief | undefined, decision: 'approve' | 'reject', status: number,
    outcome: DecideOutcome | undefined): Promise<void> => {
    if (!run) {
      deps.log.warn('an approval link decision is not in the audit trail: its run could not be read', { runId: claims.runId, stepIndex: claims.stepIndex, status });
      return;
    }
    const actor: AuditActor = {
      actor: `approver:${claims.approver}`, actorName: null, credentialKind: 'approval_link', credentialId: credentialFingerprint('lnk_', hashSecret(ctx.params.token ?? '')),
    };
    await auditDecision(deps.audit, ctx, actor, {
      orgId: run.memo.orgId, runId: claims.runId, decision, via: 'link', status,
      ...(outcome ? decisionAuditFields(outcome, claims.approver) : { refusal: 'NOT_WAITING' }), approver: claims.approver, stepIndex: claims.stepIndex,
    });
  };

  mount(router, APPROVAL_LINK_OPERATIONS.approvalPage, async (ctx) => {
    const claims = claimsOf(ctx);
    if (!claims) return;
    const { view, waiting } = await pendingApproval(deps, claims);
    const earlier = view ? lastOutcome(view, claims) : undefined;
    const told = earlier ? outcomeNote(earlier) : '';
    if (view?.stateUnread) {
      // the run does not answer (no worker, a slow one): whether it waits on this link is unknown, and a decision is still recorded
      page(ctx, 200, `Approval requested: ${view.memo.automationName}`, `${told}
<p>This run cannot show its approval right now: it is busy, or paused while its workers are away. You can still decide: a decision is
recorded at once and applied when the run resumes (unless the approval has been decided, or has ended, by then).</p>
<dl><dt>Run</dt><dd><code>${escapeHtml(view.runId)}</code>, started ${escapeHtml(view.memo.started)}</dd>
<dt>Approver</dt><dd>${escapeHtml(claims.approver)}</dd></dl>
${DECISION_FORM}`);
      return;
    }
    if (!view || !waiting) {
      page(ctx, 409, 'Nothing to decide', `${told}<p>This run is not waiting for this approval any more: it was decided, timed out, or the run ended.</p>`);
      return;
    }
    const mine = waiting.decisions.find((d) => d.approver.toLowerCase() === claims.approver.toLowerCase());
    if (mine) {
      page(ctx, 409, 'Already decided', `<p>${escapeHtml(claims.approver)} already chose <strong>${escapeHtml(mine.decision)}</strong> at ${escapeHtml(mine.at)}. This link works once.</p>`);
      return;
    }
    const stepName = view.memo.steps[claims.stepIndex - 1]?.name ?? `step ${claims.stepIndex}`;
    page(ctx, 200, `Approval requested: ${view.memo.automationName}`, `
<dl><dt>Workflow</dt><dd>${escapeHtml(view.memo.automationName)} (version ${view.memo.automationVersion})</dd>
<dt>Step</dt><dd>${escapeHtml(stepName)}</dd>
<dt>Run</dt><dd><code>${escapeHtml(view.runId)}</code>, started ${escapeHtml(view.memo.started)}</dd>
<dt>Approver</dt><dd>${escapeHtml(claims.approver)}</dd>
<dt>Decide by</dt><dd>${escapeHtml(waiting.deadline)}</dd>
<dt>Approvals</dt><dd>${waiting.decisions.filter((d) => d.decision === 'approve').length} of ${waiting.required} needed</dd></dl>
${told}${waiting.message ? `<blockquote>${escapeHtml(waiting.message)}</blockquote>` : ''}
${DECISION_FORM}`);
  });

  mount(router, APPROVAL_LINK_OPERATIONS.approvalDecide, parseForm, async (ctx) => {
    const claims = claimsOf(ctx);
    if (!claims) return;
    const form = FormSchema.safeParse(ctx.request.body);
    if (!form.success) {
      page(ctx, 400, 'Choose Approve or Reject', '<p>The form did not say which decision to take.</p>');
      return;
    }
    // describe alone: the answer must not wait for a worker
    const run = await callTemporal(() => deps.runs.brief(claims.runId));
    const outcome = run ? await callDecide(() => deps.runs.decide(run, {
      decision: form.data.decision, approver: claims.approver, stepIndex: claims.stepIndex, via: 'link',
      ...(form.data.comment ? { comment: form.data.comment } : {}),
    })) : undefined;
    const status = !outcome ? 409 : outcome.ok ? (outcome.applied ? 200 : 202) : outcome.refusal === 'NOT_AN_APPROVER' ? 403 : 409;
    await auditLinkDecision(ctx, claims, run, form.data.decision, status, outcome);
    if (!outcome?.ok) {
      const title = outcome?.refusal === 'ALREADY_DECIDED' ? 'Already decided' : 'Nothing to decide';
      page(ctx, status, title, `<p>${escapeHtml(outcome?.message ?? 'This run is unknown.')}</p>`);
      return;
    }
    if (!outcome.applied) {
      page(ctx, 202, 'Recorded', `<p>Your decision (<strong>${escapeHtml(form.data.decision)}</strong>) is recorded as decision <code>${escapeHtml(outcome.decisionId)}</code>.
The run has not answered yet (it is busy, or paused while its workers are away): your decision is applied when it resumes, unless the approval
has been decided, or has ended, by then. Open this link again to see whether it was applied.</p>`);
      return;
    }
    const verb = outcome.decision.decision === 'approve' ? 'Approved' : 'Rejected';
    page(ctx, 200, verb, `<p>Your decision (<strong>${escapeHtml(outcome.decision.decision)}</strong>) was recorded at ${escapeHtml(outcome.decision.at)}. You can close this page.</p>`);
  });
  return router;
}
