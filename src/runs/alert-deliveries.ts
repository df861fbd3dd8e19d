/**
 * Alert deliveries (issue 54; docs/operations.md "Alerts"): what the deliverAlert and
 * alertDeliveryFailed activities do. Send one delivery to the rule's destination (a signed webhook
 * through the outbound guard, an e-mail through the organization's mail connection, or a run of
 * the error-handler workflow through its trigger) and audit it (`alert.delivered`,
 * `alert.delivery_failed`). The body says what fired: failed runs (run_failed, failure_rate), a
 * run waiting at an approval (approval_waiting) or the monthly budget's use (budget).
 */
import type { AuditTrail } from '../audit/audit-trail';
import { formatUsd } from '../common/agent-usage';
import type { AlertDeliveryRequest, AlertDeliveryResult, BudgetUse, PendingWait, RunEnded } from '../common/alerts';
import { messageOf } from '../common/narrow';
import { alertRuleView, type AlertRuleView } from '../contracts/alert-bodies';
import { httpStream, OutboundRefusedError } from '../net/http-client';
import type { Logger } from '../observability/logger';
import type { Registry } from '../registry';
import type { ToolCaller } from '../tools/caller';
import type { RunStarts, TriggerService } from './trigger-service';
import type { WebhookSecrets } from './webhook-secrets';

/** A delivery its destination refuses for good (a private address not allowed, 410 Gone, the trigger refused the run): not retried. */
export class AlertRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AlertRefused';
  }
}

export interface AlertDeliveryDeps {
  registry: Registry;
  audit: AuditTrail;
  webhookSecrets?: WebhookSecrets | undefined;
  /** the error-handler runs' starts */
  triggers: Pick<TriggerService, 'resolve' | 'prepare' | 'start'>;
  runs: RunStarts;
  /** the e-mails' sends (the mail server's `mail_send_message`) */
  tools?: ToolCaller | undefined;
  /** approval_waiting: whether the run still waits at an approval (false: it ended or was decided without telling, e.g. terminated) */
  runWaiting?: ((runId: string) => Promise<boolean>) | undefined;
  allowPrivateNetwork: boolean;
  log: Pick<Logger, 'warn'>;
}

const TIMEOUT_MS = 15_000;
const ACTOR = (ruleId: string) => ({ actor: `alert-rule:${ruleId}`, actorName: null, credentialKind: 'alert_rule' as const, credentialId: ruleId });
const NO_SOURCE = { sourceIp: null, userAgent: null, requestId: null };
const iso = (ms: number): string => new Date(ms).toISOString();

/** The failed run's context, as the error-handler workflow gets it. */
export function errorContext(run: RunEnded) {
  return { runId: run.runId, workflowId: run.workflowId, workflowName: run.workflowName, status: run.status, error: run.error ?? null, endedAt: iso(run.at) };
}

/** The waiting run's context (approval_waiting). */
export function waitingContext(wait: PendingWait) {
  return { runId: wait.runId, workflowId: wait.workflowId, workflowName: wait.workflowName, status: 'PAUSED', error: null, stepIndex: wait.stepIndex, waitingSince: iso(wait.since) };
}

/** The month's use of the budget (budget). */
export function budgetContext(use: BudgetUse) {
  return {
    period: use.period, percent: Math.round(use.percent * 10) / 10, tokens: use.tokens, maxTokens: use.maxTokens,
    costUsd: formatUsd(use.costNanoUsd), maxCostUsd: use.maxCostNanoUsd === null ? null : formatUsd(use.maxCostNanoUsd),
  };
}

