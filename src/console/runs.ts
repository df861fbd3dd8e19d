/**
 * What the console does with an organization's runs, through the services the API uses (RunService,
 * RunRestarts): no rule is implemented twice. Every call names the session's organization; a run of
 * another organization is reported exactly like a missing one (undefined).
 */
import type { CancelOutcome, DecideOutcome, RunBrief, RunListEntry, RunService, RunView } from '../runs/run-service';
import type { RunListFilter } from '../runs/run-list';
import type { RestartRefusal, Restarted, RunRestarts } from '../runs/run-restarts';
import type { Decision } from '../common/run-types';

export interface ConsoleRunsDeps {
  runs: RunService;
  restarts: RunRestarts;
}

export class ConsoleRuns {
  constructor(private readonly deps: ConsoleRunsDeps) {}

  list(orgId: string, filter: RunListFilter): Promise<RunListEntry[]> {
    return this.deps.runs.list(orgId, filter);
  }

  /** The organization's run, or undefined (missing, or another organization's). */
  async view(orgId: string, runId: string): Promise<RunView | undefined> {
    if (!/^[A-Za-z0-9_.:-]{1,200}$/.test(runId)) return undefined;
    const view = await this.deps.runs.view(runId);
    return view && view.memo.orgId === orgId ? view : undefined;
  }

  /** The organization's run from describe alone (no worker needed: for actions), or undefined (missing, or another organization's). */
  async brief(orgId: string, runId: string): Promise<RunBrief | undefined> {
    if (!/^[A-Za-z0-9_.:-]{1,200}$/.test(runId)) return undefined;
    const brief = await this.deps.runs.brief(runId);
    return brief && brief.memo.orgId === orgId ? brief : undefined;
  }

  /**
   * A decision on the approval the run waits on, as the organization's administrator (one actor,
   * one approval) or as a member (`memberId`): applied, recorded to be applied, or refused (RunService.decide).
   */
  async decide(orgId: string, run: RunBrief, request: { decision: Decision; approver?: string; comment?: string; memberId?: string; stepIndex?: number }): Promise<DecideOutcome> {
    return this.deps.runs.decide(run, {
      decision: request.decision, actor: request.memberId ? `member:${request.memberId}` : `console:${orgId}`, via: 'api',
      ...(request.stepIndex === undefined ? {} : { stepIndex: request.stepIndex }),
      ...(request.approver ? { approver: request.approver } : {}), ...(request.comment ? { comment: request.comment } : {}),
    });
  }

  /** 'closed' when the run had already ended */
  cancel(run: RunBrief): Promise<CancelOutcome> {
    return this.deps.runs.cancel(run);
  }

  rerun(view: RunView, version: 'latest' | 'same'): Promise<Restarted | RestartRefusal> {
    return this.deps.restarts.rerun(view, version);
  }

  resume(view: RunView): Promise<Restarted | RestartRefusal> {
    return this.deps.restarts.resume(view);
  }
}
