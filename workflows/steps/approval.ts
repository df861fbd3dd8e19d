/**
 * `approval`: the run waits for human decisions. Decisions arrive through the `decide` update (the
 * API and approval links: a refused decision gets an answer), the `recordedDecision` signal (the
 * gateway's decision whose update the run did not answer in time: applied or refused when the run
 * reads it, apply()) or the `approvalDecision` signal (operators: `temporal workflow signal`); all
 * go through validate() and record(). A gateway decision carries a `decisionId`: its update and its
 * signal count once, and what became of it is noted (DecisionOutcome). One rejection
 * rejects; `required` distinct approvals approve; the step's timeout applies its default decision.
 * Every decision records its actor, who sent it: the API key (`api-key:<id>`) for the API, the
 * approver for a link (bound to that approver), `operator-signal` for a signal. An API key counts
 * once: whatever approver names it gives, its second approval on a step is refused.
 */
import { ApplicationFailure, condition } from '@temporalio/workflow';
import { feature } from '../run/features';
import { summary } from '../run/ui-metadata';
import type { ApprovalStep } from '../../src/common/steps';
import { durationMs } from '../../src/common/duration';
import { render as renderedText } from '../../src/common/interpolate';
import { DecisionRefusal, type ApprovalDecision, type DecidedApproval, type DecisionOutcome, type DecisionRequest, type RecordedDecision, type WaitingOn } from '../../src/common/run-types';
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

function refusalOf(err: unknown): keyof typeof DecisionRefusal | undefined {
  if (!(err instanceof ApplicationFailure)) return undefined;
  const { type } = err;
  return type === 'NOT_WAITING' || type === 'ALREADY_DECIDED' || type === 'NOT_AN_APPROVER' ? type : undefined;
}

/** Decision IDs remembered to count a decision's update and signal once (far more than a run's decisions). */
const DECISIONS_REMEMBERED = 1000;

interface Seen {
  outcome: DecisionOutcome;
  /** an applied decision as recorded: its update, arriving after its signal, answers it again */
  decision?: ApprovalDecision;
}

export class ApprovalDesk {
  private current: ApprovalWait | undefined;
  /** the gateway's decisions applied or refused so far, by decisionId */
  private readonly seen = new Map<string, Seen>();

  /** `noted`: told each gateway decision's outcome once (the run keeps them in its state) */
  constructor(private readonly noted: (outcome: DecisionOutcome) => void = () => undefined) {}

  /**
   * Throws an ApplicationFailure (type DecisionRefusal) when the decision cannot be taken now.
   * Replay-safe to tighten for updates: Temporal runs an update's validator only when the update
   * first arrives (never on replay), and a refused update leaves nothing in the history. Signals
   * are validated on replay too, which is why the rules for `via: 'signal'` stay as they were; and
   * so are recorded decisions (apply(), via `api` and `link`): a rule tightened for those must be
   * gated by an engine level (docs/architecture.md), or a replayed run could refuse what it applied.
   * A decision already seen (its signal came before its update) is refused again if it was refused,
   * and passes if it was applied: record() then answers it without counting it twice.
   */
  validate(request: DecisionRequest, via: ApprovalDecision['via']): void {
    const seen = request.decisionId === undefined ? undefined : this.seen.get(request.decisionId);
    if (seen) {
      if (seen.outcome.outcome === 'applied') return;
      refuse(seen.outcome.refusal ?? 'NOT_WAITING', seen.outcome.message ?? 'this decision was refused');
    }
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

  /** Records a decision validate() let through; answers it with the step it was recorded on. */
  record(request: DecisionRequest, via: ApprovalDecision['via']): DecidedApproval {
    const earlier = request.decisionId === undefined ? undefined : this.seen.get(request.decisionId);
    if (earlier?.decision) return { ...earlier.decision, ...(earlier.outcome.stepIndex === undefined ? {} : { stepIndex: earlier.outcome.stepIndex }) };
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
    if (request.decisionId !== undefined && via !== 'signal') {
      this.note({ decisionId: request.decisionId, outcome: 'applied', stepIndex: wait.stepIndex, decision: decision.decision, approver: decision.approver, via, at: decision.at }, decision);
    }
    return { ...decision, stepIndex: wait.stepIndex };
  }

  /**
   * A decision the gateway recorded (the `recordedDecision` signal) because the run did not answer
   * its update in time: applied as the update would have been, or refused (the refusal is noted,
   * never thrown: a signal has no one to answer). Its update may have come first: then it was
   * already counted, and this one is not.
   */
  apply(request: RecordedDecision): void {
    if (this.seen.has(request.decisionId)) return;
    const via = request.via === 'link' ? 'link' : 'api';
    try {
      this.validate(request, via);
    } catch (err) {
      const refusal = refusalOf(err);
      if (!refusal) throw err;
      const stepIndex = request.stepIndex ?? this.current?.stepIndex;
      this.note({
        decisionId: request.decisionId, outcome: 'refused', ...(stepIndex === undefined ? {} : { stepIndex }),
        decision: request.decision, approver: decider(request), via, refusal, message: err instanceof Error ? err.message : String(err), at: new Date().toISOString(),
      });
      return;
    }
    this.record(request, via);
  }

  private note(outcome: DecisionOutcome, decision?: ApprovalDecision): void {
    this.seen.set(outcome.decisionId, { outcome, ...(decision ? { decision } : {}) });
    if (this.seen.size > DECISIONS_REMEMBERED) {
      const oldest = this.seen.keys().next();
      if (!oldest.done) this.seen.delete(oldest.value);
    }
    this.noted(outcome);
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