/** The JSON body of an alert (docs/operations.md "Alerts"): the webhook's body, the e-mail's text, the error handler's `alert` input. */
export function alertBody(rule: AlertRuleView, request: AlertDeliveryRequest) {
  const { firing, run, waiting, budget } = request;
  const { condition } = rule;
  return {
    type: 'alert.fired',
    timestamp: new Date().toISOString(),
    data: {
      alertId: request.deliveryId,
      rule: { id: rule.id, name: rule.name, kind: rule.kind },
      count: firing.count,
      ...(firing.total === undefined ? {} : { total: firing.total }),
      suppressed: firing.suppressed,
      ...(condition.kind === 'failure_rate' ? { windowSeconds: condition.windowSeconds } : {}),
      ...(condition.kind === 'approval_waiting' ? { afterSeconds: condition.afterSeconds } : {}),
      ...(condition.kind === 'budget' ? { percent: condition.percent } : {}),
      firstAt: iso(firing.firstAt),
      lastAt: iso(firing.lastAt),
      ...(run ? { run: errorContext(run) } : {}),
      ...(waiting ? { run: waitingContext(waiting) } : {}),
      ...(budget ? { budget: budgetContext(budget) } : {}),
    },
  };
}

/** The e-mail's subject line. */
function subjectOf(rule: AlertRuleView, request: AlertDeliveryRequest): string {
  const { firing, waiting, budget } = request;
  if (waiting) {
    const others = firing.count > 1 ? ` (and ${firing.count - 1} other run(s) before it)` : '';
    const after = rule.condition.kind === 'approval_waiting' ? ` for over ${rule.condition.afterSeconds}s` : '';
    return `[flowgate] ${rule.name}: run ${waiting.runId} of ${waiting.workflowName} waiting at an approval${after}${others}`;
  }
  if (budget) return `[flowgate] ${rule.name}: ${budgetContext(budget).percent}% of the monthly budget used (${budget.period})`;
  return `[flowgate] ${rule.name}: ${firing.count} failed run(s) of ${request.run?.workflowName ?? 'a workflow'}`;
}

/** The run an alert is about, for the audit trail. */
const runOf = (request: AlertDeliveryRequest): string | null => request.run?.runId ?? request.waiting?.runId ?? null;

export class AlertDeliveries {
  constructor(private readonly deps: AlertDeliveryDeps) {}

  /** One attempt; throws AlertRefused (not to retry) or another error (to retry). */
  async deliver(request: AlertDeliveryRequest): Promise<AlertDeliveryResult> {
    const record = await this.deps.registry.alertRules.get(request.orgId, request.ruleId);
    const rule = record && alertRuleView(record);
    if (!rule || !rule.enabled) return { delivered: false, destination: rule?.destination.type ?? 'none', skipped: rule ? 'the rule is disabled' : 'the rule was deleted' };
    const { destination } = rule;
    if (request.waiting && this.deps.runWaiting && !(await this.deps.runWaiting(request.waiting.runId))) {
      return { delivered: false, destination: destination.type, skipped: 'the run no longer waits at an approval' };
    }
    const body = alertBody(rule, request);
    let runId: string | undefined;
    if (destination.type === 'webhook') await this.post(request, destination.url, JSON.stringify(body));
    else if (destination.type === 'email') await this.mail(request, destination.connectionId, destination.to, rule, body);
    else runId = await this.startHandler(request, destination.triggerId, rule, body.data);
    await this.deps.audit.record({
      orgId: request.orgId, action: 'alert.delivered', target: { type: 'alert_rule', id: rule.id }, status: 200,
      details: {
        alertId: request.deliveryId, kind: rule.kind, destination: destination.type, count: request.firing.count, runId: runOf(request),
        ...(request.budget ? { period: request.budget.period } : {}), ...(runId ? { handlerRunId: runId } : {}),
      },
    }, ACTOR(rule.id), NO_SOURCE);
    return { delivered: true, destination: destination.type, ...(runId ? { runId } : {}) };
  }

