/**
 * Starting a run through a trigger: the one sequence behind both the trigger route (HTTP) and the
 * `trigger` step (the resolveTrigger activity).
 *
 *   resolve  the trigger must belong to the caller's organization and its workflow be published;
 *   prepare  the inputs must fit the latest version's input schema; inputs too large for a
 *            Temporal payload go to the blob store and the run carries a reference;
 *   start    (trigger calls) starts the run on Temporal under a run ID chosen first, and settles a
 *            start whose outcome is unknown. A `trigger` step starts its run as a child workflow
 *            instead, which only workflow code can do.
 *
 * A refusal is a value with a code; each caller words it for its own audience (an HTTP status, a
 * failed step).
 */
import type { BlobStore } from '../blobs/blob-store';
import { LruCache } from '../cache/lru-cache';
import { INPUTS_REF_FIELD, isInputsReference } from '../common/inputs-reference';
import type { RunInput } from '../common/run-types';
import { orgSlotKey, type RunSlots, type SlotClaim } from '../common/slots';
import { runExecutionTimeoutMs, runLifetimeSeconds } from '../common/run-time-limit';
import { holdCallFiles } from '../retention/holds';
import type { Logger } from '../observability/logger';
import type { Registry, TriggerRecord, WorkflowVersion } from '../registry';
import type { PreparedRun, RunRequest, TriggerRefusal, TriggerRefusalCode, TriggerResolution, TriggerTarget } from './trigger-types';
import { checkInputs } from './input-schema';
import { inputsForRun, runInputFor } from './run-input';
import { runIdFor, StartInFlightError, type RunService, type StartOptions } from './run-service';
import { ownJson } from '../common/narrow';

export type { PreparedRun, RunRequest, TriggerRefusal, TriggerRefusalCode, TriggerResolution, TriggerTarget } from './trigger-types';

export interface StartedRun {
  runId: string;
  /** the Idempotency-Key named an earlier call's run: that run is the answer, this call's blobs are gone */
  replayed: boolean;
  /** the start failed but Temporal has the run: it may be an earlier call's run (with a key) */
  recovered: boolean;
}

/**
 * The start failed and Temporal could not say whether run `runId` exists. Its stored blobs are
 * kept: a few orphaned files cost less than a run whose files are gone.
 */
export class StartUnconfirmedError extends Error {
  constructor(readonly runId: string, readonly automationId: string, options?: { cause?: unknown }) {
    super(`the workflow service did not confirm whether run ${runId} started`, options);
    this.name = 'StartUnconfirmedError';
  }
}

export interface TriggerServiceDeps {
  registry: Registry;
  blobs: BlobStore;
  log: Pick<Logger, 'warn'>;
  /** the instance's concurrency limits (config.concurrency); unset: only triggers' own limits, waiting a day at most */
  limits?: { orgMaxRunning: number; slotMaxWaitSeconds: number; taskQueue?: string };
}

/** How long a limited run waits for its slots when no configuration says. */
const DEFAULT_SLOT_MAX_WAIT_SECONDS = 86_400;

/**
 * The concurrency limits a run started through `trigger` takes slots of, in the order it takes them
 * (the trigger's, then the organization's); undefined when none is in force. Runs started by a
 * `trigger` step have none: they run within their parent's slot (a parent waiting for a child that
 * waits for the parent's slot would never end).
 */
export function slotsFor(trigger: TriggerRecord, chained: boolean, limits?: TriggerServiceDeps['limits']): RunSlots | undefined {
  if (chained) return undefined;
  const claims: SlotClaim[] = [];
  // the instance's task queue is part of the key: instances sharing a Temporal namespace keep their own semaphores
  const at = limits?.taskQueue ? `@${limits.taskQueue}` : '';
  if (trigger.concurrency) {
    claims.push({ scope: 'trigger', key: `trigger:${trigger.id}${at}`, limit: trigger.concurrency.limit,
      ...(trigger.concurrency.mode === 'newest-wins' ? { mode: 'newest-wins' as const } : {}) });
  }
  if (limits && limits.orgMaxRunning > 0) claims.push({ scope: 'organization', key: orgSlotKey(trigger.orgId, limits.taskQueue), limit: limits.orgMaxRunning });
  return claims.length === 0 ? undefined : { claims, maxWaitSeconds: limits?.slotMaxWaitSeconds ?? DEFAULT_SLOT_MAX_WAIT_SECONDS };
}

