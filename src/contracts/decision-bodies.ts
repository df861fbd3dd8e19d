/**
 * The bodies of approval decisions as the gateway answers them (src/http/decisions.ts): a decision
 * applied (200) or recorded to be applied when the run resumes (202), and what became of one.
 */
import { z } from 'zod';

const isoTime = z.string().meta({ description: 'ISO 8601 UTC', example: '2026-01-01T12:00:00.000Z' });

export const ApprovalDecisionSchema = z.looseObject({
  approver: z.string(),
  actor: z.string().meta({ description: 'who sent it: api-key:<id>, the approver for a link, operator-signal or operator-update' }),
  decision: z.enum(['approve', 'reject']),
  comment: z.string().optional(),
  at: isoTime,
  via: z.enum(['api', 'link', 'signal']),
}).meta({ id: 'ApprovalDecision' });

export const DecisionAcceptedSchema = z.looseObject({
  runId: z.string(), automationId: z.string(),
  decisionId: z.string().meta({ description: 'names the decision: its outcome URL ends with it' }),
  applied: z.literal(true),
  decision: ApprovalDecisionSchema.extend({ stepIndex: z.number().int().optional().meta({ description: 'the approval step it was recorded on' }) }),
}).meta({ id: 'DecisionAccepted', description: 'the run took the decision' });

export const DecisionRecordedSchema = z.looseObject({
  runId: z.string(), automationId: z.string(), decisionId: z.string(),
  applied: z.literal(false),
  message: z.string(),
  outcomeUrl: z.string().meta({ description: 'where to read what became of it (also the Location header)' }),
}).meta({ id: 'DecisionRecorded', description: 'the run did not answer in time: the decision is in its history and is applied, or refused, when the run resumes' });

export const DecisionOutcomeSchema = z.looseObject({
  decisionId: z.string(),
  status: z.enum(['recorded', 'applied', 'refused', 'not_applied']).meta({
    description: 'recorded: in the run\'s history, not applied yet; applied; refused (refusal, message); not_applied: the run ended before it read it',
  }),
  stepIndex: z.number().int().optional(),
  decision: z.enum(['approve', 'reject']).optional(),
  approver: z.string().optional(),
  via: z.enum(['api', 'link']).optional(),
  refusal: z.enum(['NOT_WAITING', 'ALREADY_DECIDED', 'NOT_AN_APPROVER']).optional(),
  message: z.string().optional(),
  at: isoTime.optional(),
}).meta({ id: 'DecisionOutcome' });

export const DecisionReportSchema = DecisionOutcomeSchema.extend({ runId: z.string(), automationId: z.string() }).meta({ id: 'DecisionReport' });
