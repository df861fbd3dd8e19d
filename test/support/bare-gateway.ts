/**
 * A gateway a test assembles by hand with `createApp`, on loopback, against a test instance's
 * Temporal, registry and tools: the services of src/app/services.ts, built the same way, without
 * the optional ones (the webhook receiver, the console, custom servers), and with the run service
 * the test gives (one that fails on purpose, say). The management room applies workflows and
 * triggers; custom servers and agents in definitions as code are refused (no such test applies them).
 */
import http from 'node:http';
import path from 'node:path';
import { AgentService } from '../../src/agents/service';
import { createFileBlobStore } from '../../src/blobs/blob-store';
import { loadConfig } from '../../src/config/config';
import { createApprovalLinks } from '../../src/crypto/approval-links';
import { signingKey } from '../../src/crypto/data-dir';
import { createSigner } from '../../src/crypto/signed-urls';
import { createApp } from '../../src/http/app';
import { AlertAdmin, BudgetAdmin, DefinitionAdmin, KeyAdmin, MemberAdmin, TriggerAdmin, WorkflowAdmin, type Management } from '../../src/management';
import { silentLogger } from '../../src/observability/logger';
import { RunRestarts } from '../../src/runs/run-restarts';
import { RunService } from '../../src/runs/run-service';
import { RunWatcher } from '../../src/runs/run-watcher';
import { TriggerService } from '../../src/runs/trigger-service';
import { createRuntimeTokens } from '../../src/tools';
import { temporalAddress } from '../setup/root-hooks';
import type { TestFlowgate } from './flowgate';
import { listenOnLoopback, type LoopbackServer } from './loopback';

function bareManagement(fg: TestFlowgate): Management {
  const workflows = new WorkflowAdmin({ registry: fg.registry, schedules: fg.schedules, log: silentLogger });
  const triggers = new TriggerAdmin({ registry: fg.registry, schedules: fg.schedules });
  const refuse = (): Promise<never> => Promise.reject(new Error('not in a hand-built gateway'));
  const members = new MemberAdmin({ registry: fg.registry, forgetKeys: () => undefined });
  return {
    workflows,
    triggers,
    definitions: new DefinitionAdmin({
      registry: fg.registry, workflows, triggers,
      servers: { register: refuse, replace: refuse, remove: refuse },
      agents: { create: refuse, update: refuse, remove: refuse },
      members, connections: { applications: {}, open: () => Promise.resolve(undefined), create: refuse, replace: refuse, remove: refuse },
    }),
    keys: new KeyAdmin({ registry: fg.registry, forgetKeys: () => undefined }),
    members,
    budgets: new BudgetAdmin({ registry: fg.registry }),
    alerts: new AlertAdmin({ registry: fg.registry }),
  };
}

/** Starts the gateway on a free loopback port; `runs` defaults to the real run service. */
export async function startBareGateway(fg: TestFlowgate, options: { runs?: RunService } = {}): Promise<LoopbackServer> {
  const server = http.createServer();
  const gateway = await listenOnLoopback(server);
  const key = await signingKey(fg.dataDir);
  const config = loadConfig({
    PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', FLOWGATE_DATA_DIR: fg.dataDir, FLOWGATE_ADMIN_TOKEN: fg.adminToken,
    TEMPORAL_ADDRESS: temporalAddress(), FLOWGATE_TASK_QUEUE: fg.taskQueue, FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true', FLOWGATE_RATE_LIMIT_PER_MINUTE: '0',
  });
  const runs = options.runs ?? new RunService(fg.client, fg.taskQueue, silentLogger);
  const blobs = createFileBlobStore(path.join(fg.dataDir, 'blobs'));
  const signer = createSigner(key, gateway.url);
  const triggers = new TriggerService({ registry: fg.registry, blobs, log: silentLogger });
  const agents = new AgentService({
    registry: fg.registry, blobs, temporal: fg.client, taskQueue: fg.taskQueue, config, signer,
    servers: (orgId) => fg.tools.servers(orgId), tools: (server, orgId, signal) => fg.tools.listOf(server, orgId, signal),
  });
  const app = createApp({
    config, registry: fg.registry, audit: fg.audit, temporal: fg.client, blobs, log: silentLogger,
    tools: fg.tools, runtimeTokens: createRuntimeTokens(key, fg.registry), runs, triggers, agents,
    management: bareManagement(fg),
    restarts: new RunRestarts({ registry: fg.registry, blobs, signer, runs, triggers }),
    watcher: new RunWatcher((runId) => runs.view(runId), config.livePollMs, silentLogger),
    signer, approvalLinks: createApprovalLinks(key, gateway.url),
  });
  const handle = app.callback();
  // Fire-and-forget on purpose: Koa's handler answers every failure itself (ctx.onerror) and
  // never rejects, and Node's 'request' event has no use for a promise.
  server.on('request', (req, res) => { void handle(req, res); });
  return gateway;
}
