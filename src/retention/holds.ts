/**
 * Holds keep a call's attachments and stored inputs while its run may still read them. They
 * expire 24 h after the call (policy.ts), but a run may live longer (`timeoutSeconds` up to a
 * year, e.g. waiting days for an approval): before such a run starts, the gateway writes a hold,
 * `holds/<org>/<run>.json` = `{keys, until}`, and the sweep keeps held blobs until `until` (the
 * run's latest possible end), then deletes the hold with them. Runs that cannot outlive the 24 h
 * (the default `timeoutSeconds` is an hour) need no hold and write none.
 */
import type { BlobStore } from '../blobs/blob-store';
import { CALL_FILES_MS } from './policy';
import { ownJson } from '../common/narrow';

export const HOLDS_PREFIX = 'holds/';

interface Hold {
  keys: string[];
  /** ms since the epoch */
  until: number;
}

export function holdKey(orgId: string, runId: string): string {
  return `${HOLDS_PREFIX}${orgId}/${runId}.json`;
}

/**
 * Writes the hold of run `runId` when it may outlive its call's files: `timeoutMs` is the run's
 * time limit (plus Temporal's backstop margin), `now` the call's time. Returns whether it wrote one.
 */
export async function holdCallFiles(blobs: BlobStore, hold: { orgId: string; runId: string; keys: readonly string[]; timeoutMs: number; now?: number }): Promise<boolean> {
  if (hold.keys.length === 0 || hold.timeoutMs <= CALL_FILES_MS) return false;
  const body: Hold = { keys: [...hold.keys], until: (hold.now ?? Date.now()) + hold.timeoutMs };
  await blobs.put(holdKey(hold.orgId, hold.runId), JSON.stringify(body));
  return true;
}

/**
 * The blobs held at `now` (key → until); holds that ended are removed (their blobs then age
 * as usual). An unreadable hold is kept and holds nothing.
 */
export async function currentHolds(blobs: BlobStore, now: Date): Promise<Map<string, number>> {
  const held = new Map<string, number>();
  for await (const entry of blobs.list(HOLDS_PREFIX)) {
    const data = await blobs.read(entry.key);
    if (!data) continue;
    let hold: Hold;
    try {
      hold = ownJson<Hold>(data.toString('utf8'));
    } catch {
      continue;
    }
    if (typeof hold.until !== 'number' || !Array.isArray(hold.keys)) continue;
    if (hold.until <= now.getTime()) {
      await blobs.remove(entry.key);
      continue;
    }
    for (const key of hold.keys) if (typeof key === 'string') held.set(key, Math.max(held.get(key) ?? 0, hold.until));
  }
  return held;
}
