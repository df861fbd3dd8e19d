/**
 * Hosted forms (docs/console.md "Hosted forms"): a trigger can offer a form at a URL that needs no
 * header. The URL carries a random secret (`fgf_…`); the registry keeps only its SHA-256, so a
 * revoked form's URL is dead everywhere at once. A submission goes through the trigger service
 * exactly as an API trigger call does (resolve, prepare: the input schema, start); its attachments
 * are read by the same multipart reader under the same limits (the gateway's route does that).
 */
import { hashSecret, randomToken } from '../crypto/secrets';
import type { Registry, TriggerFormRecord } from '../registry';
import type { RunService, RunView } from '../runs/run-service';
import type { StartedRun, TriggerService, TriggerRefusal, TriggerTarget } from '../runs/trigger-service';

export const FORM_TOKEN_PREFIX = 'fgf_';
const PLAUSIBLE_FORM_TOKEN = /^fgf_[A-Za-z0-9_-]{20,100}$/;

export interface HostedFormsDeps {
  registry: Registry;
  triggers: TriggerService;
  runs: RunService;
}

export type OpenedForm = { ok: true; form: TriggerFormRecord } & TriggerTarget;

export interface Submission {
  inputs: Record<string, unknown> | '';
  /** blobs the request's files were written to (removed when the submission is refused) */
  storedKeys: string[];
}

export type SubmitOutcome =
  | ({ ok: true; started: StartedRun; automationId: string } & ({ done: true; view: RunView } | { done: false }))
  | TriggerRefusal;

export class HostedForms {
  constructor(private readonly deps: HostedFormsDeps) {}

  /** A new form URL secret for the organization's trigger; undefined for a trigger it does not have. */
  async create(orgId: string, triggerId: string, options: { wait: boolean }): Promise<{ form: TriggerFormRecord; token: string } | undefined> {
    const trigger = await this.deps.registry.triggers.get(triggerId);
    if (!trigger || trigger.orgId !== orgId) return undefined;
    const token = randomToken(FORM_TOKEN_PREFIX);
    const form = await this.deps.registry.triggerForms.create(orgId, triggerId, hashSecret(token), options.wait);
    return { form, token };
  }

  async list(orgId: string, triggerId: string): Promise<TriggerFormRecord[] | undefined> {
    const trigger = await this.deps.registry.triggers.get(triggerId);
    if (!trigger || trigger.orgId !== orgId) return undefined;
    return this.deps.registry.triggerForms.list(orgId, triggerId);
  }

  revoke(orgId: string, triggerId: string, formId: string): Promise<boolean> {
    return this.deps.registry.triggerForms.revoke(orgId, triggerId, formId);
  }

  /**
   * The form behind a URL secret and the version a run would start now. undefined: no such form
   * (never was, or revoked); a refusal: the trigger cannot start a run now (disabled, unpublished).
   */
  async open(token: string): Promise<OpenedForm | TriggerRefusal | undefined> {
    if (!PLAUSIBLE_FORM_TOKEN.test(token)) return undefined;
    const form = await this.deps.registry.triggerForms.findByHash(hashSecret(token));
    if (!form) return undefined;
    const target = await this.deps.triggers.resolve(form.orgId, form.triggerId);
    if (!target.ok) return target.code === 'UNKNOWN_TRIGGER' ? undefined : target;
    return { ok: true, form, trigger: target.trigger, version: target.version };
  }

  /**
   * Starts a run from a submission, as a trigger call does; a waiting form then waits up to
   * `waitMs` for the run's end. Throws what TriggerService.start throws.
   */
  async submit(opened: OpenedForm, submission: Submission, waitMs: number): Promise<SubmitOutcome> {
    const { triggers, runs } = this.deps;
    const run = await triggers.prepare(opened, {
      inputs: submission.inputs, coerce: true, startedBy: `form:${opened.form.id}`, storedKeys: submission.storedKeys,
    });
    if (!run.ok) return run;
    const started = await triggers.start(runs, run, undefined, { eager: opened.form.wait });
    const automationId = run.input.automationId;
    if (!opened.form.wait) return { ok: true, started, automationId, done: false };
    const outcome = await runs.waitFor(started.runId, waitMs);
    return outcome.done ? { ok: true, started, automationId, done: true, view: outcome.view } : { ok: true, started, automationId, done: false };
  }
}
