/**
 * Inputs too large for a Temporal payload travel by reference (ARCHITECTURE.md, "Workflow code
 * rules"): the gateway stores their JSON in the blob store and the run's `inputs` becomes
 * `{ "$flowgate.inputsRef": StoredFile }`; the runStep activity reads the blob back before a step
 * runs. The shape rides inside `inputs`, so workflow code passes it on untouched. Pure: workflow
 * code may import it.
 */
import type { StoredFile } from './run-types';
import { isObjectLike, isRecord } from './narrow';

/** Reserved: callers cannot send an input of this name. */
export const INPUTS_REF_FIELD = '$flowgate.inputsRef';

export type InputsReference = { [INPUTS_REF_FIELD]: StoredFile };

/** Where the gateway stores one run's large inputs; only keys under the run's own org are honoured. */
export function inputsBlobPrefix(orgId: string): string {
  return `inputs/${orgId}/`;
}

export function isInputsReference(inputs: unknown): inputs is InputsReference {
  if (!isRecord(inputs)) return false;
  const keys = Object.keys(inputs);
  if (keys.length !== 1 || keys[0] !== INPUTS_REF_FIELD) return false;
  const file = inputs[INPUTS_REF_FIELD];
  return isObjectLike(file) && typeof file.key === 'string';
}
