/**
 * The input of a run, built the same way for a trigger call and for a `trigger` step: the pinned
 * published version, the trigger, who started it, and inputs that travel by reference when they
 * are too large for a Temporal payload.
 */
import { randomUUID } from 'node:crypto';
import { INLINE_INPUTS_LIMIT } from '../attachments/limits';
import type { BlobStore } from '../blobs/blob-store';
import { INPUTS_REF_FIELD, inputsBlobPrefix, type InputsReference } from '../common/inputs-reference';
import type { RunInput } from '../common/run-types';
import type { RunSlots } from '../common/slots';
import type { WorkflowVersion } from '../registry';

/**
 * Stores inputs over INLINE_INPUTS_LIMIT in the blob store; the run then carries a reference.
 * `name` (safe characters) makes the key stable, so a retried activity overwrites its own blob.
 */
export async function inputsForRun(blobs: BlobStore, orgId: string, inputs: RunInput['inputs'], name: string = randomUUID()): Promise<{ inputs: RunInput['inputs']; storedKey?: string }> {
  if (inputs === '') return { inputs };
  const json = JSON.stringify(inputs);
  const size = Buffer.byteLength(json);
  if (size <= INLINE_INPUTS_LIMIT) return { inputs };
  const key = `${inputsBlobPrefix(orgId)}${name}.json`;
  await blobs.put(key, json);
  return { inputs: { [INPUTS_REF_FIELD]: { key, mimeType: 'application/json', size } } satisfies InputsReference, storedKey: key };
}

export interface RunInputSource {
  orgId: string;
  version: WorkflowVersion;
  triggerId: string;
  startedBy: string;
  inputs: RunInput['inputs'];
  parentRunId?: string;
  chainDepth?: number;
  callbackUrl?: string;
  /** the trigger's priority (src/common/priority.ts) */
  priority?: number | null;
  /** the concurrency limits in force (trigger-service.ts slotsFor) */
  slots?: RunSlots;
}

export function runInputFor(source: RunInputSource): Omit<RunInput, 'runId'> {
  const { version } = source;
  return {
    orgId: source.orgId,
    automationId: version.workflowId,
    automationName: version.name,
    automationVersion: version.version,
    stepMap: version.stepMap,
    definition: version.definition,
    triggerId: source.triggerId,
    startedBy: source.startedBy,
    started: new Date().toISOString(),
    inputs: source.inputs,
    ...(source.parentRunId ? { parentRunId: source.parentRunId, chainDepth: source.chainDepth ?? 1 } : {}),
    ...(source.callbackUrl ? { callback: { url: source.callbackUrl } } : {}),
    ...(source.priority ? { priority: source.priority } : {}),
    ...(source.slots ? { slots: source.slots } : {}),
    ...(version.sourceCommit ? { sourceCommit: version.sourceCommit } : {}),
  };
}
