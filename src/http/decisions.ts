/**
 * Approval decisions over HTTP (the API, the admin API, approval links, the console): how a
 * RunService.decide outcome is answered (docs/http-api.md, "Approval decisions under load").
 *   applied   200 `{runId, automationId, decisionId, applied: true, decision}`
 *   recorded  202 `{runId, automationId, decisionId, applied: false, message, outcomeUrl}` and
 *             `Location: outcomeUrl`: the run did not answer in time; the decision is in its
 *             history and is applied (or refused) when the run resumes
 *   refused   403 not_an_approver, 409 already_decided or not_waiting, whatever the worker does
 *   503       Temporal unreachable (nothing done), or decision_unconfirmed (Temporal did not
 *             confirm the signal in time: the message names the decision to look up)
 */
import { z } from 'zod';
import type { DecisionRefusal } from '../common/run-types';
import { DecisionUnconfirmedError, type DecideOutcome, type RunView } from '../runs/run-service';
import type { GatewayDeps } from './deps';
import { HttpError, notFound } from './http-error';
import { callTemporal } from './temporal-errors';

/** A decision's body (the API key's route and the admin API's). */
export const DecisionBodySchema = z.object({
  decision: z.enum(['approve', 'reject']),
  approver: z.string().min(1).max(320).optional(),
  comment: z.string().max(2000).optional(),
}).strict();

/** The workflow's refusal of a decision, as an HTTP error. */
export function decisionRefusalError(refusal: keyof typeof DecisionRefusal, message: string): HttpError {
  if (refusal === 'NOT_AN_APPROVER') return new HttpError(403, 'not_an_approver', message);
  return new HttpError(409, refusal === 'ALREADY_DECIDED' ? 'already_decided' : 'not_waiting', message);
}

/** What a recorded decision's answer says. */
export const RECORDED_MESSAGE = 'the run did not answer within a few seconds (its worker is away or busy): the decision is recorded in its history '
  + 'and is applied, or refused, when the run resumes';

/** A decision ID as RunService makes them (a UUID): anything else names no decision. */
export const DECISION_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Runs a decision: Temporal unreachable is a 503 (callTemporal), a signal Temporal did not confirm a 503 naming the decision. */
export async function callDecide(fn: () => Promise<DecideOutcome>): Promise<DecideOutcome> {
  try {
    return await callTemporal(fn);
  } catch (err) {
    if (err instanceof DecisionUnconfirmedError) {
      throw new HttpError(503, 'decision_unconfirmed', `${err.message}: look decision ${err.decisionId} up before sending it again`, { expose: true, headers: { 'Retry-After': '5' } });
    }
    throw err;
  }
}

/** The answer to a decision that was applied (200) or recorded (202), for the API and the admin API. */
export function decisionAnswer(run: { runId: string; automationId: string }, outcome: Extract<DecideOutcome, { ok: true }>, outcomeUrl: string):
  { status: 200 | 202; body: Record<string, unknown>; location?: string } {
  if (outcome.applied) return { status: 200, body: { ...run, decisionId: outcome.decisionId, applied: true, decision: outcome.decision } };
  return { status: 202, body: { ...run, decisionId: outcome.decisionId, applied: false, message: RECORDED_MESSAGE, outcomeUrl }, location: outcomeUrl };
}

/** What became of decision `decisionId` of run `view` (404 when the run never heard of it). */
export async function decisionReportBody(deps: Pick<GatewayDeps, 'runs'>, view: RunView, decisionId: string): Promise<Record<string, unknown>> {
  const report = DECISION_ID_PATTERN.test(decisionId) ? await callTemporal(() => deps.runs.decisionReport(view, decisionId)) : undefined;
  if (!report) throw notFound('unknown_decision', `run ${view.runId} has no decision ${decisionId}`);
  return { runId: view.runId, automationId: view.memo.automationId, ...report };
}
