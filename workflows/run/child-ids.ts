/**
 * IDs of the child runs and chats a run starts (`trigger` and `agent` steps, an agent's workflow
 * tools), derived from the run itself instead of the workflow's seeded random numbers: Temporal's
 * OpenTelemetry workflow interceptors draw span IDs from those, so a uuid4() there would differ
 * between a worker that traces and one that does not, and a run open across a tracing switch would
 * fail its replay. A derived ID is a hash of the Temporal workflow ID and run ID, what it is for
 * (`purpose`) and how many IDs this run derived before it (workflow code is deterministic, so the
 * count is too), shaped as a version-4 UUID as the random ones were. Runs started before the patch
 * keep drawing random ones (their histories hold those IDs).
 */
import { uuid4, workflowInfo } from '@temporalio/workflow';
import { feature } from './features';
import { runLocals } from './run-locals';

export const DERIVED_CHILD_IDS_PATCH = 'derived-child-ids';

/**
 * 128 bits of a string: four 32-bit lanes (murmur3-style mixing, each lane seeded differently),
 * each lane mixing every character. Not a cryptographic hash: its inputs are our own IDs, and what
 * matters is that different inputs give different IDs.
 */
export function hash128(text: string): string {
  let h1 = 0x6a09e667, h2 = 0xbb67ae85, h3 = 0x3c6ef372, h4 = 0xa54ff53a;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1, h2, h3, h4].map((h) => (h >>> 0).toString(16).padStart(8, '0')).join('');
}

/** `hex` (32 hex digits) as a version-4, RFC 4122 variant UUID. */
export function uuidShape(hex: string): string {
  const variant = ((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}

/** A derived ID for `purpose` (e.g. `child-run`, `chat`), or a random one in runs from before the patch. */
export function childUuid(purpose: string): string {
  if (!feature(DERIVED_CHILD_IDS_PATCH)) return uuid4();
  const { workflowId, runId } = workflowInfo();
  const locals = runLocals();
  locals.derivedIds += 1;
  return uuidShape(hash128(`${workflowId}\n${runId}\n${purpose}\n${locals.derivedIds}`));
}
