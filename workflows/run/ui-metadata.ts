/**
 * Level 6: the run's commands carry Temporal user metadata, so the Temporal Web UI tells the run's
 * story (src/common/run-labels.ts): each activity, local activity and timer a summary naming its
 * step, each child workflow a summary and details, and a paused run's current details what it
 * waits for. Runs below level 6 (and runs without a level) schedule their commands as before.
 */
import { setCurrentDetails } from '@temporalio/workflow';
import { atLevel } from './features';

/** The engine level at which runs label their commands. */
export const UI_METADATA_LEVEL = 6;

export function labelled(): boolean {
  return atLevel(UI_METADATA_LEVEL);
}

/** `{ summary }` for an activity's or timer's options when the run labels its commands, else nothing. */
export function summary(text: string): { summary?: string } {
  return labelled() ? { summary: text } : {};
}

/** `{ staticSummary, staticDetails }` for a child workflow's options when the run labels its commands. */
export function childMetadata(staticSummary: string, staticDetails?: string): { staticSummary?: string; staticDetails?: string } {
  return labelled() ? { staticSummary, ...(staticDetails === undefined ? {} : { staticDetails }) } : {};
}

/** The run's current details (the UI shows them, `describe()` answers them); '' clears them. */
export function showDetails(text: string): void {
  if (labelled()) setCurrentDetails(text);
}
