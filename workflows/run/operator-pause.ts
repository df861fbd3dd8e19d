/**
 * An operator's pause of a run (issue 54). The `operatorPause` update (the gateway: answered) and
 * the `operatorPauseRecorded` signal (the gateway's request the run did not answer in time, or one
 * sent by hand) set or lift the pause at once (`state.operatorPause`); the run holds at its next
 * step boundary: before any step of any list (top level or nested) starts, it waits in a Temporal
 * condition, PAUSED with `waitingOn: {kind: 'operator', by, at, reason}`. A condition wait issues no
 * command and holds no worker slot; the worker may even die meanwhile. A step running when the pause
 * arrives finishes first; a timer keeps its deadline (a delay that ends while the run is paused
 * completes its step, and the next one waits for the unpause).
 *
 * Deterministic for existing histories: the hold is gated by `patched(OPERATOR_PAUSE_PATCH)`, asked
 * only when a pause is in force at a boundary (a marker on paused runs alone, as slots-local-acquire
 * does for limited runs). A run whose history saw a pause request before this code (its signal had
 * no handler then) replays without holding, as it ran.
 *
 * A hold on new runs (a paused workflow or trigger, src/runs/run-holds.ts) comes in the run's input
 * (`hold`): the run waits before its first step and before its concurrency slots, PENDING with
 * `waitingOn: {kind: 'operator', scope, by, at, reason}`, until an unpause with that `scope` (the
 * release fan-out, workflows/release-held-runs.ts) or an unscoped one (an operator's unpause of this
 * run) arrives. An unpause with a scope never lifts the run's own pause. Gated by
 * `patched(OPERATOR_HOLD_PATCH)`, asked only by a run whose input has a hold: a run started with
 * one while an older worker (which ignored the field) ran it replays as it ran.
 */
import { condition, patched, setHandler } from '@temporalio/workflow';
import type { OperatorPause, PauseAnswer, PauseRequest, RunHold, RunState } from '../../src/common/run-types';
import { pauseSignal, pauseUpdate, stateQuery } from '../../src/common/workflow-contracts';
import { showDetails } from './ui-metadata';

export const OPERATOR_PAUSE_PATCH = 'operator-pause';
export const OPERATOR_HOLD_PATCH = 'operator-hold';

/** The actor of a request without one: only a signal sent by hand lacks it (Temporal's access control vouched for it). */
const BY_HAND = 'operator-signal';
const REASON_MAX = 500;

export class OperatorHold {
  private pause: OperatorPause | undefined;
  /** the lists holding at a boundary now (a parallel step's branches hold each) */
  private holding = 0;
  /** the hold on new runs the run waits in before its first step (beforeStart) */
  private held: RunHold | undefined;

  constructor(private readonly state: RunState) {}

  /** Registers the update and the signal; called first thing, so a PENDING run takes a pause too. */
  listen(): void {
    setHandler(pauseUpdate, (request) => this.apply(request), {
      validator: (request) => {
        if (typeof request.paused !== 'boolean') throw new Error('paused must be true or false');
      },
    });
    setHandler(pauseSignal, (request) => {
      if (typeof request.paused === 'boolean') this.apply(request);
    });
  }

  private apply(request: PauseRequest): PauseAnswer {
    if (!request.paused && (request.scope === undefined || request.scope === this.held?.scope)) this.held = undefined;
    if (!request.paused && request.scope !== undefined) {
      // the release of a workflow's or trigger's hold: the run's own pause stays
    } else if (request.paused) {
      // a second pause keeps the first one's who and when
      this.pause ??= {
        by: typeof request.by === 'string' && request.by !== '' ? request.by : BY_HAND,
        at: new Date().toISOString(),
        ...(typeof request.reason === 'string' && request.reason !== '' ? { reason: request.reason.slice(0, REASON_MAX) } : {}),
      };
      this.state.operatorPause = this.pause;
    } else {
      this.pause = undefined;
      delete this.state.operatorPause;
    }
    return { paused: this.pause !== undefined, ...(this.pause ? { pause: this.pause } : {}), status: this.state.status };
  }

  /**
   * Whether a pause is in force: the interpreter awaits boundary() only then, so that a run never
   * paused takes not one more microtask at a boundary (the order its parallel lists issue commands
   * in stays what its history holds).
   */
  inForce(): boolean {
    return this.pause !== undefined;
  }

  /**
   * Waits PENDING while the workflow or trigger the run was started under is paused (see the
   * header); at once for a history from before it.
   */
  async beforeStart(hold: RunHold): Promise<void> {
    if (!patched(OPERATOR_HOLD_PATCH)) return;
    this.held = hold;
    // the steps register it again; until then a status poll sees the run waiting
    setHandler(stateQuery, () => this.state);
    this.state.status = 'PENDING';
    this.state.waitingOn = { kind: 'operator', scope: hold.scope, by: hold.by, at: hold.at, ...(hold.reason ? { reason: hold.reason } : {}) };
    showDetails(`Waiting: its ${hold.scope} was paused by ${hold.by}${hold.reason ? `: ${hold.reason}` : ''}`);
    await condition(() => this.held === undefined);
    delete this.state.waitingOn;
    this.state.status = 'RUNNING';
    showDetails('');
  }

  /** Resolves when the pause in force is lifted (see the header); at once for a history from before it. */
  async boundary(): Promise<void> {
    const pause = this.pause;
    if (!pause || !patched(OPERATOR_PAUSE_PATCH)) return;
    this.holding++;
    const before = this.state.status;
    this.state.status = 'PAUSED';
    this.state.waitingOn = { kind: 'operator', ...pause };
    showDetails(`Paused by ${pause.by}${pause.reason ? `: ${pause.reason}` : ''}`);
    try {
      await condition(() => this.pause === undefined);
    } finally {
      this.holding--;
      if (this.holding === 0 && this.state.waitingOn?.kind === 'operator') {
        delete this.state.waitingOn;
        this.state.status = before === 'PAUSED' ? 'RUNNING' : before;
        showDetails('');
      }
    }
  }
}
