/**
 * An organization's runs from Temporal visibility, newest first. Open runs show as RUNNING here
 * (telling PAUSED or PENDING apart takes a query per run: the status endpoint does that).
 */
import type { Client } from '@temporalio/client';
import { decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { optionalTsToDate, tsToDate } from '@temporalio/common/lib/time';
import type { RunStatus } from '../common/run-types';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { WORKFLOW_TYPES } from '../common/workflow-contracts';
import { listedMemo } from './run-memo-schema';

export interface RunListEntry {
  runId: string;
  automationId: string;
  automationVersion: number;
  status: RunStatus;
  started: string;
  closed: string | null;
  /** FAILED because an operator cancelled (Temporal's Canceled) or terminated it (the contract's status stays FAILED) */
  reasonCode?: 'CANCELLED' | 'TERMINATED';
}

export interface RunListFilter {
  workflowId?: string;
  status?: RunStatus;
  /** only runs this trigger started (read from each listed run's memo) */
  triggerId?: string;
  /** only runs started at or after this instant (ISO 8601) */
  startedSince?: string;
  /** only FAILED runs that were cancelled (Temporal's Canceled) */
  cancelled?: boolean;
  /** only the runs this run started (its `trigger` steps' chained runs: Temporal child workflows) */
  parentRunId?: string;
  /** only runs started before this instant (ISO 8601) */
  startedBefore?: string;
  limit: number;
}

const TEMPORAL_STATUSES: Partial<Record<RunStatus, string[]>> = {
  RUNNING: ['Running'],
  PAUSED: ['Running'],
  PENDING: ['Running'],
  COMPLETE: ['Completed'],
  FAILED: ['Failed', 'Terminated', 'Canceled'],
  // a run over its own time limit (or a step over its own) closes Failed with memo endedAs TIMEOUT
  TIMEOUT: ['TimedOut', 'Failed'],
};

/** Temporal's execution status codes (temporal.api.enums.v1.WorkflowExecutionStatus) by name. */
const STATUS_BY_CODE: Record<number, string> = { 1: 'RUNNING', 2: 'COMPLETED', 3: 'FAILED', 4: 'CANCELLED', 5: 'TERMINATED', 6: 'CONTINUED_AS_NEW', 7: 'TIMED_OUT' };
const LIST_PAGE = 100;

const CONTRACT_STATUS: Record<string, RunStatus> = {
  RUNNING: 'RUNNING', COMPLETED: 'COMPLETE', FAILED: 'FAILED', TIMED_OUT: 'TIMEOUT', TERMINATED: 'FAILED', CANCELLED: 'FAILED',
};

/** Values in visibility queries come from our own IDs; refuse anything that could break the quoting. */
function quoteSafe(value: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(value)) throw new Error(`not an ID: ${JSON.stringify(value)}`);
  return value;
}

/** An instant for a visibility query: normalized through Date, so nothing but an ISO timestamp reaches the quotes. */
function quoteSafeInstant(value: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new Error(`not an instant: ${JSON.stringify(value)}`);
  return new Date(time).toISOString();
}

export async function listRuns(client: Client, orgId: string, filter: RunListFilter): Promise<RunListEntry[]> {
  const clauses = [`WorkflowType = '${WORKFLOW_TYPES.runAutomation}'`, `${SEARCH_ATTRIBUTES.orgId.name} = '${quoteSafe(orgId)}'`];
  if (filter.workflowId) clauses.push(`${SEARCH_ATTRIBUTES.automationId.name} = '${quoteSafe(filter.workflowId)}'`);
  const statuses = filter.status ? TEMPORAL_STATUSES[filter.status] : undefined;
  if (filter.cancelled) clauses.push(`ExecutionStatus = 'Canceled'`);
  else if (statuses) clauses.push(`(${statuses.map((s) => `ExecutionStatus = '${s}'`).join(' OR ')})`);
  if (filter.parentRunId) clauses.push(`ParentWorkflowId = '${quoteSafe(filter.parentRunId)}'`);
  if (filter.startedSince) clauses.push(`StartTime >= '${quoteSafeInstant(filter.startedSince)}'`);
  if (filter.startedBefore) clauses.push(`StartTime < '${quoteSafeInstant(filter.startedBefore)}'`);
  const entries: RunListEntry[] = [];
  const converter = client.workflow.options.loadedDataConverter;
  let page: Uint8Array | undefined;
  for (;;) {
    const response = await client.workflowService.listWorkflowExecutions({ namespace: client.options.namespace, query: clauses.join(' AND '), pageSize: LIST_PAGE, nextPageToken: page });
    for (const execution of response.executions ?? []) {
      let opened: Record<string, unknown> | undefined;
      try {
        // the memo passes through the client's codec (sealed run data): a run sealed under a data key
        // this process lacks (a key dropped from the ring, another deployment on the namespace) is left
        // out of the list rather than failing it; its own status answer names the missing key
        opened = await decodeMapFromPayloads(converter, execution.memo?.fields);
      } catch {
        continue;
      }
      const memo = listedMemo(opened);
      const temporalStatus = STATUS_BY_CODE[execution.status ?? 1] ?? 'RUNNING';
      const status = memo.endedAs ?? CONTRACT_STATUS[temporalStatus] ?? 'FAILED';
      const reasonCode = temporalStatus === 'CANCELLED' || temporalStatus === 'TERMINATED' ? temporalStatus : undefined;
      // Temporal's Failed covers FAILED and (endedAs) TIMEOUT runs: keep those the filter asked for.
      if ((filter.status === 'FAILED' || filter.status === 'TIMEOUT') && status !== filter.status) continue;
      if (filter.triggerId !== undefined && memo.triggerId !== filter.triggerId) continue;
      entries.push({
        runId: execution.execution?.workflowId ?? '',
        automationId: memo.automationId ?? '',
        automationVersion: memo.automationVersion ?? 0,
        status,
        started: tsToDate(execution.startTime!).toISOString(),
        closed: optionalTsToDate(execution.closeTime)?.toISOString() ?? null,
        ...(reasonCode ? { reasonCode } : {}),
      });
      if (entries.length >= filter.limit) return entries;
    }
    if (!response.nextPageToken || response.nextPageToken.length === 0) break;
    page = response.nextPageToken;
  }
  return entries;
}
