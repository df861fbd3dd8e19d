import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { AuditTrail } from '../audit/audit-trail';
import type { ApprovalLinks } from '../crypto/approval-links';
import type { CodecSessions } from '../crypto/codec-sessions';
import type { BlobStore } from '../blobs/blob-store';
import type { Config } from '../config/config';
import type { Logger } from '../observability/logger';
import type { FlowgateMetrics } from '../observability/metrics';
import type { RateLimit } from './rate-limit/local';
import type { Registry } from '../registry';
import type { AgentService } from '../agents/service';
import type { RunRestarts } from '../runs/run-restarts';
import type { RunBatches } from '../runs/run-batch';
import type { RunHolds } from '../runs/run-holds';
import type { RunService } from '../runs/run-service';
import type { RunWatcher } from '../runs/run-watcher';
import type { TriggerService } from '../runs/trigger-service';
import type { WebhookSecrets } from '../runs/webhook-secrets';
import type { WebhookReceiver } from '../triggers/webhooks/receiver';
import type { IdentityProviders } from '../people/identity-providers';
import type { SignedUrlSigner } from '../crypto/signed-urls';
import type { CustomServers, RuntimeTokens, ToolDispatcher } from '../tools';
import type { WorkflowTasks } from '../tools/mcp/tasks';
import type { ConsoleAgents } from '../console/agents';
import type { HostedForms } from '../console/forms';
import type { ConsoleRuns } from '../console/runs';
import type { ConsoleSessions } from '../console/sessions';
import type { ShownOnce } from '../console/shown-once';
import type { Management } from '../management';
import type { OAuthServer } from '../oauth/authorization-server';
import type { Tickets } from '../oauth/tickets';
import type { OAuthResources } from './oauth-resource';
import type { OriginPolicy } from './origin-policy';
import type { OAuthSignInMethod } from './oauth-sign-in';

/** The tool gateway's OAuth authorization server (docs/tool-gateway.md "Signing in by URL"). */
export interface OAuthDeps {
  server: OAuthServer;
  tickets: Tickets;
  /** the gateway's resource identifiers, at its public URL */
  resources: OAuthResources;
  /** how a person signs in on the authorization page */
  signIn: OAuthSignInMethod;
}

/** Everything the gateway needs, built once at start (src/app/services.ts) and passed down: no route builds a service. */
export interface GatewayDeps {
  config: Readonly<Config>;
  registry: Registry;
  /** who did what (docs/audit.md): the admin routes, approval decisions and tool calls record here */
  audit: AuditTrail;
  runs: RunService;
  /** resolve, prepare and start a run through a trigger (trigger calls) */
  triggers: TriggerService;
  /** re-run and resume (the management API) */
  restarts: RunRestarts;
  /** bulk actions on runs (POST /api/v1/runs/batch); absent in a gateway built without it (the routes answer 503) */
  batches?: RunBatches;
  /** paused workflows and triggers (absent: their routes answer 503) */
  holds?: RunHolds;
  /** agents, chats and invocations (/api/v1/agents; the same service the agent-management tools use) */
  agents: AgentService;
  /** workflow, trigger (with their schedules), key and member administration: the management API and the console call the same services */
  management: Management;
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
  /** the one reader per watched run behind long polls and status streams */
  watcher: RunWatcher;
  /** completion-callback signing secrets; without it the webhook-secret routes are absent */
  webhookSecrets?: WebhookSecrets;
  /** verified triggers' deliveries and shaped triggers' windows (docs/webhooks.md); without it neither is offered */
  webhooks?: WebhookReceiver;
  /** HTTP requests and synchronous answers are counted here; /metrics serves it */
  metrics?: FlowgateMetrics;
  /** the console's sessions and runs, and triggers' hosted forms (src/console/); without it /console and /forms are absent */
  console?: { sessions: ConsoleSessions; runs: ConsoleRuns; forms: HostedForms; agents?: ConsoleAgents; shownOnce: ShownOnce };
  /** organizations' OpenID Connect providers and the sign-in through them (src/people/); without it /api/v1/identity-provider and the console's provider sign-in are absent */
  identityProviders?: IdentityProviders;
  /** the Temporal Web UI of the embedded dev server flowgate started (none with TEMPORAL_ADDRESS or headless) */
  temporalUiUrl?: string;
  /** the in-process worker's state, when this process runs one: down once it stopped polling because its data keys cannot open a run (src/app/start.ts) */
  workerHealth?: () => 'ok' | 'down';
  /** the run-data codec behind /codec/decode and /codec/encode, and the Web UI origins that may call them; without it those routes are absent */
  codec?: { codec: PayloadCodec; origins: readonly string[]; sessions: CodecSessions; /** the embedded Web UI's codec endpoint (its cookie must be set on this URL's host) */ endpoint?: string };
  /** the tool gateway as an OAuth protected resource and its authorization server; without it only runtime tokens open /tools */
  oauth?: OAuthDeps;
  /**
   * the Origin and Host rules of the MCP and OAuth endpoints (DNS rebinding protection,
   * src/http/origin-policy.ts); unset (a gateway built by hand): made from the configuration alone
   */
  origins?: OriginPolicy;
}
