/**
 * The inverses of an apply's changes (undo.ts): each reads the object as it is before the write and
 * answers a function that brings it back, through the same operations as the write, comparing first
 * so that a write that never happened (or happened in part) is undone only as far as it went.
 */
import { canonicalJson } from '../../registry';
import type { TriggerRecord, TriggerScheduleRecord } from '../../registry';
import { VerifyChangeSchema } from '../../triggers/webhooks/config';
import type { UpdateTriggerInput } from '../schemas';
import { RoleSchema } from '../schemas';
import { scheduleForm } from './forms';
import type { DefinitionWriteDeps, ServerWrite } from './ports';
import { settled } from './undo';

/** Puts the object back; `false`: it was as before (the write never happened). */
type Restore = () => Promise<void | false>;

/** A member back to the role they had. */
export function restoreMember(deps: DefinitionWriteDeps, orgId: string, id: string, role: unknown): Restore {
  const previous = RoleSchema.parse(role);
  return async () => {
    settled(await deps.members.update(orgId, id, { role: previous }));
  };
}

/** A connection back to its name and credentials (opened before the write; they are sealed again under the same PCID). */
export async function restoreConnection(deps: DefinitionWriteDeps, orgId: string, id: string, name: string): Promise<Restore> {
  const opened = await deps.connections.open(orgId, id);
  return async () => {
    if (!opened) throw new Error('its credentials could not be read before the apply');
    if (!(await deps.connections.replace(orgId, id, name, opened.credentials))) throw new Error('gone');
  };
}

/**
 * A workflow back to its published definition and draft. A version published by the apply cannot
 * be withdrawn (runs may have started on it): the previous definition is published again as the
 * next version, with the commit it carried.
 */
export async function restoreWorkflow(deps: DefinitionWriteDeps, orgId: string, id: string): Promise<Restore> {
  const { registry, workflows } = deps;
  const was = await registry.workflows.get(orgId, id);
  const published = was?.publishedVersion ? await registry.workflows.getVersion(id, was.publishedVersion) : undefined;
  return async () => {
    if (!was) return false;
    let now = await registry.workflows.get(orgId, id);
    if (!now) throw new Error('gone');
    if (now.publishedVersion === was.publishedVersion && canonicalJson(now.draft) === canonicalJson(was.draft)) return false;
    let kept: string | undefined;
    if (now.publishedVersion !== was.publishedVersion) {
      if (published) {
        now = settled(await workflows.updateDraft(orgId, id, published.definition));
        settled(await workflows.publish(orgId, id, published.sourceCommit));
      } else kept = `version ${now.publishedVersion ?? ''} stays published (the workflow had none before)`;
    }
    if (canonicalJson(now.draft) !== canonicalJson(was.draft)) settled(await workflows.updateDraft(orgId, id, was.draft));
    if (kept) throw new Error(kept);
  };
}

/** A custom server back to its document or URL, name, description, connection and durable policy (listed again, as a replace is). */
export async function restoreServer(deps: DefinitionWriteDeps, orgId: string, id: string): Promise<Restore> {
  const was = await deps.registry.toolServers.get(orgId, id);
  const fields = (r: NonNullable<typeof was>) => canonicalJson([r.name, r.description, r.connectionId, r.source, r.durable, r.durableTools]);
  return async () => {
    if (!was) return false;
    const now = await deps.registry.toolServers.get(orgId, id);
    if (!now) throw new Error('gone');
    if (fields(now) === fields(was)) return false;
    const common = {
      name: was.name, description: was.description,
      ...(was.durable ? { durable: was.durable } : {}), ...(was.durableTools ? { durableTools: was.durableTools } : {}),
    };
    const input: ServerWrite = was.kind === 'openapi'
      ? { kind: 'openapi', ...common, connection: was.connectionId ?? '', document: JSON.parse(was.source) }
      : { kind: 'remote', ...common, ...(was.connectionId ? { connection: was.connectionId } : {}), url: was.source };
    if (!(await deps.servers.replace(orgId, id, input))) throw new Error('gone');
  };
}

/** An agent back to every field it had. */
export async function restoreAgent(deps: DefinitionWriteDeps, orgId: string, id: string): Promise<Restore> {
  const was = await deps.registry.agents.get(orgId, id);
  return async () => {
    if (!was) return false;
    const fields = ({ name, description, instructions, outputSchema, servers, workflows, model, limits, priority }: typeof was) =>
      ({ name, description, instructions, outputSchema, servers, workflows, model, limits, priority });
    const now = await deps.registry.agents.get(orgId, id);
    if (!now) throw new Error('gone');
    if (canonicalJson(fields(now)) === canonicalJson(fields(was))) return false;
    await deps.agents.update(orgId, id, fields(was));
  };
}

const triggerFields = (t: TriggerRecord) => canonicalJson([t.workflowId, t.designatedOutput, t.tool, t.callbackUrl, t.priority, t.concurrency, t.verify, t.shaping]);
const scheduleFields = (s: TriggerScheduleRecord | undefined) => canonicalJson(s ? [s.config, s.paused, s.note] : null);

/**
 * A trigger back to its fields (changed in place: the same ID), its schedule and whether it is
 * disabled; a verification the apply removed comes back with the sealed secrets it held.
 */
export async function restoreTrigger(deps: DefinitionWriteDeps, orgId: string, id: string): Promise<Restore> {
  const { registry, triggers } = deps;
  const was = await registry.triggers.get(id);
  const schedule = await registry.schedules.get(orgId, id);
  const sealed = was?.verify ? await registry.triggerWebhooks.secrets(id) : undefined;
  return async () => {
    if (!was) return false;
    const now = await registry.triggers.get(id);
    if (!now || now.orgId !== orgId) throw new Error('gone');
    const scheduleNow = await registry.schedules.get(orgId, id);
    const disabledChanged = (now.disabledAt === null) !== (was.disabledAt === null);
    if (triggerFields(now) === triggerFields(was) && scheduleFields(scheduleNow) === scheduleFields(schedule) && !disabledChanged) return false;
    if (triggerFields(now) !== triggerFields(was)) {
      const shaping = was.shaping;
      const change: UpdateTriggerInput = {
        workflowId: was.workflowId, designatedOutput: was.designatedOutput, tool: was.tool, callbackUrl: was.callbackUrl, priority: was.priority, concurrency: was.concurrency,
        // a verified trigger keeps its secrets through an options change; one made an API key trigger gets them back below
        ...(was.verify ? (now.verify ? { verify: VerifyChangeSchema.parse(was.verify) } : {}) : { verify: null }),
        debounce: shaping && 'debounce' in shaping ? shaping.debounce : null, batch: shaping && 'batch' in shaping ? shaping.batch : null,
      };
      settled(await triggers.update(orgId, id, change));
      if (was.verify && !now.verify) {
        if (!sealed) throw new Error('its signing secrets could not be read before the apply');
        await registry.triggers.update(orgId, id, { verify: was.verify, sealedSecrets: sealed.sealed });
      }
    }
    if (scheduleFields(scheduleNow) !== scheduleFields(schedule)) {
      if (schedule) settled(await triggers.putSchedule(orgId, id, scheduleForm(schedule.config, schedule.paused, schedule.note)));
      else settled(await triggers.deleteSchedule(orgId, id));
    }
    if (disabledChanged) settled(await triggers.setDisabled(orgId, id, was.disabledAt !== null));
  };
}
