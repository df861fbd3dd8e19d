/**
 * The recent durable calls of a custom server (docs/console.md "Tool servers"), on its console page:
 * read from the audit trail's `durable_call.*` records (src/app/durable-call-records.ts), one row per
 * task: when it started, how many attempts it took, its outcome and how long it took.
 */
import type { AuditRecord } from '../../registry/audit-records';
import { html, type Html } from './html';

export interface DurableCallRow {
  taskId: string;
  tool: string;
  /** ISO 8601 UTC; null when the start record is older than what was read */
  started: string | null;
  attempts: number;
  outcome: 'running' | 'completed' | 'failed' | 'cancelled';
  /** from start to outcome; undefined while it runs or when the start was not read */
  durationMs?: number;
}

const OUTCOMES = new Map<string, DurableCallRow['outcome']>([['durable_call.completed', 'completed'], ['durable_call.failed', 'failed'], ['durable_call.cancelled', 'cancelled']]);

/** The server's calls among `records` (newest first, as the audit trail lists them), at most `limit`, newest first. */
export function durableCallRows(records: readonly AuditRecord[], server: string, limit = 20): DurableCallRow[] {
  const rows = new Map<string, DurableCallRow & { ended?: string }>();
  for (const record of records) {
    if (record.details.server !== server || record.targetId === null) continue;
    const row = rows.get(record.targetId) ?? { taskId: record.targetId, tool: String(record.details.tool ?? ''), started: null, attempts: 0, outcome: 'running' };
    rows.set(record.targetId, row);
    const attempt = typeof record.details.attempt === 'number' ? record.details.attempt : 0;
    row.attempts = Math.max(row.attempts, attempt);
    if (record.action === 'durable_call.started') row.started = record.at;
    const outcome = OUTCOMES.get(record.action);
    if (outcome) Object.assign(row, { outcome, ended: record.at });
  }
  return [...rows.values()].slice(0, limit).map(({ ended, ...row }) => ({
    ...row, ...(ended && row.started ? { durationMs: Date.parse(ended) - Date.parse(row.started) } : {}),
  }));
}

const duration = (ms: number | undefined): string => (ms === undefined ? '' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

/** The section: the rows for a role that may read the audit trail, else a note saying who may. */
export function durableCallsSection(rows: readonly DurableCallRow[] | undefined): Html {
  const head = html`<h2>Recent durable calls</h2>`;
  if (rows === undefined) return html`${head}<p class="meta">Read from the audit trail: a role with <code>audit.read</code> (admin) sees them here.</p>`;
  if (rows.length === 0) return html`${head}<p class="meta">No durable calls yet.</p>`;
  return html`${head}<table data-durable-calls><caption class="visually-hidden">Recent durable calls</caption>
<thead><tr><th scope="col">Task</th><th scope="col">Tool</th><th scope="col">Started</th><th scope="col">Attempts</th><th scope="col">Outcome</th><th scope="col">Duration</th></tr></thead>
<tbody>${rows.map((r) => html`<tr data-task="${r.taskId}"><td><code>${r.taskId}</code></td><td>${r.tool}</td><td>${r.started ?? ''}</td><td>${String(r.attempts || '')}</td><td>${r.outcome}</td><td>${duration(r.durationMs)}</td></tr>`)}</tbody></table>`;
}
