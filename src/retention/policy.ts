/**
 * How long flowgate keeps what it stores, by the key's family (docs/operations.md "Storage and retention"):
 *
 *   attachments/<org>/...            24 h after the call (the contract's attachment link validity)
 *   inputs/<org>/...                 24 h after the call (stored trigger inputs over 256 KiB)
 *   runs/<org>/<run>/...             FLOWGATE_RETENTION_STEP_FILES_DAYS after the run's last file
 *   tool-files/, tools/              FLOWGATE_RETENTION_STEP_FILES_DAYS (files tools produced in steps)
 *   agents/<org>/invocations/...     FLOWGATE_RETENTION_STEP_FILES_DAYS (an agent call's working files)
 *   agents/<org>/chats/...           kept (a chat's history lives until the chat is deleted)
 *
 * A blob's age counts from its last write. Step files age per run: a run's files go together once
 * the newest of them is older than the period, so a long-open run keeps its early steps' files.
 */
import type { Config } from '../config/config';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/** Attachments and stored inputs: 24 h after the call. */
export const CALL_FILES_MS = 24 * HOUR_MS;

export type RetentionSettings = Pick<Config['retention'], 'stepFilesDays'>;

/** The top-level folders the sweep walks. */
export const SWEPT_PREFIXES = ['attachments/', 'inputs/', 'runs/', 'tool-files/', 'tools/', 'agents/'] as const;

/** How long a blob under `key` is kept after its last write; undefined: kept until deleted otherwise. */
export function retentionMs(key: string, settings: RetentionSettings): number | undefined {
  if (key.startsWith('attachments/') || key.startsWith('inputs/')) return CALL_FILES_MS;
  const stepFiles = settings.stepFilesDays * DAY_MS;
  if (key.startsWith('runs/') || key.startsWith('tool-files/') || key.startsWith('tools/')) return stepFiles;
  if (/^agents\/[^/]+\/invocations\//.test(key)) return stepFiles;
  return undefined;
}

/** The folder whose blobs expire together: a run's (`runs/<org>/<run>/`); any other blob alone. */
export function retentionGroup(key: string): string {
  const run = /^runs\/[^/]+\/[^/]+\//.exec(key);
  return run ? run[0] : key;
}

/** When the blob written at `modified` expires (ms since the epoch); undefined: it does not. */
export function expiresAt(key: string, modified: Date, settings: RetentionSettings): number | undefined {
  const period = retentionMs(key, settings);
  return period === undefined ? undefined : modified.getTime() + period;
}
