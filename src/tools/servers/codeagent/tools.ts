/**
 * The seventeen `codeagent_` tools (contract 4.8), each one call (or, for stream_run, one bounded
 * read) of the v1 API. Answers are the backend's JSON, validated loosely (fields this version does
 * not know pass through) and normalised where versions differ: models as strings or objects, and
 * `nextCursor` null or absent (always answered, null on the last page).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { httpRequest } from '../../../net/http-client';
import { defineTool, type DefinedTool } from '../../define-tool';
import { ToolFailure, type CallContext } from '../../server';
import { CodeAgentClient, credentialsOf, JSON_TIMEOUT_MS } from './client';
import {
  AgentInput, CreateAgentInput, CreateRunInput, CreateSubTokenInput, DownloadArtifactInput, ListAgentsInput, ListRunsInput, MAX_PROMPT_CALL_JSON_BYTES, MAX_STREAM_WAIT_SECONDS,
  NoInput, RunInput, StreamRunInput,
} from './schemas';
import { readRunStream } from './stream';

const MARGIN_MS = 5_000;
const REPOSITORIES_TIMEOUT_MS = 90_000;
const DOWNLOAD_TIMEOUT_MS = 120_000;
const MAX_ARTIFACT_BYTES = 200 * 1024 * 1024;
/** how long a stored artifact's flowgate link lives */
export const STORED_ARTIFACT_LINK_TTL_SECONDS = 24 * 3600;

const AgentSchema = z.object({ id: z.string() }).loose();
const RunSchema = z.object({ id: z.string(), status: z.string() }).loose();
const IdSchema = z.object({ id: z.string() }).loose();
const page = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullish() }).loose();
const ModelItemSchema = z.union([z.string(), z.object({ id: z.string() }).loose()]);
const ArtifactSchema = z.object({ path: z.string() }).loose();
const DownloadSchema = z.object({ url: z.url(), expiresAt: z.string().optional() }).loose();

const agentPath = (id: string): string => `/v1/agents/${encodeURIComponent(id)}`;
const runPath = (id: string, runId: string): string => `${agentPath(id)}/runs/${encodeURIComponent(runId)}`;

function clientOf(context: CallContext): CodeAgentClient {
  return new CodeAgentClient(credentialsOf(context.connection), context.services.allowPrivateNetwork, context.signal, context.deadline);
}

function pageAnswer<T>(body: { items: T[]; nextCursor?: string | null }): Record<string, unknown> {
  return { ...body, items: body.items, nextCursor: body.nextCursor ?? null };
}

const getAgent = defineTool({
  name: 'codeagent_get_agent',
  description: 'Get one code agent: its status (ACTIVE, IDLE, ARCHIVED), repository, branch and latest run.',
  input: AgentInput,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  handler: ({ id }, context) => clientOf(context).json('GET', agentPath(id), AgentSchema),
});

function agentAction(name: string, description: string, method: 'POST' | 'DELETE', suffix: string): DefinedTool {
  return defineTool({
    name,
    description,
    input: AgentInput,
    timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
    handler: ({ id }, context) => clientOf(context).json(method, `${agentPath(id)}${suffix}`, IdSchema),
  });
}

const archiveAgent = agentAction('codeagent_archive_agent', 'Archive a code agent (idempotent): it keeps its history but takes no new runs until unarchived.', 'POST', '/archive');
const unarchiveAgent = agentAction('codeagent_unarchive_agent', 'Unarchive a code agent (idempotent) so that it takes follow-up runs again.', 'POST', '/unarchive');
const deleteAgent = agentAction('codeagent_delete_agent', 'Delete a code agent permanently, with its runs, artifacts and environment variables. This cannot be undone.', 'DELETE', '');

const listAgents = defineTool({
  name: 'codeagent_list_agents',
  description: 'List code agents, newest first, a page at a time (pass nextCursor back as cursor); optionally those of one pull request, and archived ones.',
  input: ListAgentsInput,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  handler: async ({ limit, cursor, prUrl, includeArchived }, context) =>
    pageAnswer(await clientOf(context).json('GET', '/v1/agents', page(AgentSchema), { query: { limit, cursor, prUrl, includeArchived } })),
});

