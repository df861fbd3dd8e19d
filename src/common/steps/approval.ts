/**
 * The `approval` step: the run waits for its approvers' decisions (its execution:
 * workflows/steps/approval.ts). One approval waits at a time, so none may sit where another step
 * of the run runs alongside it.
 */
import { z } from 'zod';
import { DurationSchema, stepKindSchema, type DefinitionStepKind } from '../step-schema';

export const ApprovalStepSchema = stepKindSchema('approval', {
  /** names or e-mail addresses; each gets a link of its own */
  approvers: z.array(z.string().min(1).max(320).regex(/^[^\s<>"]+( [^\s<>"]+)*$/, 'must be a name or e-mail address')).min(1).max(50),
  /** approvals needed; one rejection is enough to reject */
  required: z.number().int().min(1).default(1),
  timeout: DurationSchema.default('24h'),
  onTimeout: z.enum(['approve', 'reject', 'fail']).default('fail'),
  onReject: z.enum(['fail', 'continue']).default('fail'),
  /** shown to approvers; interpolated */
  message: z.string().max(10_000).default(''),
}).refine((s) => s.required <= new Set(s.approvers.map((a) => a.toLowerCase())).size, {
  message: 'required is more than the number of distinct approvers', path: ['required'],
});
export type ApprovalStep = z.infer<typeof ApprovalStepSchema>;

export const approvalStepKind = {
  type: 'approval',
  schema: ApprovalStepSchema,
  runsIn: 'workflow',
  problems: (_step, place) => (place.concurrent
    ? [{ path: [], message: 'an approval cannot sit in a parallel step or in a forEach with concurrency above 1 (one approval waits at a time)' }]
    : []),
} as const satisfies DefinitionStepKind<ApprovalStep>;
