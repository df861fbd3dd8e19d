/**
 * `delay` and `waitUntil`: durable Temporal timers. While one runs the run is PAUSED with
 * `waitingOn: {kind: 'timer', resumeAt}`; a timer survives restarts of every worker and gateway.
 */
import { sleep } from '@temporalio/workflow';
import type { DelayStep, WaitUntilStep } from '../../src/common/definition';
import { durationMs } from '../../src/common/duration';
import { render as renderedText } from '../../src/common/interpolate';
import type { WaitingOn } from '../../src/common/run-types';
import { completed, failed, type Renderer, type StepDraft } from './step-draft';

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

export interface Pauser {
  pause(waitingOn: WaitingOn): void;
  resume(): void;
}

async function waitFor(stepIndex: number, ms: number, pauser: Pauser): Promise<string> {
  const resumeAt = new Date(Date.now() + ms).toISOString();
  pauser.pause({ kind: 'timer', stepIndex, resumeAt });
  try {
    await sleep(ms);
  } finally {
    pauser.resume();
  }
  return resumeAt;
}

export async function delayStep(step: DelayStep, stepIndex: number, pauser: Pauser): Promise<StepDraft> {
  const ms = durationMs(step.duration);
  const resumedAt = await waitFor(stepIndex, ms, pauser);
  return completed(resumedAt, `waited ${step.duration}; resumed at ${resumedAt}\n`);
}

export async function waitUntilStep(step: WaitUntilStep, stepIndex: number, render: Renderer, pauser: Pauser): Promise<StepDraft> {
  const until = renderedText(await render(step.until)).trim();
  const instant = ISO_INSTANT.test(until) ? Date.parse(until) : NaN;
  if (Number.isNaN(instant)) return failed(`until is not an ISO 8601 instant with a time zone: ${JSON.stringify(until)}`);
  const ms = instant - Date.now();
  if (ms <= 0) return completed(new Date().toISOString(), `${until} has already passed; no wait\n`);
  const resumedAt = await waitFor(stepIndex, ms, pauser);
  return completed(resumedAt, `waited until ${until}; resumed at ${resumedAt}\n`);
}
