/**
 * The tool lists of remote servers, by server id and version, shared by every instance of a server
 * in the process. A list is fresh for TOOL_LIST_TTL_MS, or for less when the remote's own
 * `tools/list` said so (its `ttlMs`, 2026-07-28): flowgate keeps a list no longer than its source
 * allows, and tells its own callers no more than what remains (remainingMs, modern.ts's
 * listCacheHint). A list past its freshness is still kept: a call reads its tool's schema from it,
 * and it is served while the remote is briefly away.
 */
import type { ToolEntry } from '../server';

/** The longest flowgate keeps a remote's tool list fresh, whatever the remote says. */
export const TOOL_LIST_TTL_MS = 60_000;

interface Kept {
  tools: readonly ToolEntry[];
  fetchedAt: number;
  ttlMs: number;
  /** the tools a 2025 remote lists as able to run as its own tasks (`execution.taskSupport` optional or required) */
  taskTools: ReadonlySet<string>;
}

/**
 * How long a remote allows its list to be kept: the `ttlMs` of a 2026 `tools/list` result (the
 * smallest over its pages), bounded by TOOL_LIST_TTL_MS; the bound when the remote says nothing usable.
 */
export function listTtlOf(results: readonly Record<string, unknown>[]): number {
  const stated = results.map((r) => r.ttlMs).filter((t): t is number => typeof t === 'number' && Number.isFinite(t) && t >= 0);
  return Math.floor(Math.min(TOOL_LIST_TTL_MS, ...stated));
}

export class RemoteToolCache {
  private readonly lists = new Map<string, Kept>();

  /** The kept list: whether it is still fresh, and for how many more milliseconds (0 once stale). */
  get(key: string): { tools: readonly ToolEntry[]; fresh: boolean; remainingMs: number; taskTools: ReadonlySet<string> } | undefined {
    const found = this.lists.get(key);
    if (!found) return undefined;
    const remainingMs = Math.max(0, found.fetchedAt + found.ttlMs - Date.now());
    return { tools: found.tools, fresh: remainingMs > 0, remainingMs, taskTools: found.taskTools };
  }

  /** Keeps a list just fetched, fresh for `ttlMs` (at most TOOL_LIST_TTL_MS), and which of its tools the remote may run as tasks. */
  set(key: string, tools: readonly ToolEntry[], ttlMs = TOOL_LIST_TTL_MS, taskTools: ReadonlySet<string> = new Set()): void {
    this.lists.set(key, { tools, fetchedAt: Date.now(), ttlMs: Math.min(ttlMs, TOOL_LIST_TTL_MS), taskTools });
  }

  /** Keeps under `key` the one list `from` holds (the cache a registration listed with), as fresh as it is there. */
  adopt(key: string, from: RemoteToolCache): void {
    const [kept] = from.lists.values();
    if (kept) this.lists.set(key, kept);
  }

  forget(serverId: string): void {
    for (const key of this.lists.keys()) if (key.startsWith(`${serverId}@`)) this.lists.delete(key);
  }
}
