/**
 * Every service flowgate runs on, built once from the configuration, the registry and the Temporal
 * client, and handed down: to the gateway's routes (GatewayDeps), to the tool servers (ServerKindDeps,
 * through the dispatcher) and to the activities (createActivities). No route, tool server or
 * activity constructs a service or repeats one of their defaults; test/app/composition.test.ts
 * holds that. start.ts decides only the order of start-up and shut-down.
 */
import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { ActivityDependencies } from '../../activities';
import type { StepKind } from '../../activities/steps';
import { AgentService } from '../agents/service';
import { AuditTrail } from '../audit/audit-trail';
import type { BlobStore } from '../blobs/blob-store';
import type { Config } from '../config/config';
import { ConsoleAgents } from '../console/agents';
import { HostedForms } from '../console/forms';
import { ConsoleRuns } from '../console/runs';
import { ConsoleSessions } from '../console/sessions';
import { ShownOnce } from '../console/shown-once';
import { createApprovalLinks, type ApprovalLinks } from '../crypto/approval-links';
import { createCodecSessions, type CodecSessions } from '../crypto/codec-sessions';
import { connectionKey, createConnectionCipher } from '../crypto/connection-cipher';
import { createRuntimeTokens, type RuntimeTokens } from '../crypto/runtime-tokens';
import { createSigner, type SignedUrlSigner } from '../crypto/signed-urls';
import type { GatewayDeps } from '../http/deps';
import { OAuthResources } from '../http/oauth-resource';
import { OriginPolicy } from '../http/origin-policy';
import { adminTokenSignIn } from '../http/oauth-sign-in';
import { forgetApiKeys } from '../http/auth';
import { OAuthServer } from '../oauth/authorization-server';
import { Tickets } from '../oauth/tickets';
import type { RateLimit } from '../http/rate-limit/local';
import type { Logger } from '../observability/logger';
import type { FlowgateMetrics } from '../observability/metrics';
import type { Registry } from '../registry';
import { expiresAt, retentionMs } from '../retention/policy';
import { FinishedRunCache } from '../runs/finished-run-cache';
import { RunBatches } from '../runs/run-batch';
import { RunHolds } from '../runs/run-holds';
import { RunRestarts } from '../runs/run-restarts';
import { RunService } from '../runs/run-service';
import { RunWatcher } from '../runs/run-watcher';
import { TriggerService } from '../runs/trigger-service';
import { WebhookSecrets } from '../runs/webhook-secrets';
import { ShapeQueue } from '../triggers/shaping/shape-queue';
import { ShapedRuns } from '../triggers/shaping/shaped-runs';
import { WebhookReceiver } from '../triggers/webhooks/receiver';
import { TriggerSecrets } from '../triggers/webhooks/secrets';
import { durableCallObserver, durableCallStarted } from './durable-call-records';
import { IdentityProviders } from '../people/identity-providers';
import { AlertAdmin, BudgetAdmin, DefinitionAdmin, KeyAdmin, MemberAdmin, TriggerAdmin, WorkflowAdmin, type Management } from '../management';
import { AlertDeliveries } from '../runs/alert-deliveries';
import { AlertNotifier, runWaitingAtApproval } from '../runs/alerts';
import { ScheduleService } from '../schedules/schedule-service';
import { createToolDispatcher, CustomServers, DurableCalls, type ServerKind, type ServerSource, type ToolDispatcher } from '../tools';
import { WorkflowTasks } from '../tools/mcp/tasks';
import { CodeAgentTasks } from '../tools/servers/codeagent/tasks';
import { createTaskKinds, type TaskKindRegistration } from '../tools/servers/task-kinds';
import { WorkflowTools } from '../tools/servers/workflows/index';
import { definitionConnections } from './definition-ports';

export interface ServiceInputs {
  config: Readonly<Config>;
  log: Logger;
  registry: Registry;
  client: Client;
  blobs: BlobStore;
  metrics: FlowgateMetrics;
  /** the key of file links, approval links and runtime tokens (src/crypto/data-dir.ts) */
  signingKey: Buffer;
  /** tool server kinds besides the built-ins (tests register a tiny one) */
  serverKinds?: readonly ServerKind[];
  /** where organizations' own tool servers come from, besides the registry and the workflows */
  serverSources?: readonly ServerSource[];
  /** step kinds besides the built-ins (startFlowgate's `stepKinds`): the activities run them, definitions may use them */
  stepKinds?: readonly StepKind[];
  /** MCP task kinds besides the built-ins (tests register a tiny one) */
  taskKinds?: readonly TaskKindRegistration[];
}

