/**
 * How apply writes a trigger (definitions as code, write.ts): a new one is created; a changed one
 * is changed in place (TriggerAdmin.update: the same ID, so its URL, keys, forms and secrets stay),
 * its schedule and `disabled` through their own calls.
 */
import { canonicalJson } from '../../registry';
import type { TriggerAdmin } from '../triggers';
import type { UpdateTriggerInput } from '../schemas';
import { VerifyChangeSchema } from '../../triggers/webhooks/config';
import type { TriggerDoc } from './format';
import { onlyDiffer, verifyInput } from './forms';
import type { Step } from './live';
import { settled } from './undo';

export interface TriggerWrite {
  orgId: string;
  step: Step;
  doc: TriggerDoc;
  workflowId: string;
  /** the live trigger's ID, when it exists */
  id: string | undefined;
  secrets: Record<string, string>;
  /** told the new trigger's ID as soon as it exists (its delete goes on the undo list before the writes that follow) */
  created?: (id: string) => void;
}

/**
 * The folder's trigger as a change in place: every field it leaves out is removed. A verified
 * trigger keeps its secrets (they rotate through their own call); one that becomes verified takes
 * the values of its references.
 */
export function triggerChange(doc: TriggerDoc, workflowId: string, wasVerified: boolean, secrets: Record<string, string>): UpdateTriggerInput {
  let verify: UpdateTriggerInput['verify'] = null;
  if (doc.verify) {
    const { secretRefs: _refs, ...options } = doc.verify;
    verify = wasVerified ? VerifyChangeSchema.parse(options) : verifyInput(doc.verify, secrets);
  }
  return {
    workflowId, designatedOutput: doc.designatedOutput ?? null, tool: doc.tool ?? null, callbackUrl: doc.callbackUrl ?? null,
    priority: doc.priority ?? null, concurrency: doc.concurrency ?? null, verify, debounce: doc.debounce ?? null, batch: doc.batch ?? null,
  };
}

/** Writes the trigger; answers its ID. */
export async function writeTrigger(triggers: TriggerAdmin, { orgId, step, doc, workflowId, id, secrets, created: onCreated }: TriggerWrite): Promise<string> {
  const have = step.live?.form;
  const want = step.folderForm;
  const what = `trigger ${step.name}`;
  if (id && have && want) {
    if (!onlyDiffer(have, want, ['schedule', 'disabled'])) settled(await triggers.update(orgId, id, triggerChange(doc, workflowId, have.verify !== undefined, secrets)), what);
    if (canonicalJson(have.schedule) !== canonicalJson(want.schedule)) {
      if (want.schedule === undefined) settled(await triggers.deleteSchedule(orgId, id), what);
      else settled(await triggers.putSchedule(orgId, id, want.schedule), what);
    }
    if (Boolean(have.disabled) !== Boolean(want.disabled)) settled(await triggers.setDisabled(orgId, id, Boolean(want.disabled)), what);
    return id;
  }
  const { verify, schedule: _schedule, disabled, workflow: _w, kind: _k, ...rest } = doc;
  const created = settled(await triggers.create(orgId, {
    ...rest, workflowId,
    ...(want?.schedule === undefined ? {} : { schedule: want.schedule }),
    ...(verify ? { verify: verifyInput(verify, secrets) } : {}),
  }), what);
  onCreated?.(created.id);
  if (disabled) settled(await triggers.setDisabled(orgId, created.id, true), what);
  return created.id;
}
