/**
 * Organizations' alert rules on run outcomes (issue 54; docs/operations.md "Alerts"): list,
 * create, read, replace and delete, admins only (the routes' permission). A rule names what it
 * watches (`run_failed`: every failure of a workflow or of any; `failure_rate`: failures within a
 * window, by count or share; `approval_waiting`: a run waiting at an approval too long; `budget`:
 * the monthly budget nearly spent) and where a delivery goes (a signed webhook, an e-mail through a mail
 * connection, or a run of an error-handler workflow through one of its triggers). The evaluation
 * and the deliveries are src/runs/alerts.ts's and workflows/alert-evaluator.ts's.
 */
import { alertRuleView, type AlertRuleBody, type AlertRuleView } from '../contracts/alert-bodies';
import type { Registry } from '../registry';
import { done, refused, type Outcome } from './outcome';

export class AlertAdmin {
  /** `changed`: told of each write, so that this process reads the organization's rules afresh (src/runs/alerts.ts). */
  constructor(private readonly deps: { registry: Registry; changed?: (orgId: string) => void }) {}

  async list(orgId: string): Promise<AlertRuleView[]> {
    return (await this.deps.registry.alertRules.list(orgId)).flatMap((r) => alertRuleView(r) ?? []);
  }

  async get(orgId: string, id: string): Promise<Outcome<AlertRuleView>> {
    const record = await this.deps.registry.alertRules.get(orgId, id);
    const view = record && alertRuleView(record);
    return view ? done(view) : refused('UNKNOWN_ALERT_RULE', `no alert rule ${id}`);
  }

  async create(orgId: string, body: AlertRuleBody): Promise<Outcome<AlertRuleView>> {
    const checked = await this.check(orgId, body);
    if (!checked.ok) return checked;
    const record = await this.deps.registry.alertRules.create(orgId, { ...body, kind: body.condition.kind });
    this.deps.changed?.(orgId);
    return this.get(orgId, record.id);
  }

  async replace(orgId: string, id: string, body: AlertRuleBody): Promise<Outcome<AlertRuleView>> {
    const checked = await this.check(orgId, body);
    if (!checked.ok) return checked;
    // the rule's evaluator keeps state of its kind (a window, waiting runs, alerted months)
    const before = await this.deps.registry.alertRules.get(orgId, id);
    if (before && before.kind !== body.condition.kind) {
      return refused('INVALID_ALERT_RULE', `a rule's kind cannot change (it is ${before.kind}); delete it and create a ${body.condition.kind} rule`);
    }
    const record = await this.deps.registry.alertRules.update(orgId, id, { ...body, kind: body.condition.kind });
    if (!record) return refused('UNKNOWN_ALERT_RULE', `no alert rule ${id}`);
    this.deps.changed?.(orgId);
    return this.get(orgId, id);
  }

  async remove(orgId: string, id: string): Promise<Outcome<{ id: string }>> {
    if (!(await this.deps.registry.alertRules.remove(orgId, id))) return refused('UNKNOWN_ALERT_RULE', `no alert rule ${id}`);
    this.deps.changed?.(orgId);
    return done({ id });
  }

  /** What a rule names must be the organization's: its workflow, its mail connection, its error-handler trigger. */
  private async check(orgId: string, body: AlertRuleBody): Promise<Outcome<true>> {
    const { registry } = this.deps;
    const workflowId = 'workflowId' in body.condition ? body.condition.workflowId : undefined;
    if (workflowId !== undefined && !(await registry.workflows.get(orgId, workflowId))) return refused('UNKNOWN_WORKFLOW', `no workflow ${workflowId}`);
    const { destination } = body;
    if (destination.type === 'email') {
      const connection = await registry.connections.get(orgId, destination.connectionId);
      if (!connection || connection.application !== 'mail') return refused('INVALID_ALERT_RULE', `no mail connection ${destination.connectionId}`);
    }
    if (destination.type === 'workflow') {
      const trigger = await registry.triggers.get(destination.triggerId);
      if (!trigger || trigger.orgId !== orgId) return refused('UNKNOWN_TRIGGER', `no trigger ${destination.triggerId}`);
    }
    return done(true);
  }
}