export interface ConsoleServices {
  sessions: ConsoleSessions;
  runs: ConsoleRuns;
  forms: HostedForms;
  /** the organization's agents and their chats, through the agent service */
  agents: ConsoleAgents;
  /** a new API key, held for the one page that shows it */
  shownOnce: ShownOnce;
}

export interface Services {
  /** the audit trail (docs/audit.md) */
  audit: AuditTrail;
  runs: RunService;
  triggers: TriggerService;
  restarts: RunRestarts;
  /** bulk actions on runs selected by a filter (the batch workflow's activities and the batch routes) */
  batches: RunBatches;
  /** paused workflows and triggers (their new runs wait PENDING) and their release */
  holds: RunHolds;
  watcher: RunWatcher;
  schedules: ScheduleService;
  /** workflow, trigger, key and member administration (src/management/: the management API and the console) */
  management: Management;
  webhookSecrets: WebhookSecrets;
  /** the worker's side of alert rules: each ended run handed to the rules it concerns (src/runs/alerts.ts) */
  alerts: AlertNotifier;
  /** verified triggers' deliveries and shaped triggers' windows (docs/webhooks.md) */
  webhooks: WebhookReceiver;
  agents: AgentService;
  /** the in-process tool dispatcher (the catalog, the connection store, every call) */
  tools: ToolDispatcher;
  customServers: CustomServers;
  workflowTools: WorkflowTools;
  /** MCP tasks: workflow tools, agent_invoke and the code-agent tools that wait */
  tasks: WorkflowTasks;
  runtimeTokens: RuntimeTokens;
  /** the codec endpoint's sign-in sessions (signed with the signing key, so every replica accepts them) */
  codecSessions: CodecSessions;
  /** the tool gateway's OAuth authorization server (its resources are named once the gateway listens) */
  oauth: { server: OAuthServer; tickets: Tickets };
  /**
   * Signs and checks file links. Links carry the public URL, known only once the gateway listens
   * (port 0): until publicLinks() is called they carry FLOWGATE_PUBLIC_URL, or no host.
   */
  signer: SignedUrlSigner;
  /** what the worker's activities are given */
  activities: ActivityDependencies;
  /** the console's sessions and its view of runs (src/console/), and triggers' hosted forms */
  console: ConsoleServices;
  /** organizations' OpenID Connect providers and the sign-in through them (src/people/) */
  identityProviders: IdentityProviders;
  /** Once the gateway listens at `publicUrl`: its file-link signer (the same links as `signer` from then on) and its approval links. */
  publicLinks(publicUrl: string): { signer: SignedUrlSigner; approvalLinks: ApprovalLinks };
}

/** A link never outlives its blob: no longer than the blob's family is kept (src/retention/policy.ts). */
function linkBound(key: string, retention: Config['retention']): number | undefined {
  if (!retention.enabled) return undefined;
  const period = retentionMs(key, retention);
  return period === undefined ? undefined : Math.floor(period / 1000);
}

