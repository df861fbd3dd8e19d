/**
 * `approval`: the run waits for human decisions. Decisions arrive through the `decide` update (the
 * API and approval links: a refused decision gets an answer) or the `approvalDecision` signal
 * (operators: `temporal workflow signal`); both go through validate() and record(). One rejection
 * rejects; `required` distinct approvals approve; the step's timeout applies its default decision.
 * Every decision records its actor, who sent it: the API key (`api-key:<id>`) for the API, the
 * approver for a link (bound to that approver), `operator-signal` for a signal. An API key counts
 * once: whatever approver names it gives, its second approval on a step is refused.
 */
import { ApplicationFailure, condition } from '@temporalio/workflow';
import { feature } from '../run/features';
import { summary } from '../run/ui-metadata';
import type { ApprovalStep } from '../../src/common/definition';
import { durationMs } from '../../src/common/duration';
import { render as renderedText } from '../../src/common/interpolate';
import { DecisionRefusal, type ApprovalDecision, type DecisionRequest, type WaitingOn } from '../../src/common/run-types';
import type { Pauser } from './timers';
import { completed, type Renderer, type StepDraft } from './step-draft';

type ApprovalWait = Extract<WaitingOn, { kind: 'approval' }>;

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
const decider = (request: DecisionRequest): string => request.approver ?? request.actor ?? 'operator';

/** Actors of decisions that arrive without a credential: Temporal's own access control vouched for them. */
const OPERATOR_SIGNAL = 'operator-signal';
const OPERATOR_UPDATE = 'operator-update';

/**
 * Runs that started their approval step before this patch count approvals by approver name alone;
 * replaying them must reach the same count at the same point, so they keep doing so.
 */
const ACTOR_VOTES_PATCH = 'approval-actor-votes';

function actorOf(request: DecisionRequest, via: ApprovalDecision['via']): string {
  if (via === 'link') return request.approver ?? decider(request);
  if (via === 'signal') return OPERATOR_SIGNAL;
  return request.actor ?? OPERATOR_UPDATE;
}

/** The API key behind a decision, when an API key sent it (the gateway sets `actor` for those). */
function apiKeyOf(decision: Pick<ApprovalDecision, 'via' | 'actor'>): string | undefined {
  return decision.via === 'api' && decision.actor !== OPERATOR_UPDATE ? decision.actor : undefined;
}

/** Distinct approvers who approved; with `perKey`, an API key's approvals after its first one do not count. */
function countApprovals(decisions: ApprovalDecision[], perKey: boolean): number {
  const approvers = new Set<string>();
  const keys = new Set<string>();
  for (const d of decisions) {
    if (d.decision !== 'approve') continue;
    const key = perKey ? apiKeyOf(d) : undefined;
    if (key !== undefined) {
      if (keys.has(key)) continue;
      keys.add(key);
    }
    approvers.add(d.approver.toLowerCase());
  }
  return approvers.size;
}

function refuse(type: keyof typeof DecisionRefusal, message: string): never {
  throw ApplicationFailure.create({ type: DecisionRefusal[type], message, nonRetryable: true });
}

export class ApprovalDesk {
  private current: ApprovalWait | undefined;

  /**
   * Throws an ApplicationFailure (type DecisionRefusal) when the decision cannot be taken now.
   * Replay-safe to tighten for updates: Temporal runs an update's validator only when the update
   * first arrives (never on replay), and a refused update leaves nothing in the history. Signals
   * are validated on replay too, which is why the rules for `via: 'signal'` stay as they were.
   */
  validate(request: DecisionRequest, via: ApprovalDecision['via']): void {
    const wait = this.current;
    if (!wait || (request.stepIndex !== undefined && request.stepIndex !== wait.stepIndex)) {
      refuse('NOT_WAITING', 'the run is not waiting for this approval (it was decided, timed out, or never asked)');
    }
    if (request.decision !== 'approve' && request.decision !== 'reject') refuse('NOT_WAITING', 'decision must be approve or reject');
    const { approver } = request;
    if (request.via === 'link' && !approver) refuse('NOT_AN_APPROVER', 'a link decides for its approver');
    if (approver !== undefined && !wait.approvers.some((a) => same(a, approver))) {
      refuse('NOT_AN_APPROVER', `${approver} is not an approver of step ${wait.stepIndex}`);
    }
    const who = decider(request);
    if (wait.decisions.some((d) => same(d.approver, who))) refuse('ALREADY_DECIDED', `${who} has already decided`);
    const key = apiKeyOf({ via, actor: actorOf(request, via) });
    const earlier = key === undefined || request.decision !== 'approve' ? undefined
      : wait.decisions.find((d) => d.decision === 'approve' && apiKeyOf(d) === key);
    if (earlier) {
      refuse('ALREADY_DECIDED', `${key} has already approved step ${wait.stepIndex} (as ${earlier.approver}); an API key counts as one approval whatever approver it names`);
    }
  }

