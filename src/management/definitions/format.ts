/**
 * The declarative format of definitions as code (issue 53, docs/definitions-as-code.md): a folder
 * of YAML or JSON files, each holding one object or a YAML stream of several, each with a `kind`
 * (`workflow`, `trigger`, `toolServer`, `agent`, `connection`, `member`). Names are the identity
 * (a member's is their e-mail; IDs stay the registry's); secrets are never values, only references
 * (a trigger's `secretRefs`, a connection's `{secretRef: {env} | {fromApi}}`) filled at apply time.
 * An overlay (`kind: overlay`) patches objects by `<kind>/<name>` for another organization.
 */
import { z } from 'zod';
import { isRecord } from '../../common/narrow';
import { AgentLimitsSchema } from '../../registry/agent-limits';
import { AgentModelSchema, AgentServerSchema, OutputSchemaSchema } from '../../registry/agent-records';
import { PrioritySchema } from '../../common/priority-schema';
import { ROLES } from '../../contracts/roles';
import { ScheduleBodySchema } from '../../contracts/schedule-bodies';
import { DurablePolicySchema, DurableToolsSchema } from '../../contracts/durable-policy';
import { BatchSchema, DebounceSchema, VERIFY_PRESETS } from '../../triggers/webhooks/config';
import { CreateTriggerSchema } from '../schemas';

/** In the order apply writes them: what an object names is written before it. */
export const DEFINITION_KINDS = ['member', 'connection', 'workflow', 'toolServer', 'trigger', 'agent'] as const;
export type DefinitionKind = (typeof DEFINITION_KINDS)[number];

const Name = z.string().min(1).max(200);
/** A secret's reference: the name of an environment variable of `flowgate apply` (or a key of the request's `secrets`). */
export const SecretRefSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name');

/** `verify` of a trigger: a preset and its options, with references to the secrets instead of the secrets. */
export const VerifyDocSchema = z.object({
  preset: z.enum(VERIFY_PRESETS),
  secretRefs: z.array(SecretRefSchema).min(1).max(2).meta({ description: 'the signing secret\'s reference, or two during a rotation; filled at apply time' }),
}).loose().meta({ description: 'the preset\'s options as POST /api/v1/triggers takes them (docs/webhooks.md), with secretRefs instead of secrets' });

/** A workflow: `kind` beside a workflow definition (its `name` is its identity). */
export const WorkflowDocHead = z.object({ kind: z.literal('workflow'), name: Name }).loose();

const triggerShape = CreateTriggerSchema.shape;
export const TriggerDocSchema = z.object({
  kind: z.literal('trigger'),
  name: Name,
  /** the workflow's name */
  workflow: Name,
  designatedOutput: triggerShape.designatedOutput,
  tool: triggerShape.tool,
  callbackUrl: triggerShape.callbackUrl,
  priority: PrioritySchema.optional(),
  concurrency: triggerShape.concurrency,
  schedule: ScheduleBodySchema.optional(),
  disabled: z.boolean().optional(),
  verify: VerifyDocSchema.optional(),
  debounce: DebounceSchema.optional(),
  batch: BatchSchema.optional(),
}).strict();
export type TriggerDoc = z.infer<typeof TriggerDocSchema>;

export const ToolServerDocSchema = z.object({
  kind: z.literal('toolServer'),
  name: Name,
  description: z.string().min(1).max(4000).optional(),
  /** the custom connection's ID (PCID); an overlay names another organization's */
  connection: z.string().min(1).max(100).optional(),
  /** a remote MCP server's endpoint */
  url: z.string().min(1).max(2000).optional(),
  /** an OpenAPI document (object) the server's tools are generated from */
  document: z.record(z.string(), z.unknown()).optional(),
  /** its tools' calls run as durable tasks with this retry policy (docs/tool-gateway.md, durable calls) */
  durable: DurablePolicySchema.optional(),
  /** per tool: its own durable policy, or false for a plain proxied call */
  durableTools: DurableToolsSchema.optional(),
}).strict().refine((s) => (s.url === undefined) !== (s.document === undefined), { message: 'give either url (a remote MCP server) or document (an OpenAPI document)' });
export type ToolServerDoc = z.infer<typeof ToolServerDocSchema>;