const createAgent = defineTool({
  name: 'codeagent_create_agent',
  description: 'Start a code agent on one repository with a task; answers the agent and its first run (status CREATING). '
    + 'Follow the run with codeagent_get_run or codeagent_stream_run.',
  input: CreateAgentInput,
  // MCP Tasks: a task-augmented call waits for the agent's run to end (src/tools/servers/codeagent/tasks.ts)
  taskSupport: 'optional',
  // five 15 MB images: the HTTP gateway takes bodies this large on /codeagent
  maxArgumentBytes: MAX_PROMPT_CALL_JSON_BYTES,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  async handler(args, context) {
    const secrets = Object.values(args.envVars ?? {});
    return clientOf(context).json('POST', '/v1/agents', z.object({ agent: AgentSchema, run: RunSchema }).loose(), { body: args, secrets });
  },
});

const createRun = defineTool({
  name: 'codeagent_create_run',
  description: 'Send a follow-up instruction to a code agent: starts a new run. An agent has one active run at a time (409 agent_busy otherwise).',
  input: CreateRunInput,
  // MCP Tasks: a task-augmented call waits for the agent's run to end (src/tools/servers/codeagent/tasks.ts)
  taskSupport: 'optional',
  maxArgumentBytes: MAX_PROMPT_CALL_JSON_BYTES,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  handler: ({ id, prompt }, context) => clientOf(context).json('POST', `${agentPath(id)}/runs`, z.object({ run: RunSchema }).loose(), { body: { prompt } }),
});

const listRuns = defineTool({
  name: 'codeagent_list_runs',
  description: 'List the runs of a code agent, newest first, a page at a time (pass nextCursor back as cursor).',
  input: ListRunsInput,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  handler: async ({ id, limit, cursor }, context) =>
    pageAnswer(await clientOf(context).json('GET', `${agentPath(id)}/runs`, page(RunSchema), { query: { limit, cursor } })),
});

const getRun = defineTool({
  name: 'codeagent_get_run',
  description: 'Get one run of a code agent: status (CREATING, RUNNING, FINISHED, ERROR, CANCELLED, EXPIRED) and, once over, its result and git branches.',
  input: RunInput,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  handler: ({ id, runId }, context) => clientOf(context).json('GET', runPath(id, runId), RunSchema),
});

const cancelRun = defineTool({
  name: 'codeagent_cancel_run',
  description: 'Cancel an active run (terminal: it becomes CANCELLED). A run already over cannot be cancelled (409 run_not_cancellable).',
  input: RunInput,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  handler: ({ id, runId }, context) => clientOf(context).json('POST', `${runPath(id, runId)}/cancel`, IdSchema),
});

const streamRun = defineTool({
  name: 'codeagent_stream_run',
  description: 'Read a run\'s events (status, assistant, thinking, tool_call, heartbeat, result, error, done) until the run ends or waitSeconds pass. '
    + 'Call again with Last-Event-ID set to the answer\'s lastEventId to continue exactly after the last event answered. '
    + 'ended: true once the stream is done; an expired stream answers the run\'s final state (expired: true, run).',
  input: StreamRunInput,
  // MCP Tasks: a task-augmented call waits for the agent's run to end (src/tools/servers/codeagent/tasks.ts)
  taskSupport: 'optional',
  timeoutMs: (MAX_STREAM_WAIT_SECONDS * 1000) + JSON_TIMEOUT_MS + MARGIN_MS,
  async handler(args, context) {
    const client = clientOf(context);
    const answer = await readRunStream(client, {
      agentId: args.id, runId: args.runId, lastEventId: args['Last-Event-ID'],
      // the window ends early enough to answer (and, on 410, to ask Get Run) before the caller's deadline
      waitMs: Math.max(1000, Math.min(args.waitSeconds * 1000, context.deadline - Date.now() - 10_000)), signal: context.signal,
      progress: (report) => context.progress(report),
      getRun: () => client.json('GET', runPath(args.id, args.runId), RunSchema),
    });
    return { ...answer };
  },
});

const listArtifacts = defineTool({
  name: 'codeagent_list_artifacts',
  description: 'List the files a code agent produced (paths under artifacts/, sizes, times).',
  input: AgentInput,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  handler: ({ id }, context) => clientOf(context).json('GET', `${agentPath(id)}/artifacts`, z.object({ items: z.array(ArtifactSchema) }).loose()),
});

