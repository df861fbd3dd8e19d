/**
 * The rollback of an apply (definitions as code, index.ts): the writes go through the management
 * operations, each with its own transaction and effects outside the registry (Temporal schedules, a
 * remote server listed for its tools), so one transaction cannot hold them. Instead each write
 * leaves its inverse on an undo list (write.ts; the inverses of changes are in restore.ts), and a
 * write refused after the checks runs the list newest first: what was written last is undone first,
 * so an object is put back before what it names (an agent before the trigger it starts). An undo
 * that fails is reported and the others still run. Deletes (prune) come last and are never undone.
 */

/** One inverse: what it puts back (`kind/name`) and how; `false`: there was nothing to put back (the write never happened). */
export interface UndoStep {
  what: string;
  run(): Promise<void | false>;
}

/** What a rollback did: the undos that ran, and those that failed with why. */
export interface RollbackReport {
  undone: string[];
  failed: { what: string; reason: string }[];
}

export class UndoList {
  private readonly steps: UndoStep[] = [];

  /** `what` is put back by `run`; a second inverse of the same object runs before the first. */
  push(what: string, run: () => Promise<void | false>): void {
    this.steps.push({ what, run });
  }

  get size(): number {
    return this.steps.length;
  }

  /** Runs every inverse, newest first; each failure is recorded and the next one runs. The list is emptied. */
  async rollback(): Promise<RollbackReport> {
    const report: RollbackReport = { undone: [], failed: [] };
    for (const step of this.steps.splice(0).reverse()) {
      try {
        if ((await step.run()) !== false) report.undone.push(step.what);
      } catch (error) {
        report.failed.push({ what: step.what, reason: messageOf(error) });
      }
    }
    return report;
  }
}

/** A write refused after the checks, naming the object it was writing. */
export class ApplyWriteError extends Error {
  override readonly name = 'ApplyWriteError';
  constructor(readonly object: string, reason: string, readonly deleting = false) {
    super(reason);
  }
}

/** Runs one write of `object` (`kind/name`); a refusal is thrown naming it. */
export async function writing<T>(object: string, write: () => Promise<T>, deleting = false): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof ApplyWriteError) throw error;
    // `trigger nightly: …` from a refusal: the object is named once
    const [kind, ...name] = object.split('/');
    const prefix = [`${object}: `, `${kind ?? ''} ${name.join('/')}: `].find((p) => messageOf(error).startsWith(p));
    throw new ApplyWriteError(object, messageOf(error).slice(prefix?.length ?? 0), deleting);
  }
}

/** An operation's outcome's value, or its refusal thrown (named by `what` when given). */
export function settled<T>(outcome: { ok: true; value: T } | { ok: false; message: string }, what?: string): T {
  if (!outcome.ok) throw new Error(what === undefined ? outcome.message : `${what}: ${outcome.message}`);
  return outcome.value;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The secret-free facts of a failed apply its audit record keeps (short strings only: the trail drops longer ones). */
export interface ApplyFailure {
  failedAt: string;
  reason: string;
  rolledBack: boolean;
  notUndone: string[];
  deletedBefore: string[];
}

/** What failed, and how the rollback went, as facts and as the answer's sentence (naming what was not put back and why). */
export function applyFailure(error: unknown, report: RollbackReport, deletedBefore: string[]): { facts: ApplyFailure; message: string } {
  const failedAt = error instanceof ApplyWriteError ? error.object : 'apply';
  const reason = messageOf(error);
  const parts = [`apply failed at ${failedAt}: ${reason}`];
  if (report.undone.length === 0 && report.failed.length === 0) parts.push('nothing had been written before it');
  else if (report.failed.length === 0) parts.push(`rolled back: every write before it was undone (${report.undone.join(', ')})`);
  else {
    parts.push(`rolled back in part: undone ${report.undone.join(', ') || 'nothing'}`);
    parts.push(`not undone: ${report.failed.map((f) => `${f.what} (${f.reason})`).join(', ')}`);
  }
  if (deletedBefore.length > 0) parts.push(`deleted before it, which a rollback cannot bring back: ${deletedBefore.join(', ')}`);
  const facts: ApplyFailure = {
    failedAt, reason: reason.length > 200 ? `${reason.slice(0, 199)}…` : reason,
    rolledBack: report.failed.length === 0, notUndone: report.failed.map((f) => f.what), deletedBefore,
  };
  return { facts, message: parts.join('; ') };
}
