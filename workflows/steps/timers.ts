/**
 * `delay` and `waitUntil`: durable Temporal timers. While one runs the run is PAUSED with
 * `waitingOn: {kind: 'timer', resumeAt}`; a timer survives restarts of every worker and gateway.
 */
import { sleep } from '@temporalio/workflow';
import type { DelayStep, WaitUntilStep } from '../../src/common/steps';
import { durationMs } from '../../src/common/duration';
import { render as renderedText } from '../../src/common/interpolate';
import type { StepWaitingOn } from '../../src/common/run-types';
import { summary } from '../run/ui-metadata';
import { completed, failed, type Renderer, type StepDraft } from './step-draft';

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

export interface Pauser {
  /** the step's label with what one of its commands does (`3.1.2 · Pause: delay 1h`), for its timers' summaries */
  label(what: string): string;
  pause(waitingOn: StepWaitingOn): void;
  resume(): void;
}

async function waitFor(stepIndex: number, ms: number, pauser: Pauser, what: string): Promise<string> {
  const resumeAt = new Date(Date.now() + ms).toISOString();
  pauser.pause({ kind: 'timer', stepIndex, resumeAt });
  try {
    await sleep(ms, summary(pauser.label(what)));
  } finally {
    pauser.resume();
  }
  return resumeAt;
}

export async function delayStep(step: DelayStep, stepIndex: number, pauser: Pauser): Promise<StepDraft> {
  const ms = durationMs(step.duration);
  const resumedAt = await waitFor(stepIndex, ms, pauser, `delay ${step.duration}`);
  return completed(resumedAt, `waited ${step.duration}; resumed at ${resumedAt}\n`);
}

export async function waitUntilStep(step: WaitUntilStep, stepIndex: number, render: Renderer, pauser: Pauser): Promise<StepDraft> {
  const until = renderedText(await render(step.until)).trim();
  const instant = ISO_INSTANT.test(until) ? Date.parse(until) : NaN;
  if (Number.isNaN(instant)) return failed(`until is not an ISO 8601 instant with a time zone: ${JSON.stringify(until)}`);
  const ms = instant - Date.now();
  if (ms <= 0) return completed(new Date().toISOString(), `${until} has already passed; no wait\n`);
  const resumedAt = await waitFor(stepIndex, ms, pauser, `delay until ${until}`);
  return completed(resumedAt, `waited until ${until}; resumed at ${resumedAt}\n`);
}