export async function buildServices(inputs: ServiceInputs): Promise<Services> {
  const { config, log, registry, client, blobs, metrics, signingKey } = inputs;
  const { taskQueue } = config.temporal;

  const signerOptions = { maxTtlSeconds: (k: string) => linkBound(k, config.retention) };
  let publicSigner = createSigner(signingKey, config.publicUrl ?? '', Date.now, signerOptions);
  const signer: SignedUrlSigner = {
    sign: (...args) => publicSigner.sign(...args),
    verify: (...args) => publicSigner.verify(...args),
    expiry: (ttlSeconds) => publicSigner.expiry(ttlSeconds),
  };
  const cipher = createConnectionCipher(await connectionKey(config.dataDir, config.connectionKey));
  // where browsers reach the gateway (the identity providers' redirect URI): known once it listens
  let publicBase = config.publicUrl ?? '';
  const identityProviders = new IdentityProviders({ registry, cipher, allowPrivateNetwork: config.allowPrivateNetwork, baseUrl: () => publicBase });

  const runs = new RunService(client, taskQueue, log, new FinishedRunCache(registry.finishedRuns, log), metrics, { unreachableMs: config.temporal.unreachableMs });
  const triggers = new TriggerService({ registry, blobs, log, limits: { ...config.concurrency, taskQueue } });
  const { retention } = config;
  const restarts = new RunRestarts({
    registry, blobs, signer, runs, triggers,
    blobExpiry: (key, modified) => (retention.enabled ? expiresAt(key, modified, retention) : undefined),
  });
  const batches = new RunBatches({ client, taskQueue, runs, restarts, inputsOf: (runId) => triggers.startedInputs(runs, runId) });
  const holds = new RunHolds({ client, taskQueue, registry });
  const watcher = new RunWatcher((runId) => runs.view(runId), config.livePollMs, log);
  const schedules = new ScheduleService({ client, registry, taskQueue, log });
  const webhookSecrets = new WebhookSecrets(registry, cipher);
  const audit = new AuditTrail({ store: registry.audit, keyName: (keyId) => registry.apiKeys.nameOf(keyId), log, metrics });
  const webhooks = new WebhookReceiver({
    registry, triggers, runs, log, audit, queue: new ShapeQueue({ temporal: client, taskQueue }), secrets: new TriggerSecrets(cipher),
    meter: (preset, outcome, check) => metrics.webhookDelivery(preset, outcome, check),
  });

  // The dispatcher's catalog lists the agent-management and custom servers, which call back into
  // the dispatcher: they get it lazily, once it is assembled below.
  const assembled: { dispatcher?: ToolDispatcher } = {};
  const dispatcher = (): ToolDispatcher => {
    if (!assembled.dispatcher) throw new Error('the tool dispatcher is not assembled yet');
    return assembled.dispatcher;
  };
  // one agent service for every door: the agent-management tools, /api/v1/agents and agent_invoke as a task
  const agents = new AgentService({
    registry, blobs, temporal: client, taskQueue, config, signer,
    servers: (orgId) => dispatcher().servers(orgId), tools: (server, orgId, signal) => dispatcher().listOf(server, orgId, signal),
  });
  // the organization's custom servers are listed by the catalog they need the services of
  const customServers = new CustomServers({ registry, log, services: () => dispatcher().services });
  // each organization's published triggers that opted in, as the tools of its `workflows` server
  const workflowTools = new WorkflowTools({ registry, runs, triggers, resultUrlTtlSeconds: config.resultUrlTtlSeconds });
  // calls of durable custom servers' tools: one task workflow each, started by the dispatcher or the task methods
  const durable = new DurableCalls({
    client, taskQueue, limits: config.concurrency,
    onStarted: durableCallStarted(audit),
  });
  const tools = createToolDispatcher({
    config, registry, connectionCipher: cipher, agents, blobs, log, temporal: client, signer, metrics, durable,
    serverKinds: inputs.serverKinds, serverSources: [customServers.source, workflowTools.source, ...(inputs.serverSources ?? [])],
  });
  assembled.dispatcher = tools;

  const tasks = new WorkflowTasks({
    client, pageSize: config.tasksPageSize, maxTtlMs: config.tasksMaxTtlSeconds * 1000,
    // each server kind's task kind (src/tools/servers/task-kinds.ts), then startFlowgate's `taskKinds`
    kinds: createTaskKinds({
      client, taskQueue, runs, tools, services: { blobs, signer }, workflowTools, agents,
      // the code-agent tools that wait: a waiter workflow per task polls the backend
      codeAgents: new CodeAgentTasks({ client, taskQueue, tools }),
      durable,
    }, inputs.taskKinds),
  });

  const alerts = new AlertNotifier({ registry, client, taskQueue, log });
  const activities: ActivityDependencies = {
    blobs, tools, registry, triggers, allowPrivateNetwork: config.allowPrivateNetwork, maxChainDepth: config.maxChainDepth, codeSandboxMb: config.temporal.workerMemory.sandboxMb,
    llm: config.llm, modelPrices: config.modelPrices, usageMeter: (call, month) => { metrics.agentUsage(call); alerts.usageRecorded(call.orgId, call.month, month); },
    catalog: tools, webhookSecrets, signer, resultUrlTtlSeconds: config.resultUrlTtlSeconds, retention: config.retention,
    stepKinds: inputs.stepKinds,
    slots: { temporal: client, taskQueue, slotCheckSeconds: config.concurrency.slotCheckSeconds },
    shapedRuns: new ShapedRuns({ triggers, runs, registry, log }),
    alerts: new AlertDeliveries({
      registry, audit, webhookSecrets, triggers, runs, tools, runWaiting: runWaitingAtApproval(client), allowPrivateNetwork: config.allowPrivateNetwork, log,
    }),
    durableCalls: durableCallObserver(audit, metrics),
    batches, holds,
  };

  const runtimeTokens = createRuntimeTokens(signingKey, registry);
  // a revoked API key is refused at once on this replica: the gateway's key cache and the runtime tokens' forget it
  const forgetKeys = (): void => {
    forgetApiKeys(registry);
    runtimeTokens.forgetKeys();
  };
  const workflowAdmin = new WorkflowAdmin({ registry, schedules, log, stepKinds: inputs.stepKinds });
  const triggerAdmin = new TriggerAdmin({ registry, schedules, webhooks });
  const memberAdmin = new MemberAdmin({ registry, forgetKeys });
  const management: Management = {
    workflows: workflowAdmin,
    triggers: triggerAdmin,
    definitions: new DefinitionAdmin({
      registry, workflows: workflowAdmin, triggers: triggerAdmin, servers: customServers, agents, members: memberAdmin, connections: definitionConnections(dispatcher, customServers),
    }),
    keys: new KeyAdmin({ registry, forgetKeys }),
    members: memberAdmin,
    budgets: new BudgetAdmin({ registry }),
    alerts: new AlertAdmin({ registry, changed: (orgId) => alerts.forget(orgId) }),
  };
  const consoleServices: ConsoleServices = {
    sessions: new ConsoleSessions({ registry, lifetimeMinutes: config.consoleSessionMinutes }),
    runs: new ConsoleRuns({ runs, restarts, blobs }),
    forms: new HostedForms({ registry, triggers, runs }),
    agents: new ConsoleAgents({ agents, blobs, registry }),
    shownOnce: new ShownOnce(cipher),
  };

  return {
    audit, runs, triggers, restarts, batches, holds, watcher, schedules, management, webhookSecrets, alerts, webhooks, agents, tools, customServers, workflowTools, tasks, signer, activities,
    console: consoleServices, identityProviders,
    runtimeTokens,
    codecSessions: createCodecSessions(signingKey),
    oauth: { server: new OAuthServer({ registry, allowPrivateNetwork: config.allowPrivateNetwork, clientLimits: config.oauthClients }), tickets: new Tickets(signingKey) },
    publicLinks(publicUrl) {
      publicBase = publicUrl;
      publicSigner = createSigner(signingKey, publicUrl, Date.now, signerOptions);
      return { signer: publicSigner, approvalLinks: createApprovalLinks(signingKey, publicUrl) };
    },
  };
}

