/**
 * An agent's bounds and their defaults. They live with the store, which fills in the defaults of
 * an agent saved without them (and of rows written before a bound existed); the agent records
 * (agent-records.ts) take the schemas from here for both doors' validation: the whole limits of a
 * new agent (defaults filled in) and the partial ones of an update (merged into the stored ones).
 */
import { z } from 'zod';

/** Each bound's range, without its default (a patch names only the bounds it changes). */
const bounds = {
  /** model calls per invocation */
  maxTurns: z.number().int().min(1).max(100),
  /** tool calls per invocation (workflows included) */
  maxToolCalls: z.number().int().min(0).max(500),
  /** wall-clock limit of one invocation; past it the invocation ends in TIMEOUT */
  timeoutSeconds: z.number().int().min(5).max(86_400),
  /** characters of one tool result that go back into the prompt */
  toolResultChars: z.number().int().min(256).max(200_000),
  /** tokens (prompt + completion, all model calls) one invocation may use; null or absent: no limit */
  maxTokens: z.number().int().min(1).max(1_000_000_000).nullable(),
  /** USD one invocation may spend at FLOWGATE_MODEL_PRICES; null or absent: no limit */
  maxCostUsd: z.number().gt(0).max(1_000_000).nullable(),
};

export const AgentLimitsSchema = z.object({
  maxTurns: bounds.maxTurns.default(10),
  maxToolCalls: bounds.maxToolCalls.default(20),
  timeoutSeconds: bounds.timeoutSeconds.default(600),
  toolResultChars: bounds.toolResultChars.default(16_000),
  maxTokens: bounds.maxTokens.optional(),
  maxCostUsd: bounds.maxCostUsd.optional(),
}).strict();

/**
 * The limits of an update: only the bounds given, no defaults filled in, so that an update merges
 * them into the stored limits (`null` clears maxTokens or maxCostUsd: no limit).
 */
export const AgentLimitsPatchSchema = z.object(bounds).partial().strict();

export type AgentLimits = z.infer<typeof AgentLimitsSchema>;

export const DEFAULT_LIMITS: AgentLimits = AgentLimitsSchema.parse({});
