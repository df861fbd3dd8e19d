/**
 * What the Temporal Web UI (and `temporal workflow describe`) shows of a run: Temporal's user
 * metadata. A workflow start carries a one-line summary (the workflow's name and version and what
 * started it) and details; every activity, local activity and timer a run schedules carries a
 * summary naming its step (`2 · Shout (code)`, `3.1.2 · Pause (delay 1h)`, `time limit 1h`); a
 * paused run's current details say what it waits for. Pure: workflow code imports it.
 */
import type { Step } from './definition';
import type { RunInput, WaitingOn } from './run-types';

/** How a run came to be, when its input alone does not say (a tool server's MCP task). */
export type StartedVia = 'mcp-task' | 'agent';

const MAX_SUMMARY = 400;

function cut(text: string, max = MAX_SUMMARY): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** `1h`, `90s`, `2d 3h`: a duration in the largest units that keep it exact, at most two. */
export function shortDuration(ms: number): string {
  const units: [string, number][] = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]];
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(ms / 1000) * 1000);
  for (const [unit, size] of units) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.length ? parts.join(' ') : '0s';
}

/** What started the run, as the summary's second half. */
export function runOrigin(input: Omit<RunInput, 'runId'>, via?: StartedVia): string {
  if (via === 'mcp-task') return `MCP task (tool of trigger ${input.triggerId})`;
  if (input.type === 'SCHEDULE') return `schedule of trigger ${input.triggerId}`;
  if (input.origin) return `${input.origin.kind} of run ${input.origin.runId}`;
  if (input.parentRunId && (via === 'agent' || input.parentRunId.includes('-agent-'))) return `agent invocation ${input.parentRunId}`;
  if (input.parentRunId) return `parent run ${input.parentRunId}`;
  return `trigger ${input.triggerId}`;
}

/** The run's workflow summary: `Nightly report v3 · schedule of trigger t1`. */
export function runSummaryText(input: Omit<RunInput, 'runId'>, via?: StartedVia): string {
  return cut(`${input.automationName} v${input.automationVersion}${input.sourceCommit ? ` @${input.sourceCommit.slice(0, 12)}` : ''} · ${runOrigin(input, via)}`);
}

/** The run's workflow details (Markdown, shown under the summary). */
export function runDetailsText(input: Omit<RunInput, 'runId'>, via?: StartedVia): string {
  const steps = input.definition.steps.map((s, i) => `- ${stepLabel(String(i + 1), s)}`);
  return [
    `**${input.automationName}** version ${input.automationVersion} (automation ${input.automationId}, organization ${input.orgId})${input.sourceCommit ? `, applied from commit ${input.sourceCommit}` : ''}`,
    '',
    `Started by ${input.startedBy} through ${runOrigin(input, via)}; time limit ${shortDuration(input.definition.timeoutSeconds * 1000)}.`,
    '',
    ...steps,
  ].join('\n').slice(0, 4000);
}

/** A step's label: its address, name and kind, `3.1.2 · Shout (code)`. */
export function stepLabel(address: string, step: Pick<Step, 'name' | 'type'>): string {
  return cut(`${address} · ${step.name} (${step.type})`);
}

/** A step's label with what one of its commands does: `2 · Shout: record`. */
export function stepAction(address: string, step: Pick<Step, 'name'>, action: string): string {
  return cut(`${address} · ${step.name}: ${action}`);
}

/** What a paused run waits for, as its current details; undefined when it waits for nothing. */
export function waitingText(waitingOn: WaitingOn | undefined, stepName?: string): string {
  if (!waitingOn) return '';
  if (waitingOn.kind === 'slot') return `Pending: waits for a slot of its ${waitingOn.scope}'s concurrency limit (${waitingOn.limit})`;
  if (waitingOn.kind === 'operator') return cut(`Paused by ${waitingOn.by} at ${waitingOn.at}${waitingOn.reason ? `: ${waitingOn.reason}` : ''}`, 2000);
  const address = waitingOn.stepPath ?? String(waitingOn.stepIndex);
  const step = `step ${address}${stepName ? ` · ${stepName}` : ''}`;
  if (waitingOn.kind === 'timer') return `Paused: ${step} waits until ${waitingOn.resumeAt}`;
  const approved = waitingOn.decisions.filter((d) => d.decision === 'approve').length;
  return cut([
    `Paused: ${step} waits for approval by ${waitingOn.approvers.join(', ')}`,
    `(${approved} of ${waitingOn.required} approvals) until ${waitingOn.deadline}: ${waitingOn.message}`,
  ].join(' '), 2000);
}
