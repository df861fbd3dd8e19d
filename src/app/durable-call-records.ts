/**
 * What durable tool calls (docs/tool-gateway.md, durable calls) leave behind: the audit records of a
 * call's start, each retry and its outcome, and the attempt and retry counters. The gateway records
 * the start (DurableCalls' `onStarted`), the worker's activity the attempts (`durableCalls`).
 */
import type { DurableCallEvent, DurableCallObserver } from '../../activities/durable-tool-call';
import { DURABLE_CALL_ACTIONS } from '../audit/actions';
import { argumentsDigest, type AuditActor, type AuditTrail } from '../audit/audit-trail';
import type { DurableToolCallInput } from '../common/durable-call';
import type { FlowgateMetrics } from '../observability/metrics';
import type { DurableStartRecorder } from '../tools/custom/durable';

const NO_AUDIT_SOURCE = { sourceIp: null, userAgent: null, requestId: null };
/** The status an event's record carries when the upstream answered none of its own. */
const STATUS: Record<DurableCallEvent['event'], number> = { completed: 200, upstream_task: 202, cancelled: 499, retried: 502, failed: 502 };

/** Who a durable call's records name: the API key whose token made it, else flowgate itself (a step's or agent's call). */
async function durableActor(audit: AuditTrail, input: DurableToolCallInput): Promise<AuditActor> {
  if (input.keyId !== undefined) return audit.keyActor(input.keyId, 'runtime_token');
  return { actor: 'flowgate', actorName: 'durable tool call', credentialKind: 'runtime_token', credentialId: input.taskId };
}

/** The start of a durable call, audited once (the same call again, by its idempotency key, is not). */
export function durableCallStarted(audit: AuditTrail): DurableStartRecorder {
  return async (input, reused) => {
    if (reused) return;
    await audit.record({
      orgId: input.orgId, action: DURABLE_CALL_ACTIONS.started, target: { type: 'task', id: input.taskId }, status: 202,
      details: { server: input.server, tool: input.tool, argumentsDigest: argumentsDigest(input.args), maxAttempts: input.policy.maxAttempts },
    }, await durableActor(audit, input), NO_AUDIT_SOURCE, 'committed');
  };
}

/** Each attempt of a durable call: counted, and its retries and outcome audited. */
export function durableCallObserver(audit: AuditTrail, metrics: FlowgateMetrics): DurableCallObserver {
  return {
    attempt: (server, tool, outcome, reason) => metrics.durableAttempt(server, tool, outcome, reason),
    async lastUpstreamTask(input) {
      const { records } = await audit.list(input.orgId, { action: DURABLE_CALL_ACTIONS.upstream_task, target: `task:${input.taskId}` }, 1);
      const id = records[0]?.details.upstreamTaskId;
      return typeof id === 'string' ? id : undefined;
    },
    async record(input, event) {
      await audit.record({
        orgId: input.orgId, action: DURABLE_CALL_ACTIONS[event.event], target: { type: 'task', id: input.taskId },
        status: event.status ?? STATUS[event.event],
        outcome: event.event === 'completed' || event.event === 'upstream_task' ? 'success' : 'failed',
        details: {
          server: input.server, tool: input.tool, attempt: event.attempt, ...(event.reason ? { reason: event.reason } : {}),
          ...(event.message ? { message: event.message.slice(0, 500) } : {}),
          ...(event.upstreamTaskId === undefined ? {} : { upstreamTaskId: event.upstreamTaskId.slice(0, 200) }), ...(event.resumed ? { resumed: true } : {}),
        },
      }, await durableActor(audit, input), NO_AUDIT_SOURCE, 'committed');
    },
  };
}
