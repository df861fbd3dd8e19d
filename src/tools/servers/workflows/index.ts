/**
 * Workflows as MCP tools (issue 17): each trigger of an organization that opted in (a tool name
 * and description on the trigger) is a tool of that organization's `workflows` server. Its input
 * schema is the workflow's input schema; a call runs the workflow exactly as the trigger would
 * (TriggerService: resolve, prepare, start) and answers the run's results. A call may also start
 * the run and answer at once (MCP Tasks, see ../mcp/tasks.ts): the task id is the run id. A caller
 * that waits for the run cannot answer an approval, so a workflow whose steps hold one is refused to
 * it before its run starts (../../mcp/unanswerable.ts), and 2025-era tools/list marks its tool
 * `taskSupport: "required"`.
 */
import { resultsBody, syncResultBody, type BodyContext } from '../../../contracts/run-bodies';
import { firstApproval } from '../../../common/approval-steps';
import type { DesignatedOutput, Registry, TriggerRecord } from '../../../registry';
import { isTemporalBusy, isTemporalUnavailable } from '../../../../temporal/client';
import { StartUnconfirmedError, type TriggerRefusal, type TriggerService } from '../../../runs/trigger-service';
import type { RunService, RunView, StartOptions } from '../../../runs/run-service';
import {
  ToolCallError, ToolFailure, type CallContext, type ContentBlock, type JsonSchemaObject, type ServerSource, type ToolEntry, type ToolOutput,
  type ToolServer, type ToolServices,
} from '../../server';
import { handedOver, unanswerableRefusal } from '../../mcp/unanswerable';

export const WORKFLOWS_SERVER = 'workflows';
/** How long a synchronous call waits for its run; longer runs are for task-augmented calls. */
export const WORKFLOW_TOOL_SYNC_TIMEOUT_MS = 5 * 60_000;
/** Time left to answer after the wait ends, so the answer beats the dispatcher's deadline. */
const ANSWER_MARGIN_MS = 1000;

export interface WorkflowToolsOptions {
  registry: Registry;
  runs: RunService;
  /** resolve, prepare and start, as a trigger call does (the one service the composition root built) */
  triggers: TriggerService;
  resultUrlTtlSeconds: number;
  syncTimeoutMs?: number;
}

/** A run started by a tool call: the id the caller polls (also the task id). */
export interface StartedToolRun {
  runId: string;
  trigger: TriggerRecord;
  /** the idempotency key named an earlier call's run: that run is the answer */
  replayed: boolean;
}

/** How start() starts a run (StartOptions), and what its caller can answer. */
export interface ToolStartOptions extends StartOptions {
  /**
   * The caller cannot answer an approval of the run (it waits for the run in one reply, or is a
   * 2026 plain call that declares no elicitation): a workflow whose steps hold an approval anywhere
   * is refused (ToolCallError UNANSWERABLE) before anything is stored or started.
   */
  refuseApprovals?: boolean;
}

const OPEN_OBJECT: JsonSchemaObject = { type: 'object', properties: {}, required: [], additionalProperties: true };

/** The workflow's input schema as a tool's `inputSchema`: always an object schema with properties and required. */
function toolInputSchema(schema: Record<string, unknown> | undefined): JsonSchemaObject {
  if (!schema) return OPEN_OBJECT;
  const properties = typeof schema.properties === 'object' && schema.properties !== null && !Array.isArray(schema.properties)
    ? Object.fromEntries(Object.entries(schema.properties)) : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  return { ...schema, type: 'object', properties, required };
}

function refusalError(refusal: TriggerRefusal): ToolCallError | ToolFailure {
  if (refusal.code === 'INVALID_INPUTS') return new ToolCallError('INVALID_ARGUMENTS', `arguments: ${refusal.message}`);
  if (refusal.code === 'UNKNOWN_TRIGGER') return new ToolCallError('UNKNOWN_TOOL', refusal.message);
  return new ToolFailure(refusal.message, { code: refusal.code });
}