const downloadArtifact = defineTool({
  name: 'codeagent_download_artifact',
  description: 'Get a download link for one artifact: the backend\'s presigned URL (about 15 minutes), or with store: true a copy kept in flowgate '
    + 'and a signed flowgate link a workflow can hand on.',
  input: DownloadArtifactInput,
  timeoutMs: DOWNLOAD_TIMEOUT_MS + MARGIN_MS,
  async handler({ id, path: artifactPath, store }, context) {
    const client = clientOf(context);
    const presigned = await client.json('GET', `${agentPath(id)}/artifacts/download`, DownloadSchema, { query: { path: artifactPath } });
    if (!store) return { path: artifactPath, url: presigned.url, ...(presigned.expiresAt === undefined ? {} : { expiresAt: presigned.expiresAt }) };
    let response;
    try {
      // a presigned URL carries its own authorization; the API key is not sent to the storage host
      response = await httpRequest({
        method: 'GET', url: presigned.url, headers: {}, timeoutMs: client.timeoutWithin(DOWNLOAD_TIMEOUT_MS), maxResponseBytes: MAX_ARTIFACT_BYTES,
        allowPrivateNetwork: context.services.allowPrivateNetwork, signal: context.signal,
      });
    } catch (error) {
      throw client.transportError(error, DOWNLOAD_TIMEOUT_MS);
    }
    if (response.status !== 200) throw new ToolFailure(`downloading ${artifactPath} answered HTTP ${response.status}`, { code: 'download_failed', status: response.status });
    const name = path.posix.basename(artifactPath).replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[.]+/, '_') || 'artifact';
    const key = `tools/${context.orgId}/codeagent/${randomUUID()}/${name}`;
    const type = typeof response.headers['content-type'] === 'string' ? response.headers['content-type'] : 'application/octet-stream';
    const stored = await context.services.blobs.put(key, response.body);
    return {
      path: artifactPath, stored: true, size: stored.size, mimeType: type,
      url: context.services.signer.sign(key, STORED_ARTIFACT_LINK_TTL_SECONDS, { name, type }),
      expiresAt: new Date(Date.now() + STORED_ARTIFACT_LINK_TTL_SECONDS * 1000).toISOString(),
    };
  },
});

const getApiKeyInfo = defineTool({
  name: 'codeagent_get_api_key_info',
  description: 'Describe the connection\'s API key: its name, creation time and user.',
  input: NoInput,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  handler: (_args, context) => clientOf(context).json('GET', '/v1/me', z.object({}).loose()),
});

const listModels = defineTool({
  name: 'codeagent_list_models',
  description: 'List the models a code agent can use (ids for create_agent\'s model.id, with their parameters when the backend gives them).',
  input: NoInput,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  async handler(_args, context) {
    const body = await clientOf(context).json('GET', '/v1/models', z.object({ items: z.array(ModelItemSchema) }).loose());
    // older backends answer bare ids, newer ones objects: always objects here
    return { items: body.items.map((m) => (typeof m === 'string' ? { id: m } : m)) };
  },
});

const listRepositories = defineTool({
  name: 'codeagent_list_repositories',
  description: 'List the code-host repositories the connection can start agents on. Slow (tens of seconds) and strictly rate limited by the backend.',
  input: NoInput,
  timeoutMs: REPOSITORIES_TIMEOUT_MS + MARGIN_MS,
  handler: (_args, context) => clientOf(context).json('GET', '/v1/repositories', z.object({ items: z.array(z.object({ url: z.string() }).loose()) }).loose(),
    { timeoutMs: REPOSITORIES_TIMEOUT_MS }),
});

const createSubToken = defineTool({
  name: 'codeagent_create_sub_token',
  description: 'Mint a user-scoped worker token (valid one hour) for a team member, by forUserEmail or forUserId (not both). '
    + 'Needs a team service-account key.',
  input: CreateSubTokenInput,
  timeoutMs: JSON_TIMEOUT_MS + MARGIN_MS,
  handler: (args, context) => clientOf(context).json('POST', '/v1/sub-tokens', z.object({ accessToken: z.string() }).loose(), { body: args }),
});

export const CODEAGENT_TOOLS: readonly DefinedTool[] = [
  archiveAgent, unarchiveAgent, deleteAgent, getAgent, cancelRun, getRun, createRun, listRuns, listAgents, listArtifacts,
  downloadArtifact, streamRun, getApiKeyInfo, listModels, listRepositories, createSubToken, createAgent,
];