  record(request: DecisionRequest, via: ApprovalDecision['via']): ApprovalDecision {
    const wait = this.current;
    if (!wait) refuse('NOT_WAITING', 'the run is not waiting for an approval');
    const decision: ApprovalDecision = {
      approver: decider(request),
      actor: actorOf(request, via),
      decision: request.decision,
      ...(request.comment ? { comment: request.comment.slice(0, 2000) } : {}),
      at: new Date().toISOString(),
      via,
    };
    wait.decisions.push(decision);
    return decision;
  }

  async wait(step: ApprovalStep, stepIndex: number, render: Renderer, pauser: Pauser): Promise<StepDraft> {
    const timeoutMs = durationMs(step.timeout);
    const wait: ApprovalWait = {
      kind: 'approval', stepIndex, deadline: new Date(Date.now() + timeoutMs).toISOString(),
      message: renderedText(await render(step.message)), required: step.required, approvers: step.approvers, decisions: [],
    };
    // Asked once, when the step starts waiting: the answer must not change while it waits.
    const perKey = feature(ACTOR_VOTES_PATCH);
    this.current = wait;
    pauser.pause(wait);
    const rejection = (): ApprovalDecision | undefined => wait.decisions.find((d) => d.decision === 'reject');
    const approvals = (): number => countApprovals(wait.decisions, perKey);
    let decided: boolean;
    try {
      decided = await condition(() => rejection() !== undefined || approvals() >= step.required, timeoutMs,
        summary(pauser.label(`approval by ${step.approvers.join(', ')} (${step.required} needed) within ${step.timeout}`)));
    } finally {
      this.current = undefined;
      pauser.resume();
    }
    const log = wait.decisions.map((d) => `${d.at} ${d.decision} by ${d.approver} via ${d.via} (actor ${d.actor})${d.comment ? `: ${d.comment}` : ''}`);
    const result = (outcome: string): string => JSON.stringify({ outcome, required: step.required, decisions: wait.decisions });
    const stdout = (last: string): string => [...log, last].join('\n') + '\n';

    if (decided && !rejection()) return completed(result('approved'), stdout(`approved (${approvals()} of ${step.required})`), 'json');
    const rejected = rejection();
    if (decided && rejected) return this.rejected(step, result('rejected'), stdout('rejected'), `rejected by ${rejected.approver}${rejected.comment ? `: ${rejected.comment}` : ''}`);
    const timedOut = `no decision within ${step.timeout}`;
    if (step.onTimeout === 'approve') return completed(result('approved by timeout'), stdout(`${timedOut}: approved by default`), 'json');
    if (step.onTimeout === 'reject') return this.rejected(step, result('rejected by timeout'), stdout(`${timedOut}: rejected by default`), `${timedOut}: rejected by default`);
    return { status: 'TIMEOUT', resultType: 'json', result: result('timed out'), exitCode: 124, stdout: stdout(`${timedOut}: the run fails`), error: timedOut };
  }

  private rejected(step: ApprovalStep, result: string, stdout: string, reason: string): StepDraft {
    if (step.onReject === 'continue') return completed(result, stdout, 'json');
    return { status: 'FAILED', resultType: 'json', result, exitCode: 1, stdout, error: reason };
  }
}