/** Temporal unreachable or busy (or unsure whether the run started): a call that could not be made, said so. */
function unreachable(err: unknown): unknown {
  if (err instanceof StartUnconfirmedError) {
    return new ToolCallError('UNAVAILABLE', `the workflow service did not confirm whether run ${err.runId} started; call again with the same idempotency key, or call tasks/get ${err.runId} (an unknown task means it did not start)`);
  }
  if (isTemporalBusy(err)) return new ToolCallError('UNAVAILABLE', 'the workflow service is at its limit and refused the call; nothing was started; retry shortly');
  return isTemporalUnavailable(err) ? new ToolCallError('UNAVAILABLE', 'the workflow service is unreachable; retry shortly') : err;
}

function parsedResult(text: string, resultType: string): unknown {
  if (resultType !== 'json') return text;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed;
  } catch {
    return text;
  }
}

export class WorkflowTools {
  readonly source: ServerSource;
  readonly server: ToolServer;
  private readonly triggers: TriggerService;

  constructor(private readonly options: WorkflowToolsOptions) {
    this.triggers = options.triggers;
    const syncTimeoutMs = options.syncTimeoutMs ?? WORKFLOW_TOOL_SYNC_TIMEOUT_MS;
    this.server = {
      name: WORKFLOWS_SERVER,
      description: "The organization's published workflows, each one a tool: a call runs the workflow and answers its results. Long runs: call as an MCP task.",
      embedded: false,
      // one object serves every organization: the context names the one asking
      listTools: (ctx) => this.listTools(ctx.orgId),
      callTool: (name, args, ctx) => this.call(name, args, ctx),
      timeoutMs: () => syncTimeoutMs,
    };
    // Only organizations with a tool trigger have the server: the others see no empty `workflows`.
    const servers = async (orgId: string): Promise<ToolServer[]> => ((await options.registry.triggers.listTools(orgId)).length > 0 ? [this.server] : []);
    this.source = { servers, server: (orgId, name) => (name === WORKFLOWS_SERVER ? servers(orgId).then((found) => found[0]) : undefined), mayServe: (name) => name === WORKFLOWS_SERVER };
  }

  async listTools(orgId: string): Promise<ToolEntry[]> {
    const triggers = await this.options.registry.triggers.listTools(orgId);
    const entries = await Promise.all(triggers.map(async (trigger): Promise<ToolEntry | undefined> => {
      if (!trigger.tool) return undefined;
      const version = await this.options.registry.workflows.getLatestVersion(trigger.workflowId);
      if (!version) return undefined;
      // a run that may wait on an approval cannot be answered in a plain 2025 call: only as a task
      return {
        name: trigger.tool.name, description: trigger.tool.description, inputSchema: toolInputSchema(version.definition.inputSchema),
        execution: { taskSupport: firstApproval(version.definition.steps) ? 'required' : 'optional' },
      };
    }));
    return entries.filter((e): e is ToolEntry => e !== undefined);
  }

  /**
   * Starts the run of tool `name` with `args` as its inputs; the same idempotency key names the same
   * run. `options`: the MCP task's ttl for a run started as a task; eager for a caller that waits;
   * whether to refuse a workflow that holds an approval (judged on the version the run would start).
   */
  async start(orgId: string, name: string, args: Record<string, unknown>, idempotencyKey?: string, options: ToolStartOptions = {}): Promise<StartedToolRun> {
    const { refuseApprovals, ...startOptions } = options;
    const found = await this.options.registry.triggers.toolTrigger(orgId, name);
    if (!found) throw new ToolCallError('UNKNOWN_TOOL', `no tool ${name} on /${WORKFLOWS_SERVER}`);
    const target = await this.triggers.resolve(orgId, found.id);
    if (!target.ok) throw refusalError(target);
    const approval = refuseApprovals ? firstApproval(target.version.definition.steps) : undefined;
    if (approval) throw unanswerableRefusal(name, approval);
    const run = await this.triggers.prepare(target, { inputs: args, coerce: false, startedBy: `tool:${WORKFLOWS_SERVER}/${name}` });
    if (!run.ok) throw refusalError(run);
    try {
      const { runId, replayed } = await this.triggers.start(this.options.runs, run, idempotencyKey, startOptions);
      return { runId, trigger: target.trigger, replayed };
    } catch (err) {
      throw unreachable(err);
    }
  }

