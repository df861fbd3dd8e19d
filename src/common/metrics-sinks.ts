/**
 * What workflow code reports to the worker's metrics (a Temporal sink: no history event, so adding
 * or removing a call never affects replay). Types only, so workflows may import it.
 */
import type { Sinks } from '@temporalio/workflow';

/** How a run ended, as counted: the run statuses, plus CANCELLED for a cancelled run. */
export type EndedStatus = 'COMPLETE' | 'FAILED' | 'TIMEOUT' | 'CANCELLED';

export interface MetricsSinks extends Sinks {
  flowgateMetrics: {
    runStarted(workflow: string): void;
    runEnded(workflow: string, status: EndedStatus): void;
    /** an approval step of run `runId` starts (true) or stops (false) waiting */
    approvalWaiting(runId: string, stepIndex: number, waiting: boolean): void;
  };
}
