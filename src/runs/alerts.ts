/**
 * Alerts on run outcomes, the worker's side (issue 54; docs/operations.md "Alerts").
 *
 * AlertNotifier: the worker's `flowgateAlerts` sink (workflows/run/metrics-interceptors.ts tells it
 * of each run that ends, not on replay) hands each outcome that concerns an enabled rule of the
 * run's organization to that rule's evaluator entity (workflows/alert-evaluator.ts) with
 * signal-with-start. Once Temporal has the signal, the evaluator decides and delivers durably.
 *
 * AlertDeliveries: what the deliverAlert and alertDeliveryFailed activities do: send one delivery
 * to the rule's destination (a signed webhook through the outbound guard, an e-mail through the
 * organization's mail connection, or a run of the error-handler workflow through its trigger) and
 * audit it (`alert.delivered`, `alert.delivery_failed`).
 */
import type { Client } from '@temporalio/client';
import type { AuditTrail } from '../audit/audit-trail';
import {
  alertWorkflowId, countsCompletions, isFailure,
  type AlertCondition, type AlertDeliveryRequest, type AlertDeliveryResult, type AlertEvaluatorInput, type AlertSignal, type RunEnded,
} from '../common/alerts';
import { messageOf } from '../common/narrow';
import { alertOutcomeSignal, WORKFLOW_TYPES, type EvaluateAlertRuleWorkflow } from '../common/workflow-contracts';
import { alertRuleView, type AlertRuleView } from '../contracts/alert-bodies';
import { httpStream, OutboundRefusedError } from '../net/http-client';
import type { Logger } from '../observability/logger';
import type { Registry } from '../registry';
import type { ToolCaller } from '../tools/caller';
import type { RunStarts, TriggerService } from './trigger-service';
import type { WebhookSecrets } from './webhook-secrets';

/** How long this process keeps an organization's enabled rules (a write through this process forgets them at once). */
export const RULES_CACHE_MS = 5_000;
const SIGNAL_ATTEMPTS = 3;

export class AlertNotifier {
  private readonly cache = new Map<string, { at: number; rules: AlertRuleView[] }>();

  constructor(private readonly deps: { registry: Registry; client: Client; taskQueue: string; log: Pick<Logger, 'warn' | 'error'> }) {}

  /** An organization's rules changed: read them afresh. */
  forget(orgId: string): void {
    this.cache.delete(orgId);
  }

  /** The sink: never throws, never waits (a failure to hand the outcome over is logged). */
  runEnded(ended: RunEnded): void {
    if (ended.status === 'CANCELLED') return;
    this.handOver(ended).catch((error: unknown) => this.deps.log.error('an ended run could not be handed to its alert rules', { runId: ended.runId, error }));
  }

  /** Signals each rule the outcome concerns; resolves once Temporal has every signal (tests and the sink await it). */
  async handOver(ended: RunEnded): Promise<void> {
    const failed = isFailure(ended.status);
    const rules = (await this.rules(ended.orgId)).filter((rule) => concerns(rule.condition, ended, failed));
    await Promise.all(rules.map((rule) => this.signal(rule, ended)));
  }

  private async rules(orgId: string): Promise<AlertRuleView[]> {
    const cached = this.cache.get(orgId);
    if (cached && Date.now() - cached.at < RULES_CACHE_MS) return cached.rules;
    const rules = (await this.deps.registry.alertRules.enabled(orgId)).flatMap((r) => alertRuleView(r) ?? []);
    this.cache.set(orgId, { at: Date.now(), rules });
    return rules;
  }

  private async signal(rule: AlertRuleView, ended: RunEnded): Promise<void> {
    const input: AlertEvaluatorInput = { orgId: ended.orgId, ruleId: rule.id, condition: rule.condition };
    const signal: AlertSignal = { ended, condition: rule.condition };
    for (let attempt = 1; ; attempt++) {
      try {
        await this.deps.client.workflow.signalWithStart<EvaluateAlertRuleWorkflow, [AlertSignal]>(WORKFLOW_TYPES.evaluateAlertRule, {
          workflowId: alertWorkflowId(rule.id), taskQueue: this.deps.taskQueue, args: [input], signal: alertOutcomeSignal, signalArgs: [signal],
          staticSummary: `alert rule ${rule.name} (${rule.kind})`,
        });
        return;
      } catch (error) {
        if (attempt >= SIGNAL_ATTEMPTS) throw error;
        this.deps.log.warn('an alert signal failed; trying again', { ruleId: rule.id, runId: ended.runId, attempt, error });
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  }
}

function concerns(condition: AlertCondition, ended: RunEnded, failed: boolean): boolean {
  if (condition.workflowId !== undefined && condition.workflowId !== ended.workflowId) return false;
  return failed || countsCompletions(condition);
}

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
  allowPrivateNetwork: boolean;
  log: Pick<Logger, 'warn'>;
}

const TIMEOUT_MS = 15_000;
const ACTOR = (ruleId: string) => ({ actor: `alert-rule:${ruleId}`, actorName: null, credentialKind: 'alert_rule' as const, credentialId: ruleId });
const NO_SOURCE = { sourceIp: null, userAgent: null, requestId: null };

/** The JSON body of an alert (docs/operations.md "Alerts"): the webhook's body, the e-mail's text, the error handler's `alert` input. */
export function alertBody(rule: AlertRuleView, request: AlertDeliveryRequest) {
  const { firing, run } = request;
  return {
    type: 'alert.fired',
    timestamp: new Date().toISOString(),
    data: {
      alertId: request.deliveryId,
      rule: { id: rule.id, name: rule.name, kind: rule.kind },
      count: firing.count,
      ...(firing.total === undefined ? {} : { total: firing.total }),
      suppressed: firing.suppressed,
      ...(rule.condition.kind === 'failure_rate' ? { windowSeconds: rule.condition.windowSeconds } : {}),
      firstAt: new Date(firing.firstAt).toISOString(),
      lastAt: new Date(firing.lastAt).toISOString(),
      run: errorContext(run),
    },
  };
}

/** The failed run's context, as the error-handler workflow gets it. */
export function errorContext(run: RunEnded) {
  return { runId: run.runId, workflowId: run.workflowId, workflowName: run.workflowName, status: run.status, error: run.error ?? null, endedAt: new Date(run.at).toISOString() };
}

export class AlertDeliveries {
  constructor(private readonly deps: AlertDeliveryDeps) {}

