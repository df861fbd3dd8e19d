/**
 * The tables of fleet operations (issue 54): alert rules (migration 0025) and holds on new runs
 * (0026), apart from tables.ts so that it stays one screenful per concern. Conventions as in db.ts.
 */

/** An organization's alert rule (src/management/alerts.ts checks its JSON columns). */
export interface AlertRulesTable {
  id: string;
  org_id: string;
  name: string;
  /** run_failed | failure_rate */
  kind: string;
  /** JSON: the condition (src/common/alerts.ts AlertCondition) */
  condition: string;
  /** JSON: where a delivery goes (`webhook`, `email` or `workflow`) */
  destination: string;
  /** 1: evaluated; 0: kept, not evaluated */
  enabled: number;
  created_at: string;
  updated_at: string;
}

/** A paused workflow or trigger (issue 54; migration 0026): new runs of it wait PENDING. */
export interface OperatorHoldsTable {
  org_id: string;
  /** workflow | trigger */
  scope: string;
  target_id: string;
  held_by: string;
  /** ISO 8601 UTC */
  held_at: string;
  reason: string | null;
}