export const AgentDocSchema = z.object({
  kind: z.literal('agent'),
  name: Name,
  description: z.string().max(5000).default(''),
  instructions: z.string().min(1).max(100_000),
  outputSchema: OutputSchemaSchema.nullable().optional(),
  /** a server's path, or a `toolServer`'s name */
  servers: z.array(AgentServerSchema).max(50).default([]),
  /** the triggers it may start as tools, by the trigger's name */
  workflows: z.array(z.object({
    trigger: Name,
    toolName: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must match ^[a-zA-Z0-9_-]{1,64}$').optional(),
    description: z.string().max(2000).optional(),
  }).strict()).max(50).default([]),
  model: AgentModelSchema.optional(),
  limits: AgentLimitsSchema.optional(),
  priority: PrioritySchema.nullable().optional(),
}).strict();
export type AgentDoc = z.infer<typeof AgentDocSchema>;

/** A connection's secret in the files: where apply takes it from, never the secret. */
export const ConnectionSecretSchema = z.object({
  secretRef: z.union([
    z.object({ env: SecretRefSchema }).strict().meta({ description: 'the environment variable of `flowgate apply` (or the key of the request\'s secrets) holding it' }),
    z.object({ fromApi: z.literal(true) }).strict().meta({ description: 'the value the connection already holds (set through the API or the console); apply keeps it' }),
  ]),
}).strict();
export type ConnectionSecret = z.infer<typeof ConnectionSecretSchema>;

/** An application connection (its PCID stays the registry's): its settings as POST /api/v1/connections takes its credentials, each secret a reference. */
export const ConnectionDocSchema = z.object({
  kind: z.literal('connection'),
  name: Name,
  /** mail, codeagent, custom (docs/tool-gateway.md) */
  application: z.string().min(1).max(100),
  settings: z.record(z.string(), z.unknown()).default({})
    .meta({ description: 'the credentials object of POST /api/v1/connections; every secret field (password, value, clientSecret, apiKey, secret, token) is {secretRef: {env: NAME}} or {secretRef: {fromApi: true}}' }),
}).strict();
export type ConnectionDoc = z.infer<typeof ConnectionDocSchema>;

/** A member of the organization: their e-mail is the identity. */
export const MemberDocSchema = z.object({
  kind: z.literal('member'),
  email: z.email().max(320),
  role: z.enum(ROLES),
}).strict();
export type MemberDoc = z.infer<typeof MemberDocSchema>;

/** Patches by `<kind>/<name>`: objects merge, arrays and scalars replace, `null` removes a field. */
export const OverlayDocSchema = z.object({
  kind: z.literal('overlay'),
  patches: z.record(z.string().regex(/^(workflow|trigger|toolServer|agent|connection|member)\/.+$/, 'must be <kind>/<name>'), z.record(z.string(), z.unknown())),
}).strict();
export type OverlayDoc = z.infer<typeof OverlayDocSchema>;

