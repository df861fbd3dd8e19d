/**
 * Built-in tools declare their arguments once, as a zod object: the JSON Schema that clients see
 * (`tools/list`, `capability_details`) is generated from it, and the handler receives the parsed,
 * typed arguments. `toolServer` turns a list of such tools into a ToolServer; on an application
 * server it adds the required `PCID` argument to every tool, so no tool declares it by hand.
 */
import { z } from 'zod';
import type { CallContext, JsonSchemaObject, ToolEntry, ToolOutput, ToolServer } from './server';
import { DEFAULT_MAX_REQUEST_BYTES, REQUEST_ENVELOPE_BYTES, ToolCallError } from './server';
import { isRecord } from '../common/narrow';

export interface ToolSpec<Input extends z.ZodObject> {
  name: string;
  description: string;
  input: Input;
  /** default: the dispatcher's (30 s) */
  timeoutMs?: number;
  /** MCP Tasks: advertised as the tool's `execution.taskSupport` (absent: forbidden); the gateway's tasks module runs the task */
  taskSupport?: 'optional' | 'required';
  /**
   * The most bytes the tool's `arguments` can take as JSON, when that is more than the HTTP
   * gateway's default body limit: the server's body limit is sized from it (ToolServer.maxRequestBytes).
   */
  maxArgumentBytes?: number;
  handler(args: z.output<Input>, context: CallContext): Promise<Record<string, unknown> | ToolOutput>;
}

/** A tool whose argument types are erased, so tools of different shapes share one list. */
export interface DefinedTool {
  readonly name: string;
  readonly description: string;
  readonly timeoutMs?: number;
  readonly taskSupport?: 'optional' | 'required';
  readonly maxArgumentBytes?: number;
  schema(application: string | undefined): z.ZodObject;
  /**
   * Parses `args` with schema(application) (once: parsing again would apply transforms twice) and
   * runs the handler on them, the connection argument (PCID) taken off; a ToolCallError
   * INVALID_ARGUMENTS naming each problem when they do not parse.
   */
  call(args: unknown, application: string | undefined, context: CallContext): Promise<Record<string, unknown> | ToolOutput>;
}

export function defineTool<Input extends z.ZodObject>(spec: ToolSpec<Input>): DefinedTool {
  return {
    name: spec.name,
    description: spec.description,
    timeoutMs: spec.timeoutMs,
    taskSupport: spec.taskSupport,
    maxArgumentBytes: spec.maxArgumentBytes,
    schema: (application) => schemaOf(spec.input, application),
    async call(args, application, context) {
      // the tool's own fields parsed by its own schema keep their type; the connection argument is checked beside them
      const { PCID: pcid, ...fields } = application !== undefined && isRecord(args) ? args : { PCID: undefined };
      const parsed = spec.input.safeParse(application === undefined || !isRecord(args) ? args : fields);
      const pcidOk = application === undefined || pcidSchema(application).safeParse(pcid).success;
      if (!parsed.success || !pcidOk) {
        // the problems as the whole schema names them, in its order (the tool's fields, then PCID)
        const whole = schemaOf(spec.input, application).safeParse(args);
        const error = whole.success ? parsed.error : whole.error;
        throw new ToolCallError('INVALID_ARGUMENTS', error ? describeIssues(spec.name, error) : `invalid arguments for ${spec.name}`);
      }
      return spec.handler(parsed.data, context);
    },
  };
}

/** A tool's schema as its server shows it: with the connection argument when the server has an application. */
function schemaOf(input: z.ZodObject, application: string | undefined): z.ZodObject {
  return application === undefined ? input : input.extend({ PCID: pcidSchema(application) });
}

export function pcidSchema(application: string): z.ZodString {
  return z.string().min(1).describe(`the ${application} connection to use (its PCID)`);
}

/** The contract's tool-entry schema of a zod object: what callers may send (defaults optional). */
export function jsonSchemaOf(schema: z.ZodType): JsonSchemaObject {
  const generated = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  delete generated.$schema;
  return {
    ...generated,
    type: 'object',
    properties: generated.properties ?? {},
    required: generated.required ?? [],
  };
}

/** `arguments.to: Invalid input; arguments.limit: Too big` — each problem named by its field. */
export function describeIssues(toolName: string, error: z.ZodError): string {
  const problems = error.issues.map((issue) => {
    const where = ['arguments', ...issue.path.map(String)].join('.');
    const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
    return `${where}: ${issue.message}${keys}`;
  });
  return `invalid arguments for ${toolName}: ${problems.join('; ')}`;
}

/** The connection argument leads, as the contract's tool tables show it. */
function pcidFirst(schema: JsonSchemaObject): JsonSchemaObject {
  const { PCID, ...rest } = schema.properties;
  return { ...schema, properties: { PCID, ...rest }, required: ['PCID', ...schema.required.filter((r) => r !== 'PCID')] };
}

export interface ToolServerSpec {
  name: string;
  description: string;
  embedded?: boolean;
  application?: string;
  tools: readonly DefinedTool[];
}

interface Compiled {
  tool: DefinedTool;
  entry: ToolEntry;
}

/** A server over a fixed list of zod-declared tools. */
export function toolServer(spec: ToolServerSpec): ToolServer {
  const compiled = new Map<string, Compiled>();
  for (const tool of spec.tools) {
    if (compiled.has(tool.name)) throw new Error(`server ${spec.name} declares tool ${tool.name} twice`);
    const schema = tool.schema(spec.application);
    const inputSchema = jsonSchemaOf(schema);
    const entry: ToolEntry = { name: tool.name, description: tool.description, inputSchema: spec.application === undefined ? inputSchema : pcidFirst(inputSchema) };
    if (tool.taskSupport) entry.execution = { taskSupport: tool.taskSupport };
    compiled.set(tool.name, { tool, entry });
  }
  const entries = [...compiled.values()].map((c) => c.entry);
  // the largest call any tool takes, in its envelope; only a server that needs more than the default says so
  const largest = Math.max(0, ...spec.tools.map((t) => t.maxArgumentBytes ?? 0)) + REQUEST_ENVELOPE_BYTES;
  return {
    name: spec.name,
    description: spec.description,
    embedded: spec.embedded ?? true,
    application: spec.application,
    ...(largest > DEFAULT_MAX_REQUEST_BYTES ? { maxRequestBytes: largest } : {}),
    listTools: async () => entries,
    timeoutMs: (name) => compiled.get(name)?.tool.timeoutMs,
    async callTool(name, args, context) {
      const found = compiled.get(name);
      if (!found) throw new ToolCallError('UNKNOWN_TOOL', `server /${spec.name} has no tool ${name}`);
      const answer = await found.tool.call(args, spec.application, context);
      return isToolOutput(answer) ? answer : { value: answer };
    },
  };
}

const FULL_OUTPUT = Symbol('flowgate.toolOutput');

/** Marks a handler's answer as a whole ToolOutput (with content blocks), not a bare structured value. */
export function fullOutput(output: ToolOutput): ToolOutput {
  return Object.assign(output, { [FULL_OUTPUT]: true });
}

function isToolOutput(answer: Record<string, unknown> | ToolOutput): answer is ToolOutput {
  return FULL_OUTPUT in answer;
}
