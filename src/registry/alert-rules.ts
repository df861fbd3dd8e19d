/**
 * Organizations' alert rules (issue 54). The condition and the destination are JSON the registry
 * keeps opaque: src/management/alerts.ts checks them when a rule is written, src/runs/alerts.ts
 * parses them when it reads one.
 */
import type { Kysely } from 'kysely';
import { newId } from '../crypto/secrets';
import type { Database } from './db';
import { fromJson, nowIso } from './store-support';

export interface AlertRuleRecord {
  id: string;
  orgId: string;
  name: string;
  kind: string;
  condition: unknown;
  destination: unknown;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface AlertRuleWrite {
  name: string;
  kind: string;
  condition: unknown;
  destination: unknown;
  enabled: boolean;
}

type Row = Database['alert_rules'];

function toRecord(row: Row): AlertRuleRecord {
  return {
    id: row.id, orgId: row.org_id, name: row.name, kind: row.kind, condition: fromJson<unknown>(row.condition), destination: fromJson<unknown>(row.destination),
    enabled: Number(row.enabled) === 1, createdAt: row.created_at, updatedAt: row.updated_at,
  };
}

export class AlertRuleStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The organization's rules, oldest first. */
  async list(orgId: string): Promise<AlertRuleRecord[]> {
    const rows = await this.db.selectFrom('alert_rules').selectAll().where('org_id', '=', orgId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toRecord);
  }

  /** The organization's enabled rules (what a run's end is judged against). */
  async enabled(orgId: string): Promise<AlertRuleRecord[]> {
    const rows = await this.db.selectFrom('alert_rules').selectAll().where('org_id', '=', orgId).where('enabled', '=', 1).execute();
    return rows.map(toRecord);
  }

  async get(orgId: string, id: string): Promise<AlertRuleRecord | undefined> {
    const row = await this.db.selectFrom('alert_rules').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return row && toRecord(row);
  }

  async create(orgId: string, rule: AlertRuleWrite): Promise<AlertRuleRecord> {
    const now = nowIso();
    const row: Row = {
      id: newId('alr'), org_id: orgId, name: rule.name, kind: rule.kind, condition: JSON.stringify(rule.condition), destination: JSON.stringify(rule.destination),
      enabled: rule.enabled ? 1 : 0, created_at: now, updated_at: now,
    };
    await this.db.insertInto('alert_rules').values(row).execute();
    return toRecord(row);
  }

  /** Replaces the rule; undefined when the organization has no such rule. */
  async update(orgId: string, id: string, rule: AlertRuleWrite): Promise<AlertRuleRecord | undefined> {
    const result = await this.db.updateTable('alert_rules').set({
      name: rule.name, kind: rule.kind, condition: JSON.stringify(rule.condition), destination: JSON.stringify(rule.destination), enabled: rule.enabled ? 1 : 0, updated_at: nowIso(),
    }).where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return result.numUpdatedRows > 0n ? this.get(orgId, id) : undefined;
  }

  async remove(orgId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('alert_rules').where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
