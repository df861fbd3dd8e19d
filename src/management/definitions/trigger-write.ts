/**
 * How apply writes a trigger (definitions as code, write.ts): a new one is created; a changed one
 * is brought to the folder's form.
 */
import { canonicalJson } from '../../registry';
import type { TriggerAdmin } from '../triggers';
import type { TriggerDoc } from './format';
import { onlyDiffer, verifyInput } from './forms';
import type { Step } from './live';

export interface TriggerWrite {
  orgId: string;
  step: Step;
  doc: TriggerDoc;
  workflowId: string;
  /** the live trigger's ID, when it exists */
  id: string | undefined;
  secrets: Record<string, string>;
}

const settled = <T>(outcome: { ok: true; value: T } | { ok: false; message: string }, what: string): T => {
  if (!outcome.ok) throw new Error(`${what}: ${outcome.message}`);
  return outcome.value;
};

/** Writes the trigger; answers its ID. */
export async function writeTrigger(triggers: TriggerAdmin, { orgId, step, doc, workflowId, id, secrets }: TriggerWrite): Promise<string> {
  const have = step.live?.form;
  const want = step.folderForm;
  const what = `trigger ${step.name}`;
  if (id && have && want && onlyDiffer(have, want, ['schedule', 'disabled'])) {
    if (canonicalJson(have.schedule) !== canonicalJson(want.schedule)) {
      if (want.schedule === undefined) settled(await triggers.deleteSchedule(orgId, id), what);
      else settled(await triggers.putSchedule(orgId, id, want.schedule), what);
    }
    if (Boolean(have.disabled) !== Boolean(want.disabled)) settled(await triggers.setDisabled(orgId, id, Boolean(want.disabled)), what);
    return id;
  }
  // any other change makes a new trigger (a new ID): the registry has no update of a trigger's other fields
  if (id) settled(await triggers.delete(orgId, id), what);
  const { verify, schedule: _schedule, disabled, workflow: _w, kind: _k, ...rest } = doc;
  const created = settled(await triggers.create(orgId, {
    ...rest, workflowId,
    ...(want?.schedule === undefined ? {} : { schedule: want.schedule }),
    ...(verify ? { verify: verifyInput(verify, secrets) } : {}),
  }), what);
  if (disabled) settled(await triggers.setDisabled(orgId, created.id, true), what);
  return created.id;
}