/** The request of POST /api/v1/apply and /api/v1/apply/plan. */
export const ApplyRequestSchema = z.object({
  files: z.array(z.object({ path: z.string().min(1).max(500), text: z.string().max(3_000_000) }).strict()).max(2000)
    .meta({ description: 'the folder\'s files (YAML or JSON), by their path in the folder' }),
  overlay: z.object({ path: z.string().min(1).max(500), text: z.string().max(1_000_000) }).strict().optional()
    .meta({ description: 'an overlay file (kind: overlay) applied over the folder' }),
  source: z.object({
    url: z.string().max(2000).optional(),
    ref: z.string().max(300).optional(),
    commit: z.string().regex(/^[0-9A-Za-z._-]{1,100}$/, 'must be a commit SHA or revision').optional(),
  }).strict().default({}).meta({ description: 'where the files came from: recorded in the audit trail and on each version published' }),
  /** the values of the secret references (triggers to create, connections to write); never stored in clear, never answered */
  secrets: z.record(SecretRefSchema, z.string().min(1).max(1000)).default({}),
  /** delete the objects of the organization the folder does not name */
  prune: z.boolean().default(false),
}).strict().meta({ id: 'ApplyRequest' });
export type ApplyRequest = z.infer<typeof ApplyRequestSchema>;

export const ChangeSchema = z.object({
  kind: z.enum(DEFINITION_KINDS),
  name: z.string(),
  action: z.enum(['create', 'change', 'delete', 'unchanged', 'delete-skipped']),
  /** a readable diff of the declarative forms (`-` live, `+` folder) */
  diff: z.string(),
  /** the object changed outside the folder since the last apply (a console or API edit) */
  drift: z.boolean(),
  note: z.string().optional(),
});
export const PlanSchema = z.object({
  valid: z.boolean(),
  errors: z.array(z.object({ file: z.string(), path: z.string(), message: z.string() })),
  changes: z.array(ChangeSchema),
  created: z.number().int(),
  changed: z.number().int(),
  deleted: z.number().int(),
  drifted: z.number().int(),
  source: z.string().optional(),
  commit: z.string().optional(),
  applied: z.boolean(),
}).meta({ id: 'DefinitionsPlan' });
export type Plan = z.infer<typeof PlanSchema>;
export type PlannedChange = z.infer<typeof ChangeSchema>;

export const ExportSchema = z.object({ files: z.array(z.object({ path: z.string(), text: z.string() })) }).meta({ id: 'DefinitionsExport' });

/** The JSON Schema of a definitions file, for editors: one object of a folder, chosen by its kind (the workflow's schema is the step kinds' own). */
export function definitionsJsonSchema(workflowSchema: z.ZodType): Record<string, unknown> {
  const opts = { io: 'input', unrepresentable: 'any' } as const;
  const $defs: Record<string, unknown> = {};
  // each kind's $defs move to the root, prefixed with the kind, so that their $refs resolve there
  const hoisted = (kind: string, schema: Record<string, unknown>): Record<string, unknown> => {
    const moved: unknown = JSON.parse(JSON.stringify(schema).replaceAll('"#/$defs/', `"#/$defs/${kind}.`));
    if (!isRecord(moved)) return {};
    const { $schema: _s, $defs: defs, ...body } = moved;
    if (isRecord(defs)) for (const [name, def] of Object.entries(defs)) $defs[`${kind}.${name}`] = def;
    return { title: kind, ...body };
  };
  const workflow = hoisted('workflow', z.toJSONSchema(workflowSchema, opts));
  const properties = isRecord(workflow.properties) ? workflow.properties : {};
  const kinds = [
    { ...workflow, properties: { kind: { const: 'workflow' }, ...properties }, required: ['kind', ...(Array.isArray(workflow.required) ? workflow.required : [])] },
    hoisted('trigger', z.toJSONSchema(TriggerDocSchema, opts)),
    hoisted('toolServer', z.toJSONSchema(ToolServerDocSchema, opts)),
    hoisted('agent', z.toJSONSchema(AgentDocSchema, opts)),
    hoisted('connection', z.toJSONSchema(ConnectionDocSchema, opts)),
    hoisted('member', z.toJSONSchema(MemberDocSchema, opts)),
    hoisted('overlay', z.toJSONSchema(OverlayDocSchema, opts)),
  ];
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'flowgate definitions file',
    description: 'one object of a definitions folder (docs/definitions-as-code.md), chosen by its kind', oneOf: kinds, $defs,
  };
}
