/**
 * An agent's bounds and their defaults. They live with the store, which fills in the defaults of
 * an agent saved without them (and of rows written before a bound existed); the agent records
 * (agent-records.ts) take the schema from here for both doors' validation.
 */
import { z } from 'zod';

export const AgentLimitsSchema = z.object({
  /** model calls per invocation */
  maxTurns: z.number().int().min(1).max(100).default(10),
  /** tool calls per invocation (workflows included) */
  maxToolCalls: z.number().int().min(0).max(500).default(20),
  /** wall-clock limit of one invocation; past it the invocation ends in TIMEOUT */
  timeoutSeconds: z.number().int().min(5).max(86_400).default(600),
  /** characters of one tool result that go back into the prompt */
  toolResultChars: z.number().int().min(256).max(200_000).default(16_000),
  /** tokens (prompt + completion, all model calls) one invocation may use; null or absent: no limit */
  maxTokens: z.number().int().min(1).max(1_000_000_000).nullable().optional(),
  /** USD one invocation may spend at FLOWGATE_MODEL_PRICES; null or absent: no limit */
  maxCostUsd: z.number().gt(0).max(1_000_000).nullable().optional(),
}).strict();

export type AgentLimits = z.infer<typeof AgentLimitsSchema>;

export const DEFAULT_LIMITS: AgentLimits = AgentLimitsSchema.parse({});