/** What start() needs of the run service (the gateway's; a `trigger` step has none). */
export type RunStarts = Pick<RunService, 'start' | 'exists' | 'startedInputs'>;

function refusal(code: TriggerRefusalCode, message: string): TriggerRefusal {
  return { ok: false, code, message };
}

/** How many trigger revisions and published versions one process keeps (both immutable, LRU beyond this). */
const CACHED_TRIGGERS = 10_000;
const CACHED_VERSIONS = 2_000;

export class TriggerService implements TriggerResolution {
  private readonly triggers = new LruCache<string, TriggerRecord>({ maxEntries: CACHED_TRIGGERS, ttlMs: Infinity });
  private readonly versions = new LruCache<string, WorkflowVersion>({ maxEntries: CACHED_VERSIONS, ttlMs: Infinity });

  constructor(private readonly deps: TriggerServiceDeps) {}

  /** Another organization's trigger is reported exactly like a missing one. */
  async resolve(orgId: string, triggerId: string): Promise<({ ok: true } & TriggerTarget) | TriggerRefusal> {
    // What may change about a trigger (enabled or not, its revision: a change in place makes a new
    // one) is asked every time, in one query with the workflow's latest published version. A
    // trigger is kept per revision and a published version for good (it never changes), so a
    // change counts at once on every gateway, and a new publish too.
    const live = await this.deps.registry.triggers.liveState(triggerId);
    if (live === undefined) return refusal('UNKNOWN_TRIGGER', `no trigger ${triggerId}`);
    const trigger = await this.triggers.getOrLoad(`${triggerId}#${live.revision}`, () => this.deps.registry.triggers.get(triggerId));
    if (!trigger || trigger.orgId !== orgId) return refusal('UNKNOWN_TRIGGER', `no trigger ${triggerId}`);
    if (live.disabledAt !== null) return refusal('DISABLED', `trigger ${triggerId} is disabled (since ${live.disabledAt}); an administrator can enable it again`);
    const latest = live.publishedVersion;
    const version = latest ? await this.versions.getOrLoad(`${trigger.workflowId}@${latest}`, () => this.deps.registry.workflows.getVersion(trigger.workflowId, latest)) : undefined;
    if (!version) return refusal('NOT_PUBLISHED', `the workflow of trigger ${triggerId} has no published version`);
    return { ok: true, trigger, version };
  }

  /**
   * Checks the inputs and builds the run's input. On a refusal or an error, the request's stored
   * blobs (and any written here) are removed: nothing will read them.
   */
  async prepare(target: TriggerTarget, request: RunRequest): Promise<({ ok: true } & PreparedRun) | TriggerRefusal> {
    const { trigger, version } = target;
    const storedKeys = [...(request.storedKeys ?? [])];
    try {
      const problem = checkInputs({ cacheKey: `${version.workflowId}@${version.version}`, schema: version.definition.inputSchema, coerce: request.coerce },
        request.inputs === '' ? {} : request.inputs);
      if (problem) {
        await this.discard(storedKeys);
        return refusal(problem.code === 'invalid_inputs' ? 'INVALID_INPUTS' : 'INVALID_INPUT_SCHEMA', problem.message);
      }
      const { inputs, storedKey } = await inputsForRun(this.deps.blobs, trigger.orgId, request.inputs, request.inputsBlobName);
      if (storedKey) storedKeys.push(storedKey);
      // a paused workflow or trigger holds its new runs PENDING; a chained run runs within its parent, held or not
      const hold = request.chain === undefined ? await this.deps.registry.holds.forRun(trigger.orgId, trigger.workflowId, trigger.id) : undefined;
      const input = {
        ...runInputFor({
          orgId: trigger.orgId, version, triggerId: trigger.id, startedBy: request.startedBy, inputs, ...request.chain,
          callbackUrl: request.callbackUrl ?? trigger.callbackUrl ?? undefined, priority: trigger.priority,
          slots: slotsFor(trigger, request.chain !== undefined, this.deps.limits),
        }),
        ...(hold ? { hold: { scope: hold.scope, by: hold.by, at: hold.at, ...(hold.reason ? { reason: hold.reason } : {}) } } : {}),
      };
      return { ok: true, input, storedKeys };
    } catch (err) {
      await this.discard(storedKeys);
      throw err;
    }
  }