  private async call(name: string, args: Record<string, unknown>, ctx: CallContext): Promise<ToolOutput> {
    // the caller waits for the run (eager start: this process's worker takes its first task at once);
    // it cannot answer an approval, so a workflow that holds one is refused before its run starts
    const { runId, replayed } = await this.start(ctx.orgId, name, args, ctx.idempotencyKey, { eager: true, refuseApprovals: true });
    const lost = (err: unknown): never => {
      throw isTemporalUnavailable(err) ? new ToolCallError('UNAVAILABLE', `the workflow service became unreachable while run ${runId} was going; call tasks/get ${runId} later`) : err;
    };
    if (replayed) {
      // an earlier call's run (the same idempotency key, perhaps of a version with an approval) waiting on one: handed over at once
      const view = await this.options.runs.view(runId).catch(lost);
      if (view?.status === 'PAUSED' && view.waitingOn?.kind === 'approval') {
        const { message, details } = handedOver(runId, view.waitingOn, '2025', view.memo.automationId);
        throw new ToolFailure(message, { ...details, workflowId: view.memo.automationId });
      }
    }
    const windowMs = Math.max(0, ctx.deadline - Date.now() - ANSWER_MARGIN_MS);
    const outcome = await this.options.runs.waitFor(runId, windowMs).catch(lost);
    if (!outcome.done) {
      throw new ToolFailure(`run ${runId} is still going after ${Math.round(windowMs / 1000)} seconds; call the tool as an MCP task to wait for it`,
        { runId, status: 'RUNNING' });
    }
    return this.output(outcome.view, ctx.services);
  }

  /** The trigger's designated output wins; else the workflow definition's `output` (as on the results endpoint). */
  private async designatedOutput(view: RunView): Promise<DesignatedOutput | undefined> {
    const trigger = await this.options.registry.triggers.get(view.memo.triggerId);
    if (trigger?.orgId === view.memo.orgId && trigger.designatedOutput) return trigger.designatedOutput;
    const version = await this.options.registry.workflows.getVersion(view.memo.automationId, view.memo.automationVersion);
    return version?.definition.output;
  }

  /**
   * A closed run as a tool result: the designated output (else the last step's result) as
   * `output`, every step's result, and each result file as a `resource_link` block. A run that did
   * not complete is a tool that ran and failed.
   */
  async output(view: RunView, services: Pick<ToolServices, 'blobs' | 'signer'>): Promise<ToolOutput> {
    const base = { runId: view.runId, workflowId: view.memo.automationId, status: view.status };
    if (view.status !== 'COMPLETE') {
      const error = view.error ?? `the run ended ${view.status}`;
      return { isError: true, value: { ...base, error }, content: [{ type: 'text', text: error }] };
    }
    const bodyContext: BodyContext = { blobs: services.blobs, signer: services.signer, resultUrlTtlSeconds: this.options.resultUrlTtlSeconds };
    const sync = await syncResultBody(view, undefined, bodyContext);
    const designated = await this.designatedOutput(view);
    const links = resultsBody(view, designated, bodyContext);
    const results = sync.results.map((r) => ({
      stepIndex: r.stepIndex, ...('stepPath' in r ? { stepPath: r.stepPath } : {}), resultType: r.result.resultType, result: r.result.result, ...(r.truncated ? { truncated: true } : {}),
    }));
    const outputStep = designated?.stepIndex ?? results.at(-1)?.stepIndex;
    // a nested step's result carries its construct's stepIndex too: the output is the construct's own
    const outputResult = results.find((r) => r.stepIndex === outputStep && !('stepPath' in r));
    const value = { ...base, ...(outputResult ? { output: parsedResult(outputResult.result, outputResult.resultType) } : {}), results };
    const content: ContentBlock[] = [{ type: 'text', text: JSON.stringify(value) }];
    if (links.designatedOutput) {
      const d = links.designatedOutput;
      content.push({ type: 'resource_link', uri: d.url, name: d.fileName, mimeType: d.mimeType, size: d.size, description: 'the designated output' });
    }
    for (const step of links.results) {
      for (const [fileName, file] of Object.entries(step.resultUrls)) {
        content.push({ type: 'resource_link', uri: file.url, name: `step-${step.stepIndex}/${fileName}`, mimeType: file.mimeType, size: file.size });
      }
    }
    return { value, content };
  }
}
