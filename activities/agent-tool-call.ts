/**
 * The callAgentTool activity: one tool call the model asked for, through the in-process
 * dispatcher as the agent's organization, with the invoking request's forwarded headers and an
 * idempotency key of its own (`<invocationId>:<turn>:<index>`), the same on every retry. The
 * whole result is kept as a chat artifact; the model gets it cut to the agent's budget.
 */
import { Context } from '@temporalio/activity';
import { invocationKey, type ToolCallRequest, type ToolCallResult } from '../src/common/agent-invocation';
import { isRecord } from '../src/common/narrow';
import type { BlobStore } from '../src/blobs/blob-store';
import type { Registry } from '../src/registry';
import type { ToolCaller } from '../src/tools/caller';
import { ToolCallError } from '../src/tools/errors';

export interface AgentToolDeps {
  registry: Registry;
  blobs: BlobStore;
  tools?: ToolCaller;
}

/** At most `limit` characters, never half a surrogate pair, saying how much was left out. */
export function cutToBudget(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const last = text.charCodeAt(limit - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? limit - 1 : limit;
  return `${text.slice(0, end)}\n[… ${text.length - end} more characters cut]`;
}

export function createCallAgentTool(deps: AgentToolDeps) {
  return async function callAgentTool(request: ToolCallRequest): Promise<ToolCallResult> {
    const { binding } = request;
    const shown = `${binding.server}/${binding.tool}`;
    const settle = async (ok: boolean, payload: Record<string, unknown>, line: string): Promise<ToolCallResult> => {
      const text = JSON.stringify(payload);
      const file = `tool-${request.turn}-${request.index}.json`;
      const key = invocationKey(request.orgId, request.invocationId, file);
      await deps.blobs.put(key, cutToBudget(text, request.toolResultChars));
      const artifactKey = `agents/${request.orgId}/chats/${request.chatId}/artifacts/${request.invocationId}-${file}`;
      const stored = await deps.blobs.put(artifactKey, text);
      await deps.registry.agents.addArtifact({
        chatId: request.chatId, name: `${request.invocationId}-${binding.server}-${binding.tool}-${request.turn}-${request.index}.json`,
        key: artifactKey, mimeType: 'application/json', size: stored.size, createdAt: new Date().toISOString(),
      });
      return { ref: { toolCallId: request.toolCallId, key }, ok, line };
    };

    let args: unknown;
    try {
      args = JSON.parse(request.arguments || '{}');
    } catch {
      return settle(false, { error: 'the arguments are not JSON' }, `${shown}: arguments are not JSON`);
    }
    if (!isRecord(args)) return settle(false, { error: 'the arguments must be a JSON object' }, `${shown}: arguments are not an object`);
    if (!deps.tools) return settle(false, { error: 'this worker has no tool dispatcher' }, `${shown}: no dispatcher`);
    const started = Date.now();
    // Heartbeats let Temporal notice a dead worker within the heartbeat timeout, not the call's whole limit.
    const heartbeat = setInterval(() => Context.current().heartbeat(), 2000);
    try {
      const result = await deps.tools.call(request.orgId, binding.server, binding.tool, args, {
        idempotencyKey: `${request.invocationId}:${request.turn}:${request.index}`,
        forwardHeaders: request.forwardHeaders,
        signal: Context.current().cancellationSignal,
      });
      const elapsed = `${Date.now() - started} ms`;
      if (result.isError) return settle(false, { ...result.value, error: result.message }, `${shown} failed (${elapsed}): ${result.message}`);
      return settle(true, result.value, `${shown} (${elapsed})`);
    } catch (error) {
      // A call that could not be made is the model's to hear about (a wrong tool, bad arguments); anything else retries.
      if (!(error instanceof ToolCallError)) throw error;
      return settle(false, { error: error.message, code: error.code }, `${shown} could not be called: ${error.message}`);
    } finally {
      clearInterval(heartbeat);
    }
  };
}
