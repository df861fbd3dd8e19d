/**
 * A run started by a trigger's schedule gets the schedule's input, the same for every run of that
 * schedule: its `runId` is the schedule's base workflow ID (Temporal appends the scheduled time to
 * it) and its `started` the moment the schedule was last written. The run's own ID and start are
 * Temporal's, read here (deterministic: both come from the start event; `startTime` is
 * the chain's, so a run that continues as new keeps its start). Other runs pass
 * through unchanged, so histories of runs started before schedules existed replay as they ran.
 */
import { workflowInfo } from '@temporalio/workflow';
import type { RunInput } from '../../src/common/run-types';

export function asStartedRun(input: RunInput): RunInput {
  if (input.type !== 'SCHEDULE') return input;
  const info = workflowInfo();
  return { ...input, runId: info.workflowId, started: info.startTime.toISOString() };
}
