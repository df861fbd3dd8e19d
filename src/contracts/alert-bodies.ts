/**
 * The wire shapes of alert rules (issue 54; docs/operations.md "Alerts"): what the API accepts and
 * answers, what the registry keeps as JSON, and what the worker's alerts (src/runs/alerts.ts) read
 * back. One definition for the management room, the routes and the deliveries.
 */
import { z } from 'zod';
import { ALERT_RULE_KINDS, type AlertCondition } from '../common/alerts';
import type { AlertRuleRecord } from '../registry';

const workflowIdField = z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be a workflow ID').optional()
  .meta({ description: 'only runs of this workflow; absent: every workflow of the organization' });
const cooldownField = z.number().int().min(1).max(7 * 86_400).optional()
  .meta({ description: 'at most one delivery per this many seconds (default: the window for failure_rate, 300 for run_failed and approval_waiting)' });

export const AlertConditionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('run_failed'), workflowId: workflowIdField, cooldownSeconds: cooldownField }).strict(),
  z.object({
    kind: z.literal('failure_rate'), workflowId: workflowIdField,
    windowSeconds: z.number().int().min(1).max(7 * 86_400).meta({ description: 'the window failures are counted over' }),
    threshold: z.number().int().min(1).max(1_000_000).optional().meta({ description: 'fires when at least this many runs failed within the window' }),
    ratio: z.number().gt(0).max(1).optional().meta({ description: 'or: fires when this share of the runs that ended within the window failed' }),
    minRuns: z.number().int().min(1).max(1_000_000).optional().meta({ description: 'with ratio: the runs that must have ended in the window first (default 10)' }),
    cooldownSeconds: cooldownField,
  }).strict().refine((c) => (c.threshold === undefined) !== (c.ratio === undefined), { message: 'a failure_rate rule names exactly one of threshold and ratio' }),
  z.object({
    kind: z.literal('approval_waiting'), workflowId: workflowIdField,
    afterSeconds: z.number().int().min(1).max(30 * 86_400).meta({ description: 'fires for a run that has waited at an approval this long (once per run)' }),
    cooldownSeconds: cooldownField,
  }).strict(),
  z.object({
    kind: z.literal('budget'),
    percent: z.number().gt(0).max(100).meta({ description: 'fires once per month when the organization\'s monthly budget (the more spent of its tokens and cost) reaches this share' }),
  }).strict(),
]);

export const AlertDestinationSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('webhook'),
    url: z.url({ protocol: /^https?$/ }).max(2000).meta({ description: 'POSTed the alert as JSON, signed like completion callbacks (Standard Webhooks, the organization\'s webhook secret)' }),
  }).strict(),
  z.object({
    type: z.literal('email'),
    connectionId: z.string().min(1).max(200).meta({ description: 'a mail connection of the organization (its SMTP settings send it)' }),
    to: z.array(z.string().min(3).max(320)).min(1).max(20),
  }).strict(),
  z.object({
    type: z.literal('workflow'),
    triggerId: z.string().min(1).max(200).meta({ description: 'a trigger of the error-handler workflow: its run gets the failed run\'s context as inputs' }),
  }).strict(),
]);
export type AlertDestination = z.infer<typeof AlertDestinationSchema>;

export const AlertRuleBodySchema = z.object({
  name: z.string().min(1).max(200),
  condition: AlertConditionSchema,
  destination: AlertDestinationSchema,
  enabled: z.boolean().default(true),
}).strict().meta({ id: 'AlertRuleBody' });
export type AlertRuleBody = z.infer<typeof AlertRuleBodySchema>;

export interface AlertRuleView {
  id: string;
  name: string;
  kind: AlertCondition['kind'];
  condition: AlertCondition;
  destination: AlertDestination;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export const AlertRuleViewSchema = z.looseObject({
  id: z.string(), name: z.string(), kind: z.enum(ALERT_RULE_KINDS), condition: AlertConditionSchema, destination: AlertDestinationSchema,
  enabled: z.boolean(), createdAt: z.string(), updatedAt: z.string(),
}).meta({ id: 'AlertRule' });

/** A stored rule as the API shows it; undefined when its JSON no longer parses (written by a newer flowgate). */
export function alertRuleView(record: AlertRuleRecord): AlertRuleView | undefined {
  const condition = AlertConditionSchema.safeParse(record.condition);
  const destination = AlertDestinationSchema.safeParse(record.destination);
  if (!condition.success || !destination.success) return undefined;
  return {
    id: record.id, name: record.name, kind: condition.data.kind, condition: condition.data, destination: destination.data,
    enabled: record.enabled, createdAt: record.createdAt, updatedAt: record.updatedAt,
  };
}
