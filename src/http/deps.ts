import type { Client } from '@temporalio/client';
import type { ApprovalLinks } from '../crypto/approval-links';
import type { BlobStore } from '../blobs/blob-store';
import type { Config } from '../config/config';
import type { Logger } from '../observability/logger';
import type { FlowgateMetrics } from '../observability/metrics';
import type { RateLimit } from './rate-limit/local';
import type { Registry } from '../registry';
import type { RunService } from '../runs/run-service';
import type { RunWatcher } from '../runs/run-watcher';
import type { WebhookSecrets } from '../runs/webhook-secrets';
import type { ScheduleService } from '../schedules/schedule-service';
import type { SignedUrlSigner } from '../crypto/signed-urls';
import type { CustomServers, RuntimeTokens, ToolDispatcher } from '../tools';
import type { WorkflowTasks } from '../tools/mcp/tasks';

/** Everything the gateway needs, built once at start and passed down (no module reads globals). */
export interface GatewayDeps {
  config: Readonly<Config>;
  registry: Registry;
  runs: RunService;
  /** triggers' Temporal schedules */
  schedules: ScheduleService;
  temporal: Client;
  blobs: BlobStore;
  signer: SignedUrlSigner;
  /** the tool gateway's in-process dispatcher (also the connection store) */
  tools: ToolDispatcher;
  runtimeTokens: RuntimeTokens;
  /** custom tool servers and custom connections (test, OAuth consent); without it those routes are absent */
  customServers?: CustomServers;
  approvalLinks: ApprovalLinks;
  /** MCP Tasks on workflow tools (tasks/get, …); without it the tool gateway offers no tasks */
  tasks?: WorkflowTasks;
  /** the budget shared by every replica (Redis or PostgreSQL); unset: this process's own buckets */
  rateLimit?: RateLimit;
  log: Logger;
  /** the one reader per watched run behind long polls and status streams; createApp makes one when absent */
  watcher?: RunWatcher;
  /** completion-callback signing secrets; without it the webhook-secret routes are absent */
  webhookSecrets?: WebhookSecrets;
  /** HTTP requests and synchronous answers are counted here; /metrics serves it */
  metrics?: FlowgateMetrics;
}
