/**
 * What an agent is (issue 11): its instructions, the tools it may use (servers of the
 * organization's catalog, whole or by tool), the workflows it may start as tools, optional model
 * settings and bounds. Validated with zod at both doors (the agent-management tools and
 * /api/v1/agents); the registry stores the parsed value. The records live with their store
 * (beside agent-limits.ts) so that the registry never imports the agent service (src/agents/).
 */
import { z } from 'zod';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../common/json-depth';
import { AgentLimitsPatchSchema, AgentLimitsSchema, type AgentLimits } from './agent-limits';
import { isRecord } from '../common/narrow';
import { PrioritySchema } from '../common/priority-schema';

/** `{name, allTools: true}` attaches every tool of a server; `{name, tools: {<tool>: {}}}` only the named ones. */
export const AgentServerSchema = z.union([
  z.object({ name: z.string().min(1).max(200), allTools: z.literal(true) }).strict(),
  z.object({
    name: z.string().min(1).max(200),
    allTools: z.literal(false).optional(),
    tools: z.record(z.string().min(1).max(200), z.object({}).loose()).refine((t) => Object.keys(t).length > 0, 'name at least one tool, or set allTools: true'),
  }).strict(),
]);

/** A trigger the agent may start as a tool; it waits for the run's result. */
export const AgentWorkflowSchema = z.object({
  triggerId: z.string().min(1).max(100),
  /** the tool name the model sees; default: workflow_<triggerId> */
  toolName: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must match ^[a-zA-Z0-9_-]{1,64}$').optional(),
  description: z.string().max(2000).optional(),
}).strict();

/**
 * Per-agent model settings. The endpoint and its API key stay the operator's
 * (FLOWGATE_LLM_BASE_URL, FLOWGATE_LLM_API_KEY): an agent naming its own base URL would send the
 * operator's key wherever an organization administrator pointed it.
 */
export const AgentModelSchema = z.object({
  model: z.string().min(1).max(200).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().min(1).max(200_000).optional(),
}).strict();

/**
 * A JSON Schema object, given as an object or as its JSON text (the contract shows a string). The
 * text nests at most as deep as a JSON body may: ajv compiles a schema recursively.
 */
export const OutputSchemaSchema = z.union([z.string().max(100_000), z.record(z.string(), z.unknown())]).transform((value, ctx) => {
  if (typeof value !== 'string') return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (!isRecord(parsed)) {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON Schema object (or its JSON text)' });
    return z.NEVER;
  }
  if (jsonDepthExceeds(parsed)) {
    ctx.addIssue({ code: 'custom', message: `nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays` });
    return z.NEVER;
  }
  return parsed;
});

const fields = {
  name: z.string().min(1).max(200),
  description: z.string().max(5000).default(''),
  instructions: z.string().min(1).max(100_000),
  outputSchema: OutputSchemaSchema.nullable().optional(),
  servers: z.array(AgentServerSchema).max(50).default([]),
  workflows: z.array(AgentWorkflowSchema).max(50).default([]),
  model: AgentModelSchema.optional(),
  limits: AgentLimitsSchema.optional(),
  /** Temporal priority key of its invocations: 1 first .. 5 last; null or absent: the default (src/common/priority.ts) */
  priority: PrioritySchema.nullable().optional(),
};

export const CreateAgentSchema = z.object(fields).strict();

/** Partial: only the fields given change (within `limits` too); `servers` and `workflows` replace the lists. */
export const UpdateAgentSchema = z.object({
  name: fields.name.optional(),
  description: z.string().max(5000).optional(),
  instructions: fields.instructions.optional(),
  outputSchema: fields.outputSchema,
  servers: z.array(AgentServerSchema).max(50).optional(),
  workflows: z.array(AgentWorkflowSchema).max(50).optional(),
  model: AgentModelSchema.optional(),
  /** only the bounds given change; the others keep their stored values */
  limits: AgentLimitsPatchSchema.optional(),
  priority: PrioritySchema.nullable().optional(),
}).strict();

export type AgentServer = z.infer<typeof AgentServerSchema>;
export type AgentWorkflow = z.infer<typeof AgentWorkflowSchema>;
export type AgentModel = z.infer<typeof AgentModelSchema>;
export type CreateAgentInput = z.infer<typeof CreateAgentSchema>;
export type UpdateAgentInput = z.infer<typeof UpdateAgentSchema>;

export interface AgentRecord {
  id: string;
  orgId: string;
  name: string;
  description: string;
  instructions: string;
  outputSchema: Record<string, unknown> | null;
  servers: AgentServer[];
  workflows: AgentWorkflow[];
  model: AgentModel;
  limits: AgentLimits;
  /** Temporal priority key of the invocations started through the API and MCP; null: the default */
  priority: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface ChatRecord {
  id: string;
  orgId: string;
  agentId: string;
  title: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ArtifactRecord {
  chatId: string;
  name: string;
  key: string;
  mimeType: string;
  size: number;
  createdAt: string;
}

/** An agent as both doors show it. */
export function agentView(agent: AgentRecord): Record<string, unknown> {
  const { orgId: _org, ...rest } = agent;
  return { ...rest, createdDate: agent.createdAt };
}

/** A server attached with a list of its tools (rather than allTools). */
export function isNamed(server: AgentServer): server is Extract<AgentServer, { tools: Record<string, unknown> }> {
  return 'tools' in server;
}
