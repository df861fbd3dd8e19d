/**
 * The MCP wire shapes of the tool gateway, in one place: the gateway (src/tools/mcp/), the CLI and
 * the tests import them from here. Protocol shapes are the MCP SDK's own schemas
 * (`@modelcontextprotocol/sdk/types.js`); below them, flowgate's extensions: the envelope it
 * accepts (a request or notification whose params may be positional), the bounds it puts on task
 * ids and cursors, its idempotency key, and the answer to its approval elicitation.
 */
import {
  CallToolResultSchema, ElicitRequestSchema, RELATED_TASK_META_KEY, RequestIdSchema, TaskCreationParamsSchema, TaskSchema, TaskStatusSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export { CallToolResultSchema, ElicitRequestSchema, RELATED_TASK_META_KEY, RequestIdSchema, TaskCreationParamsSchema, TaskSchema, TaskStatusSchema };

export type RequestId = z.infer<typeof RequestIdSchema>;
export type TaskStatus = z.infer<typeof TaskStatusSchema>;
/** A task as flowgate answers it: the SDK's Task, always with its poll interval. */
export type McpTask = z.infer<typeof TaskSchema> & { pollInterval: number };
export type CallToolResult = z.infer<typeof CallToolResultSchema>;
export type ElicitRequest = z.infer<typeof ElicitRequestSchema>;

/** A request (with `id`) or a notification (without); flowgate also takes positional params. */
export const JsonRpcMessageSchema = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.string().min(1),
  params: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
  id: RequestIdSchema.optional(),
});
export type JsonRpcMessage = z.infer<typeof JsonRpcMessageSchema>;

/** A JSON-RPC response from the client (its answer to a request of ours): an id and a result or error, no method. */
export const ClientResponseSchema = z.object({
  jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number()]), result: z.record(z.string(), z.unknown()).optional(), error: z.unknown().optional(),
}).strict();
export type ClientResponse = z.infer<typeof ClientResponseSchema>;

export const ToolsCallParamsSchema = z.object({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
export type ToolsCallParams = z.infer<typeof ToolsCallParamsSchema>;

/** `initialize` params as flowgate reads them: only the protocol version is required. */
export const InitializeParamsSchema = z.object({
  protocolVersion: z.string().min(1),
  capabilities: z.record(z.string(), z.unknown()).default({}),
  clientInfo: z.object({ name: z.string(), version: z.string() }).loose().optional(),
}).loose();

/** The `task` field that makes a `tools/call` task-augmented (MCP Tasks). */
export const TaskAugmentationSchema = z.object({ task: TaskCreationParamsSchema.optional() }).loose();
/** `tasks/get`, `tasks/result` and `tasks/cancel` params. */
export const TaskIdParamsSchema = z.object({ taskId: z.string().min(1).max(200) }).loose();
export const ListTasksParamsSchema = z.object({ cursor: z.string().max(4096).optional() }).loose();

/** The answer to flowgate's approval elicitation (`elicitation/create` with a decision form). */
export const ApprovalAnswerSchema = z.object({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.object({
    decision: z.enum(['approve', 'reject']),
    approver: z.string().min(1).max(320).optional(),
    comment: z.string().max(2000).optional(),
  }).loose().optional(),
}).loose();

/** The 2025 era (an `initialize` handshake), newest first; `initialize` echoes the client's version when it is one of these. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];

/**
 * The 2026 era (no handshake: each request names its version in `_meta`), newest first. A version
 * from FIRST_MODERN_PROTOCOL_VERSION on (compared as text, as the SDK does) belongs to this era.
 */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;
export const FIRST_MODERN_PROTOCOL_VERSION = '2026-07-28';

/** The per-request envelope of the 2026 era: `params._meta` keys. */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo';
export const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';
/** Where a 2026-era result names the server that produced it (`result._meta`). */
export const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';
/** The Tasks extension's id (SEP-2663): under `capabilities.extensions` on both sides. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The per-request envelope as flowgate reads it: a version and the client's capabilities are required, its identity is not. */
export const RequestEnvelopeSchema = z.looseObject({
  [PROTOCOL_VERSION_META_KEY]: z.string().min(1),
  [CLIENT_CAPABILITIES_META_KEY]: z.looseObject({ extensions: z.record(z.string(), z.unknown()).optional() }),
  [CLIENT_INFO_META_KEY]: z.looseObject({ name: z.string(), version: z.string() }).optional(),
});
export type RequestEnvelope = z.infer<typeof RequestEnvelopeSchema>;

/** `tasks/update` params (the Tasks extension): answers to a task's `inputRequests`, by their keys. */
export const TaskUpdateParamsSchema = z.object({
  taskId: z.string().min(1).max(200),
  inputResponses: z.record(z.string().max(200), z.unknown()).default({}),
}).loose();

/**
 * Where a tools/call's `_meta` carries its idempotency key: flowgate sends it to remote MCP servers
 * under this name (an MCP `_meta` key with a prefix), and accepts it, or a bare `idempotencyKey`.
 */
export const IDEMPOTENCY_META_KEY = 'io.flowgate/idempotencyKey';
/** What an idempotency key may be, as on triggers: 1 to 255 visible ASCII characters (it travels as a header). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** A JSON-RPC answer as a client reads it (the OpenAPI document shows these). */
export const JsonRpcSuccessSchema = z.looseObject({ jsonrpc: z.literal('2.0'), id: RequestIdSchema, result: z.record(z.string(), z.unknown()) })
  .meta({ id: 'JsonRpcSuccess' });
export const JsonRpcFailureSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema.nullable(),
  error: z.looseObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
}).meta({ id: 'JsonRpcFailure' });
export const JsonRpcResponseSchema = z.union([JsonRpcSuccessSchema, JsonRpcFailureSchema]).meta({ id: 'JsonRpcResponse' });

/** The answers the gateway writes (narrower than what a client accepts above). */
export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: RequestId;
  result: Record<string, unknown>;
}

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: { code: number; message: string; data?: unknown };
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;
