/**
 * Fairness and priority across organizations (docs/operations.md, "Fairness across
 * organizations"). Every run, agent invocation and code-agent task is started with its
 * organization as Temporal's fairness key, so one organization's backlog on the shared task queue
 * does not starve another's: Temporal dispatches the backlogged tasks of each key in turn. A
 * trigger or an agent may also set a priority (Temporal's priority key, 1 first .. 5 last; unset:
 * Temporal's default, 3), which orders tasks before fairness does.
 *
 * Child workflows and activities inherit both from the workflow that starts them (Temporal fills
 * in whatever a child's or activity's own options leave unset), so forEach chunks, agent steps,
 * callbacks and every activity of a run carry its organization and priority without being told;
 * only a chained run names its own trigger's priority (workflows/steps/chain.ts, engine level 7).
 *
 * Pure: workflow code imports it.
 */

/** Temporal's priority keys: 1 runs first; 5 (the dev server's and Temporal's default number of levels) last. */
export const PRIORITY_MIN = 1;
export const PRIORITY_MAX = 5;

/** Temporal refuses a fairness key over 64 bytes. */
export const FAIRNESS_KEY_MAX_BYTES = 64;

/** The engine level from which a chained run is started with its own trigger's priority (workflows/run/features.ts). */
export const PRIORITY_LEVEL = 7;

/** What a workflow start carries (Temporal's `Priority` shape; unset fields are inherited or defaulted). */
export interface StartPriority {
  fairnessKey: string;
  priorityKey?: number;
}

/**
 * The fairness key of an organization: its ID (`org_` and 16 ASCII characters, made by the
 * registry); an ID longer than Temporal allows, which flowgate never makes, is cut to fit.
 */
export function fairnessKeyOf(orgId: string): string {
  return orgId.length <= FAIRNESS_KEY_MAX_BYTES && /^[\x20-\x7e]*$/.test(orgId) ? orgId : cutToBytes(orgId);
}

function cutToBytes(text: string): string {
  let key = text;
  while (new TextEncoder().encode(key).length > FAIRNESS_KEY_MAX_BYTES) key = key.slice(0, -1);
  return key;
}

/** The priority a run, invocation or task of organization `orgId` is started with. */
export function startPriority(orgId: string, priority?: number | null): StartPriority {
  return { fairnessKey: fairnessKeyOf(orgId), ...(priority ? { priorityKey: priority } : {}) };
}
