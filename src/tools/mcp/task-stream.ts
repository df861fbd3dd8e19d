/**
 * `tasks/result` as a stream of messages (sent as SSE by the HTTP route): status notifications
 * while the task is open, an approval elicitation (elicitation.ts) when its run waits on one, then
 * the result (or, past the result wait, the not-ready error). The task is read by polling
 * Temporal at its poll interval, so any replica can stream any task.
 */
import { TaskIdParamsSchema, type JsonRpcResponse, type McpTask, type RequestId, type TaskStatus } from '../../contracts/mcp';
import type { Logger } from '../../observability/logger';
import { approvalElicitation } from './elicitation';
import { ErrorCode, JsonRpcError, failure } from './jsonrpc';
import type { WorkflowTasks } from './tasks';
import { pauseUnlessAborted } from '../../common/pause';

/** Where a stream's messages go; `keepAlive` sends nothing a client reads (an SSE comment). */
export interface MessageSink {
  send(message: unknown): void;
  keepAlive(): void;
}

/** A task result stream ready to run: `run` never rejects, and ends when the stream is done or `signal` aborts. */
export type TaskResultStream = (sink: MessageSink) => Promise<void>;

/** SSE comment lines keep idle proxies from closing a waiting stream. */
const KEEPALIVE_MS = 15_000;
const CLOSED: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

export interface TaskStreamRequest {
  id: RequestId;
  params: unknown;
  orgId: string;
  signal: AbortSignal;
  requestId?: string;
  /** answers the `tasks/result` request itself (once the task closed) */
  answer(): Promise<JsonRpcResponse | undefined>;
}

/**
 * The stream of a `tasks/result` request, or undefined when the task cannot be read: the caller
 * then answers the request as JSON, error included.
 */
export async function openTaskResultStream(tasks: WorkflowTasks, log: Logger, request: TaskStreamRequest): Promise<TaskResultStream | undefined> {
  const params = TaskIdParamsSchema.safeParse(request.params);
  if (!params.success) return undefined;
  const { taskId } = params.data;
  const { id, orgId, signal } = request;
  let task: McpTask;
  try {
    task = await tasks.get(orgId, taskId);
  } catch {
    return undefined;
  }
  const internalError = (): JsonRpcResponse => failure(id, new JsonRpcError(ErrorCode.INTERNAL_ERROR, `internal error (request ${request.requestId ?? 'unknown'})`));
  const pump = async (sink: MessageSink): Promise<void> => {
    const deadline = Date.now() + tasks.resultWaitMs;
    const asked = new Set<number>();
    let seen = `${task.status}\n${task.statusMessage ?? ''}`;
    let quietSince = Date.now();
    while (!signal.aborted && !CLOSED.includes(task.status) && Date.now() < deadline) {
      if (task.status === 'input_required') {
        const approval = await tasks.pendingApproval(orgId, taskId);
        if (approval && !asked.has(approval.stepIndex)) {
          asked.add(approval.stepIndex);
          sink.send(approvalElicitation(taskId, approval));
        }
      }
      await pauseUnlessAborted(task.pollInterval, signal);
      if (signal.aborted) break;
      task = await tasks.get(orgId, taskId);
      const now = `${task.status}\n${task.statusMessage ?? ''}`;
      if (now !== seen) {
        seen = now;
        sink.send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: { ...task } });
        quietSince = Date.now();
      } else if (Date.now() - quietSince > KEEPALIVE_MS) {
        sink.keepAlive();
        quietSince = Date.now();
      }
    }
    if (signal.aborted) return;
    const answer = CLOSED.includes(task.status) ? await request.answer()
      : failure(id, new JsonRpcError(ErrorCode.TOOL_ERROR, `task ${taskId} is still ${task.status}; poll tasks/get and ask again`));
    if (answer) sink.send(answer);
  };
  return (sink) => pump(sink).catch((error: unknown) => {
    log.error('tool gateway task stream failed', { requestId: request.requestId, taskId, error });
    if (!signal.aborted) sink.send(internalError());
  });
}