  /**
   * Starts the run. Its ID is chosen before the start (from the Idempotency-Key when there is one),
   * so a start that fails can still ask Temporal about that run; see settleFailedStart. Throws
   * StartUnconfirmedError, or the start's own error once the run is known not to exist.
   */
  async start(runs: RunStarts, run: PreparedRun, idempotencyKey?: string, options: StartOptions = {}): Promise<StartedRun> {
    const runId = runIdFor(run.input.orgId, run.input.triggerId, idempotencyKey);
    let replayed = false;
    let recovered = false;
    // A run that may outlive its call's files (24 h) holds them until its latest possible end.
    await holdCallFiles(this.deps.blobs, { orgId: run.input.orgId, runId, keys: run.storedKeys, timeoutMs: runExecutionTimeoutMs(runLifetimeSeconds(run.input)) });
    try {
      replayed = (await runs.start(run.input, idempotencyKey, runId, options)).existing;
    } catch (err) {
      await this.settleFailedStart(runs, runId, run, err);
      recovered = true;
    }
    // A retried call: the first call's run keeps the first call's files; this call's are unused.
    if (replayed) await this.discard(run.storedKeys);
    return { runId, replayed, recovered };
  }

  /** The inputs run `runId` was started with, as its caller sent them: stored inputs are read back. */
  async startedInputs(runs: RunStarts, runId: string): Promise<RunInput['inputs']> {
    const inputs = await runs.startedInputs(runId);
    if (!isInputsReference(inputs)) return inputs;
    const stored = await this.deps.blobs.read(inputs[INPUTS_REF_FIELD].key);
    return stored ? ownJson<RunInput['inputs']>(stored.toString('utf8')) : inputs;
  }

  /** Removes blobs nothing will read; a failure to remove one is logged, never thrown. */
  async discard(keys: readonly string[]): Promise<void> {
    const results = await Promise.allSettled(keys.map((key) => this.deps.blobs.remove(key)));
    for (const result of results) {
      if (result.status === 'rejected') this.deps.log.warn('could not remove a blob of a refused trigger call', { error: result.reason });
    }
  }

  /**
   * After a start that failed. UNAVAILABLE or DEADLINE_EXCEEDED (or an error we cannot read) may
   * come after the server created the workflow, and that run reads this call's stored inputs and
   * attachments: they are removed only once Temporal says it has no such workflow, and the start's
   * error then stands. When the run exists, this returns and the call goes on as started: the
   * caller gets its run. When Temporal cannot tell (unreachable), the blobs stay and this throws
   * StartUnconfirmedError: the run's status says whether it started, and a retry with the same
   * Idempotency-Key is safe either way. A start still under way (StartInFlightError) is not asked
   * about: it may yet create the run. Not covered: a start the server is still committing when
   * describe answers (a DEADLINE_EXCEEDED mid-write); that window is short and rare.
   */
  private async settleFailedStart(runs: RunStarts, runId: string, run: PreparedRun, startError: unknown): Promise<void> {
    if (startError instanceof StartInFlightError) {
      this.deps.log.warn('a run start did not answer and Temporal looks unreachable; its stored files are kept', { runId, error: startError, blobs: run.storedKeys });
      throw new StartUnconfirmedError(runId, run.input.automationId, { cause: startError });
    }
    let exists: boolean;
    try {
      exists = await runs.exists(runId);
    } catch (err) {
      this.deps.log.warn('a run start failed and Temporal could not say whether the run exists; its stored files are kept', {
        runId, error: startError, describeError: err, blobs: run.storedKeys,
      });
      throw new StartUnconfirmedError(runId, run.input.automationId, { cause: startError });
    }
    if (exists) {
      this.deps.log.warn('a run start failed but the run exists; answering as started', { runId, error: startError });
      return;
    }
    await this.discard(run.storedKeys);
    throw startError;
  }
}
