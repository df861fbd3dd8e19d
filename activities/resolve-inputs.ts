/**
 * Large inputs arrive at a step as a reference (src/common/inputs-reference.ts): read them back
 * from the blob store. Only a blob under the run's own organization's inputs prefix is honoured, so
 * a reference can never read another organization's files.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { BlobStore } from '../src/blobs/blob-store';
import { INPUTS_REF_FIELD, inputsBlobPrefix, isInputsReference } from '../src/common/inputs-reference';
import { ownJson } from '../src/common/narrow';
import type { RunInput } from '../src/common/run-types';

export async function resolveInputs(blobs: BlobStore, run: Pick<RunInput, 'orgId' | 'inputs'>): Promise<RunInput['inputs']> {
  if (!isInputsReference(run.inputs)) return run.inputs;
  const { key } = run.inputs[INPUTS_REF_FIELD];
  if (!key.startsWith(inputsBlobPrefix(run.orgId))) {
    throw ApplicationFailure.nonRetryable(`the run's inputs reference ${key} is outside its organization`, 'INPUTS_UNAVAILABLE');
  }
  const data = await blobs.read(key);
  if (!data) throw ApplicationFailure.nonRetryable(`the run's inputs (${key}) are missing from the blob store`, 'INPUTS_UNAVAILABLE');
  // written by the gateway when it started the run
  return ownJson<RunInput['inputs']>(data.toString('utf8'));
}