/** The gateway's dependencies: the services, and what only the listening gateway has. */
export function gatewayDeps(
  services: Services,
  inputs: Pick<ServiceInputs, 'config' | 'log' | 'registry' | 'client' | 'blobs' | 'metrics'>,
  listening: { publicUrl: string; rateLimit?: RateLimit; temporalUiUrl?: string; codecEndpoint?: string; codec?: PayloadCodec; workerHealth?: () => 'ok' | 'down' },
): GatewayDeps {
  const { signer, approvalLinks } = services.publicLinks(listening.publicUrl);
  // the Web UIs whose pages may call the codec endpoint: the configured ones and the embedded one
  // (under both names of loopback, as an operator may open either)
  const embedded = listening.temporalUiUrl === undefined ? [] : [listening.temporalUiUrl, listening.temporalUiUrl.replace('//127.0.0.1:', '//localhost:')];
  const codecOrigins = [...new Set([...inputs.config.temporalUiOrigins, ...embedded])];
  return {
    config: inputs.config, registry: inputs.registry, audit: services.audit, temporal: inputs.client, blobs: inputs.blobs, log: inputs.log, metrics: inputs.metrics,
    rateLimit: listening.rateLimit, signer, approvalLinks,
    runs: services.runs, triggers: services.triggers, restarts: services.restarts, batches: services.batches, holds: services.holds, watcher: services.watcher, agents: services.agents,
    management: services.management, tools: services.tools, customServers: services.customServers, runtimeTokens: services.runtimeTokens,
    tasks: services.tasks, webhookSecrets: services.webhookSecrets, webhooks: services.webhooks, console: services.console,
    identityProviders: services.identityProviders,
    ...(listening.temporalUiUrl ? { temporalUiUrl: listening.temporalUiUrl } : {}),
    ...(listening.workerHealth ? { workerHealth: listening.workerHealth } : {}),
    oauth: {
      ...services.oauth, resources: new OAuthResources(listening.publicUrl, inputs.config), signIn: adminTokenSignIn(inputs.registry),
    },
    ...(listening.codec ? { codec: { codec: listening.codec, origins: codecOrigins, sessions: services.codecSessions, ...(listening.codecEndpoint ? { endpoint: listening.codecEndpoint } : {}) } } : {}),
    origins: new OriginPolicy(listening.publicUrl, inputs.config),
  };
}
