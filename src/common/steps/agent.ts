/**
 * The `agent` step: invokes an agent of the run's organization as a child workflow of the run; its
 * final answer is the step's result (json with an output schema, else markdown), its tool calls go
 * to stdout.txt (its execution: workflows/steps/agent.ts).
 */
import { z } from 'zod';
import { stepKindSchema, type DefinitionStepKind } from '../step-schema';

export const AgentStepSchema = stepKindSchema('agent', {
  agentId: z.string().min(1).max(100),
  /** interpolated */
  message: z.string().min(1).max(100_000),
  /** continue this chat (interpolated); default: a new chat per run */
  chatId: z.string().min(1).max(200).optional(),
  /** the invocation's wall-clock limit within this run */
  timeoutSeconds: z.number().int().min(5).max(86_400).default(600),
});
export type AgentStep = z.infer<typeof AgentStepSchema>;

export const agentStepKind = { type: 'agent', schema: AgentStepSchema, runsIn: 'workflow' } as const satisfies DefinitionStepKind<AgentStep>;
