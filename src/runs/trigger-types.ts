/**
 * The shapes of resolving and preparing a run through a trigger (trigger-service.ts), apart from
 * the service so that the `trigger` step's activity can be handed the service typed by what it
 * uses (TriggerResolution) without loading the run service and what it imports.
 */
import type { RunInput } from '../common/run-types';
import type { TriggerRecord, WorkflowVersion } from '../registry';

export type TriggerRefusalCode = 'UNKNOWN_TRIGGER' | 'DISABLED' | 'NOT_PUBLISHED' | 'INVALID_INPUTS' | 'INVALID_INPUT_SCHEMA';

export interface TriggerRefusal {
  ok: false;
  code: TriggerRefusalCode;
  message: string;
}

/** A trigger of the caller's organization and the version a run started now would pin. */
export interface TriggerTarget {
  trigger: TriggerRecord;
  version: WorkflowVersion;
}

export interface RunRequest {
  /** '' when a trigger call carried neither query parameters nor a body */
  inputs: Record<string, unknown> | '';
  /** the inputs arrived as text: the schema may convert them (in place) */
  coerce: boolean;
  /** the API key (or the parent run's starter) the run is attributed to */
  startedBy: string;
  /** blobs already written for this request (attachments): removed when it is refused */
  storedKeys?: readonly string[];
  /** names the stored-inputs blob, so that a retried activity overwrites its own */
  inputsBlobName?: string;
  /** set for a run started by a `trigger` step */
  chain?: { parentRunId: string; chainDepth: number };
  /** the call's completion callback URL; else the trigger's own, if it has one */
  callbackUrl?: string;
}

export interface PreparedRun {
  input: Omit<RunInput, 'runId'>;
  /** every blob this run reads that was written for this request */
  storedKeys: string[];
}

/** Resolve and prepare: what a `trigger` step needs of the trigger service (the run itself is its workflow's child). */
export interface TriggerResolution {
  resolve(orgId: string, triggerId: string): Promise<({ ok: true } & TriggerTarget) | TriggerRefusal>;
  prepare(target: TriggerTarget, request: RunRequest): Promise<({ ok: true } & PreparedRun) | TriggerRefusal>;
}