  /** One attempt; throws AlertRefused (not to retry) or another error (to retry). */
  async deliver(request: AlertDeliveryRequest): Promise<AlertDeliveryResult> {
    const record = await this.deps.registry.alertRules.get(request.orgId, request.ruleId);
    const rule = record && alertRuleView(record);
    if (!rule || !rule.enabled) return { delivered: false, destination: rule?.destination.type ?? 'none', skipped: rule ? 'the rule is disabled' : 'the rule was deleted' };
    const body = alertBody(rule, request);
    const { destination } = rule;
    let runId: string | undefined;
    if (destination.type === 'webhook') await this.post(request, destination.url, JSON.stringify(body));
    else if (destination.type === 'email') await this.mail(request, destination.connectionId, destination.to, rule, body);
    else runId = await this.startHandler(request, destination.triggerId, rule, body.data);
    await this.deps.audit.record({
      orgId: request.orgId, action: 'alert.delivered', target: { type: 'alert_rule', id: rule.id }, status: 200,
      details: { alertId: request.deliveryId, destination: destination.type, count: request.firing.count, runId: request.run.runId, ...(runId ? { handlerRunId: runId } : {}) },
    }, ACTOR(rule.id), NO_SOURCE);
    return { delivered: true, destination: destination.type, ...(runId ? { runId } : {}) };
  }

  /** A delivery that failed for good (its attempts spent, or refused). */
  async failed(request: AlertDeliveryRequest, error: string): Promise<void> {
    const record = await this.deps.registry.alertRules.get(request.orgId, request.ruleId);
    const destination = record && alertRuleView(record)?.destination.type;
    await this.deps.audit.record({
      orgId: request.orgId, action: 'alert.delivery_failed', target: { type: 'alert_rule', id: request.ruleId }, status: 502, outcome: 'failed',
      details: { alertId: request.deliveryId, destination: destination ?? null, count: request.firing.count, runId: request.run.runId, error: error.slice(0, 500) },
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
    const { run } = request;
    const subject = `[flowgate] ${rule.name}: ${request.firing.count} failed run(s) of ${run.workflowName}`;
    const text = `${subject}\n\nLast failed run: ${run.runId} (${run.workflowId}, ${run.status})\nError: ${run.error ?? '(none)'}\n\n${JSON.stringify(body, null, 2)}\n`;
    const result = await tools.call(request.orgId, 'mail', 'mail_send_message', { PCID: connectionId, to, subject, text }, { idempotencyKey: request.deliveryId, timeoutMs: 60_000 });
    if (result.isError) throw new Error(`the alert e-mail was not sent: ${result.message}`);
  }

  private async startHandler(request: AlertDeliveryRequest, triggerId: string, rule: AlertRuleView, data: ReturnType<typeof alertBody>['data']): Promise<string> {
    const { triggers } = this.deps;
    const target = await triggers.resolve(request.orgId, triggerId);
    if (!target.ok) throw new AlertRefused(`the error handler's trigger refused the run: ${target.message}`);
    const inputs = { ...errorContext(request.run), alert: { id: request.deliveryId, ruleId: rule.id, ruleName: rule.name, count: data.count, suppressed: data.suppressed } };
    const run = await triggers.prepare(target, { inputs, coerce: false, startedBy: `alert-rule:${rule.id}` });
    if (!run.ok) throw new AlertRefused(`the error handler's trigger refused the run: ${run.message}`);
    // the delivery's ID as idempotency key: a retried attempt finds its run
    const started = await triggers.start(this.deps.runs, run, request.deliveryId);
    return started.runId;
  }
}
