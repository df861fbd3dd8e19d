/**
 * flowgate's Prometheus metrics (prom-client), one registry per instance so that several
 * instances in one process (the tests) count apart. The gateway records HTTP requests and
 * synchronous answers, the tool dispatcher records tool calls, and the worker records runs and
 * waiting approvals through the `flowgateMetrics` sink (workflows/run/metrics-interceptors.ts);
 * the worker's agent model activity records tokens and cost of each model call (`agentUsage`).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { InjectedSinks } from '@temporalio/worker';
import type { MetricsSinks } from '../common/metrics-sinks';

/** Seconds; from a cached status poll (ms) to a synchronous call that waits its whole window (60 s). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const TOOL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export type ToolOutcome = 'ok' | 'error' | string;

export class FlowgateMetrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'route' | 'method' | 'status'>;
  private readonly httpDuration: Histogram<'route' | 'method' | 'status'>;
  private readonly syncAnswers: Counter<'status'>;
  private readonly eagerStarts: Counter<'result'>;
  private readonly runsStarted: Counter<'workflow'>;
  private readonly runsEnded: Counter<'workflow' | 'status'>;
  private readonly toolCalls: Counter<'server' | 'tool' | 'outcome'>;
  private readonly durableAttempts: Counter<'server' | 'tool' | 'outcome'>;
  private readonly durableRetries: Counter<'server' | 'tool' | 'reason'>;
  private readonly toolDuration: Histogram<'server' | 'tool' | 'outcome'>;
  private readonly agentTokens: Counter<'org' | 'agent' | 'model' | 'kind'>;
  private readonly agentCost: Counter<'org' | 'agent' | 'model'>;
  private readonly auditRecords: Counter<'result'>;
  private readonly webhookDeliveries: Counter<'preset' | 'outcome' | 'check'>;
  /**
   * The step indexes of the approval steps waiting in runs this process's worker hosts, by run ID:
   * a run's end drops its entry at once (a scan of every waiting approval at each run's end cost
   * O(waiting) per run, with thousands of approvals waiting)
   */
  private readonly waitingApprovals = new Map<string, Set<number>>();
  private waitingCount = 0;

  constructor() {
    const registers = [this.registry];
    this.httpRequests = new Counter({
      name: 'flowgate_http_requests_total', help: 'HTTP requests answered, by route template, method and status',
      labelNames: ['route', 'method', 'status'], registers,
    });
    this.httpDuration = new Histogram({
      name: 'flowgate_http_request_duration_seconds', help: 'Time to answer an HTTP request, by route template, method and status',
      labelNames: ['route', 'method', 'status'], buckets: HTTP_BUCKETS, registers,
    });
    this.syncAnswers = new Counter({
      name: 'flowgate_sync_calls_total', help: 'Trigger calls that waited for the run: answered 200 (run ended in the window) or 202 (polling handle)',
      labelNames: ['status'], registers,
    });
    this.eagerStarts = new Counter({
      name: 'flowgate_eager_starts_total', help: 'Starts of runs whose caller waits that asked for eager execution: eager (the first workflow task came back in the start\'s answer) or declined (no free local worker slot, or eager start is off on the server)',
      labelNames: ['result'], registers,
    });
    this.runsStarted = new Counter({
      name: 'flowgate_runs_started_total', help: 'Runs started on this process\'s worker, by workflow (automation id, or workflow type for agent invocations)',
      labelNames: ['workflow'], registers,
    });
    this.runsEnded = new Counter({
      name: 'flowgate_runs_ended_total', help: 'Runs ended on this process\'s worker, by workflow and status (COMPLETE, FAILED, TIMEOUT, CANCELLED)',
      labelNames: ['workflow', 'status'], registers,
    });
    this.toolCalls = new Counter({
      name: 'flowgate_tool_calls_total', help: 'Tool calls (tool gateway and workflow steps), by server, tool and outcome',
      labelNames: ['server', 'tool', 'outcome'], registers,
    });
    this.durableAttempts = new Counter({
      name: 'flowgate_durable_tool_attempts_total', help: 'Attempts of durable tool calls made on this process\'s worker, by server, tool and outcome (ok, retry: another attempt follows, failed: the last one)',
      labelNames: ['server', 'tool', 'outcome'], registers,
    });
    this.durableRetries = new Counter({
      name: 'flowgate_durable_tool_retries_total', help: 'Failed attempts of durable tool calls that another attempt follows, by server, tool and reason (network, timeout, http_5xx, http_429)',
      labelNames: ['server', 'tool', 'reason'], registers,
    });
    this.toolDuration = new Histogram({
      name: 'flowgate_tool_call_duration_seconds', help: 'Time a tool call took, by server, tool and outcome',
      labelNames: ['server', 'tool', 'outcome'], buckets: TOOL_BUCKETS, registers,
    });
    this.agentTokens = new Counter({
      name: 'flowgate_agent_tokens_total', help: 'Tokens of agents\' model calls made on this process\'s worker, by organization, agent, model and kind (prompt, completion, cached_prompt: the part of prompt served from the provider\'s cache)',
      labelNames: ['org', 'agent', 'model', 'kind'], registers,
    });
    this.agentCost = new Counter({
      name: 'flowgate_agent_cost_usd_total', help: 'Cost in USD of agents\' model calls made on this process\'s worker at FLOWGATE_MODEL_PRICES, by organization, agent and model (models without a price add nothing)',
      labelNames: ['org', 'agent', 'model'], registers,
    });
    this.auditRecords = new Counter({
      name: 'flowgate_audit_records_total', help: 'Audit records: written to the registry, or failed (then logged at error level instead)',
      labelNames: ['result'], registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'flowgate_webhook_deliveries_total', help: 'Calls to verified triggers, by preset and outcome (verified, refused) and, when refused, the check that failed',
      labelNames: ['preset', 'outcome', 'check'], registers,
    });
    const waiting = (): number => this.waitingCount;
    new Gauge({
      name: 'flowgate_approvals_pending', help: 'Approval steps waiting for a decision that started waiting on this process\'s worker',
      registers,
      collect() {
        this.set(waiting());
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'flowgate_' });
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    const labels = { route, method, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  syncAnswer(status: 200 | 202): void {
    this.syncAnswers.inc({ status: String(status) });
  }

  eagerStart(eager: boolean): void {
    this.eagerStarts.inc({ result: eager ? 'eager' : 'declined' });
  }

  toolCall(server: string, tool: string, outcome: ToolOutcome, seconds: number): void {
    const labels = { server, tool, outcome };
    this.toolCalls.inc(labels);
    this.toolDuration.observe(labels, seconds);
  }

  /** One attempt of a durable tool call (activities/durable-tool-call.ts); a retry counts its reason too. */
  durableAttempt(server: string, tool: string, outcome: 'ok' | 'retry' | 'failed', reason?: string): void {
    this.durableAttempts.inc({ server, tool, outcome });
    if (outcome === 'retry' && reason !== undefined) this.durableRetries.inc({ server, tool, reason });
  }

  /** One model call of an agent: its tokens by kind, and its cost when the model has a price. */
  agentUsage(call: { orgId: string; agentId: string; model: string; promptTokens: number; completionTokens: number; cachedPromptTokens: number; costNanoUsd: number | null }): void {
    const labels = { org: call.orgId, agent: call.agentId, model: call.model };
    this.agentTokens.inc({ ...labels, kind: 'prompt' }, call.promptTokens);
    this.agentTokens.inc({ ...labels, kind: 'completion' }, call.completionTokens);
    this.agentTokens.inc({ ...labels, kind: 'cached_prompt' }, call.cachedPromptTokens);
    this.agentCost.inc(labels, call.costNanoUsd === null ? 0 : call.costNanoUsd / 1e9);
  }

  auditRecord(written: boolean): void {
    this.auditRecords.inc({ result: written ? 'written' : 'failed' });
  }

  /** A stopped worker hosts no runs: its waiting approvals are someone else's to count. */
  webhookDelivery(preset: string, outcome: 'verified' | 'refused', check?: string): void {
    this.webhookDeliveries.inc({ preset, outcome, check: check ?? '' });
  }

  workerStopped(): void {
    this.waitingApprovals.clear();
    this.waitingCount = 0;
  }

  /** The worker's side: the sink the workflow code reports to. */
  sinks(): InjectedSinks<MetricsSinks> {
    return {
      flowgateMetrics: {
        runStarted: { fn: (_info, workflow) => this.runsStarted.inc({ workflow }), callDuringReplay: false },
        runEnded: {
          fn: (info, workflow, status) => {
            this.runsEnded.inc({ workflow, status });
            this.waitingCount -= this.waitingApprovals.get(info.workflowId)?.size ?? 0;
            this.waitingApprovals.delete(info.workflowId);
          },
          callDuringReplay: false,
        },
        // Not on replay: a query on a closed run replays its whole history, and a run cancelled while
        // waiting would be left counted. So a waiting approval is counted by the worker that saw it start.
        approvalWaiting: {
          fn: (_info, runId, stepIndex, waiting) => {
            const steps = this.waitingApprovals.get(runId) ?? new Set<number>();
            const had = steps.has(stepIndex);
            if (waiting && !had) steps.add(stepIndex);
            else if (!waiting && had) steps.delete(stepIndex);
            else return;
            this.waitingCount += waiting ? 1 : -1;
            if (steps.size === 0) this.waitingApprovals.delete(runId);
            else this.waitingApprovals.set(runId, steps);
          },
          callDuringReplay: false,
        },
      },
    };
  }

  contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