  /** A delivery that failed for good (its attempts spent, or refused). */
  async failed(request: AlertDeliveryRequest, error: string): Promise<void> {
    const record = await this.deps.registry.alertRules.get(request.orgId, request.ruleId);
    const view = record && alertRuleView(record);
    await this.deps.audit.record({
      orgId: request.orgId, action: 'alert.delivery_failed', target: { type: 'alert_rule', id: request.ruleId }, status: 502, outcome: 'failed',
      details: {
        alertId: request.deliveryId, kind: view?.kind ?? null, destination: view?.destination.type ?? null, count: request.firing.count, runId: runOf(request),
        ...(request.budget ? { period: request.budget.period } : {}), error: error.slice(0, 500),
      },
    }, ACTOR(request.ruleId), NO_SOURCE);
  }

  private async post(request: AlertDeliveryRequest, url: string, body: string): Promise<void> {
    const secrets = this.deps.webhookSecrets;
    if (!secrets) throw new Error('this worker has no webhook secrets to sign alerts with');
    const timestamp = new Date();
    const signature = await secrets.sign(request.orgId, request.deliveryId, timestamp, body);
    let status: number;
    try {
      const answer = await httpStream({
        method: 'POST', url,
        headers: {
          'content-type': 'application/json', 'user-agent': 'flowgate-alert/1',
          'webhook-id': request.deliveryId, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature,
        },
        body, timeoutMs: TIMEOUT_MS, maxRedirects: 0, allowPrivateNetwork: this.deps.allowPrivateNetwork,
      });
      status = answer.status;
      answer.body.destroy();
    } catch (err) {
      if (err instanceof OutboundRefusedError) throw new AlertRefused(`the alert's webhook URL is refused: ${err.message}`);
      throw new Error(`the alert could not be sent: ${messageOf(err)}`, { cause: err });
    }
    if (status === 410) throw new AlertRefused('the receiver answered 410 Gone');
    if (status < 200 || status > 299) throw new Error(`the receiver answered ${status}`);
  }

  private async mail(request: AlertDeliveryRequest, connectionId: string, to: string[], rule: AlertRuleView, body: ReturnType<typeof alertBody>): Promise<void> {
    const tools = this.deps.tools;
    if (!tools) throw new Error('this worker has no tool dispatcher to send alert e-mails with');
    const subject = subjectOf(rule, request);
    const { run, waiting } = request;
    const about = run ? `Last failed run: ${run.runId} (${run.workflowId}, ${run.status})\nError: ${run.error ?? '(none)'}\n\n`
      : waiting ? `Waiting run: ${waiting.runId} (${waiting.workflowId}), step ${waiting.stepIndex}, since ${iso(waiting.since)}\n\n` : '';
    const text = `${subject}\n\n${about}${JSON.stringify(body, null, 2)}\n`;
    const result = await tools.call(request.orgId, 'mail', 'mail_send_message', { PCID: connectionId, to, subject, text }, { idempotencyKey: request.deliveryId, timeoutMs: 60_000 });
    if (result.isError) throw new Error(`the alert e-mail was not sent: ${result.message}`);
  }

  private async startHandler(request: AlertDeliveryRequest, triggerId: string, rule: AlertRuleView, data: ReturnType<typeof alertBody>['data']): Promise<string> {
    const { triggers } = this.deps;
    const target = await triggers.resolve(request.orgId, triggerId);
    if (!target.ok) throw new AlertRefused(`the error handler's trigger refused the run: ${target.message}`);
    const alert = { id: request.deliveryId, ruleId: rule.id, ruleName: rule.name, kind: rule.kind, count: data.count, suppressed: data.suppressed };
    const context = request.run ? errorContext(request.run) : request.waiting ? waitingContext(request.waiting) : {};
    const inputs = { ...context, ...(request.budget ? { budget: budgetContext(request.budget) } : {}), alert };
    const run = await triggers.prepare(target, { inputs, coerce: false, startedBy: `alert-rule:${rule.id}` });
    if (!run.ok) throw new AlertRefused(`the error handler's trigger refused the run: ${run.message}`);
    // the delivery's ID as idempotency key: a retried attempt finds its run
    const started = await triggers.start(this.deps.runs, run, request.deliveryId);
    return started.runId;
  }
}
