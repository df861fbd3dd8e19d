/**
 * Typed fake activities for the fast layer: an object of the worker's own `Activities` type
 * (activities/index.ts), so a change to an activity's signature breaks these fakes at build time.
 *
 * The step executors that only compute (template and code steps, the composite results, value
 * rendering) are the real ones over an in-memory blob store: the interpreter is tested against
 * what its steps really produce. Everything that would reach HTTP, the registry, a model or a
 * tool backend is a fake the test scripts through `FakeWorld`: `http` and `tool` steps are
 * refused unless a test hands in its own `runStep`.
 */
import { createRunBatchActivities } from '../../../activities/run-batch';
import { createReleaseActivities } from '../../../activities/release-held';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Activities } from '../../../activities';
import { createSlotActivities } from '../../../activities/slots';
import { createRecordComposite, createRecordStep, createRunStep } from '../../../activities/run-step';
import { createRenderValue } from '../../../activities/render-value';
import type { AgentPlan, ModelTurnRequest, ModelTurnResult, ToolCallRequest } from '../../../src/common/agent-invocation';
import type { StepKind } from '../../../activities/steps';
import type { CallbackRequest, RunInput } from '../../../src/common/run-types';
import type { SweepRequest } from '../../../src/common/workflow-contracts';
import { definitionSchemaOf } from '../../../src/management/workflows';
import type { StartShapedRunRequest } from '../../../src/triggers/shaping/shaped-runs';
import type { AlertDeliveryRequest } from '../../../src/common/alerts';
import { MemoryBlobStore } from './memory-blob-store';

export const FAKE_ORG = 'org_fast';

/** What the fakes answer and what they saw; each test makes its own. */
export class FakeWorld {
  readonly blobs = new MemoryBlobStore();
  /** step kinds registered besides the built-ins (startFlowgate's `stepKinds`): definitions may use them, runStep runs them */
  stepKinds: readonly StepKind[] = [];
  /** chained runs (`trigger` steps, agents' workflow tools): trigger id → workflow definition */
  readonly triggers = new Map<string, unknown>();
  maxChainDepth = 3;
  /** the agent `prepareAgentInvocation` answers with; unset: no such agent */
  agentPlan?: AgentPlan;
  /** the model's replies, one per turn */
  modelReplies: ModelTurnResult[] = [];
  readonly modelTurns: ModelTurnRequest[] = [];
  readonly toolCalls: ToolCallRequest[] = [];
  readonly finishedAgents: string[] = [];
  /** callbacks fail this many attempts with a retryable error before one succeeds */
  callbackFailures = 0;
  readonly callbacks: { request: CallbackRequest; attempt: number }[] = [];
  readonly sweeps: { activity: string; request: SweepRequest }[] = [];
  /** the code agent's run as its backend reports it at the end */
  codeAgentRun: Record<string, unknown> = { status: 'FINISHED' };
  readonly codeAgentCancels: string[] = [];
  /** the windows shaped triggers' entities asked runs for, in order */
  readonly shapedRuns: StartShapedRunRequest[] = [];
  /** alert deliveries made (by delivery ID: a retried attempt counts once), and those that failed for good */
  readonly alertDeliveries: AlertDeliveryRequest[] = [];
  readonly alertFailures: { request: AlertDeliveryRequest; error: string }[] = [];
}

/** The run input of a definition, as the trigger service builds it (parsed like a publish, with the world's kinds). */
export function runInputOf(world: Pick<FakeWorld, 'stepKinds'>, definition: unknown, fields: Partial<Omit<RunInput, 'definition'>> = {}): Omit<RunInput, 'runId'> {
  const parsed = definitionSchemaOf(world).parse(definition);
  return {
    orgId: FAKE_ORG,
    automationId: `wf_${parsed.name}`,
    automationName: parsed.name,
    automationVersion: 1,
    stepMap: Object.fromEntries(parsed.steps.map((_, i) => [String(i + 1), 1])),
    definition: parsed,
    triggerId: `trg_${parsed.name}`,
    startedBy: 'fast-test',
    started: new Date().toISOString(),
    inputs: {},
    ...fields,
  };
}

export function fakeActivities(world: FakeWorld, overrides: Partial<Activities> = {}): Activities {
  const realRunStep = createRunStep({ blobs: world.blobs, allowPrivateNetwork: false, stepKinds: world.stepKinds });
  const activities: Activities = {
    async runStep(request) {
      if (request.step.type === 'http' || request.step.type === 'tool') {
        throw ApplicationFailure.nonRetryable(`the fast layer has no ${request.step.type} steps (pass a runStep of the test's own)`, 'NO_FAKE');
      }
      return realRunStep(request);
    },
    ...createSlotActivities(),
    recordStep: createRecordStep({ blobs: world.blobs }),
    recordComposite: createRecordComposite({ blobs: world.blobs }),
    renderValue: createRenderValue({ blobs: world.blobs }),
    async resolveTrigger(request) {
      if (request.chainDepth > world.maxChainDepth) {
        return { ok: false, error: `the chain of triggered runs would be ${request.chainDepth} deep; the limit is ${world.maxChainDepth} (FLOWGATE_MAX_CHAIN_DEPTH): is there a cycle?` };
      }
      const definition = world.triggers.get(request.triggerId);
      if (definition === undefined) return { ok: false, error: `no trigger ${request.triggerId} in this organization` };
      return {
        ok: true,
        input: runInputOf(world, definition, {
          orgId: request.orgId, triggerId: request.triggerId, startedBy: request.startedBy, inputs: request.inputs,
          parentRunId: request.parentRunId, chainDepth: request.chainDepth,
        }),
      };
    },
    async prepareAgentInvocation(input) {
      return world.agentPlan ? { ok: true, plan: world.agentPlan } : { ok: false, error: `no agent ${input.agentId} in this organization` };
    },
    async callAgentModel(request) {
      world.modelTurns.push(request);
      const reply = world.modelReplies[request.turn];
      if (!reply) throw ApplicationFailure.nonRetryable(`the fake model has no reply for turn ${request.turn}`);
      return reply;
    },
    async finishAgentInvocation(request) {
      world.finishedAgents.push(request.invocationId);
    },
    async callAgentTool(request) {
      world.toolCalls.push(request);
      return { ref: { toolCallId: request.toolCallId, text: JSON.stringify({ tool: request.binding.tool, arguments: request.arguments }) }, ok: true, line: `${request.binding.tool}: ok` };
    },
    async postCallback(request) {
      const { attempt } = Context.current().info;
      world.callbacks.push({ request, attempt });
      if (attempt <= world.callbackFailures) throw ApplicationFailure.create({ message: 'the receiver answered 500', type: 'CALLBACK_FAILED', details: [{ attempt }] });
      return { attempt, status: 200 };
    },
    async sweepExpiredBlobs(request) {
      world.sweeps.push({ activity: 'sweepExpiredBlobs', request });
      return { removed: 2, kept: 5, stale: 0 };
    },
    async sweepFinishedRuns(request) {
      world.sweeps.push({ activity: 'sweepFinishedRuns', request });
      return { removed: 1, auditRemoved: 0, oauthClientsRemoved: 0 };
    },
    async waitForCodeAgentRun(ref) {
      return { id: ref.runId, agentId: ref.agentId, ...world.codeAgentRun };
    },
    async readCodeAgentRunStream(ref) {
      return { isError: false, value: { runId: ref.runId, events: [{ id: '1', type: 'status', status: world.codeAgentRun.status }], lastEventId: '1', ended: true } };
    },
    // the fast layer has no runs to act on in bulk: the batch workflow is tested end to end (test/runs/run-batch.test.ts)
    ...createRunBatchActivities({}),
    ...createReleaseActivities({}),
    async startShapedRun(request) {
      // a retried activity asks with the same key: one run per key, as the trigger service's idempotency gives
      if (!world.shapedRuns.some((r) => r.idempotencyKey === request.idempotencyKey)) world.shapedRuns.push(request);
      return { ok: true, runId: `run-${world.shapedRuns.findIndex((r) => r.idempotencyKey === request.idempotencyKey) + 1}` };
    },
    async deliverAlert(request) {
      if (!world.alertDeliveries.some((d) => d.deliveryId === request.deliveryId)) world.alertDeliveries.push(request);
      return { delivered: true, destination: 'webhook' };
    },
    async alertDeliveryFailed(request, error) {
      world.alertFailures.push({ request, error });
    },
    async cancelCodeAgentRun(ref) {
      world.codeAgentCancels.push(ref.runId);
      return { cancelled: true };
    },
    async callDurableTool(input) {
      // the upstream answers the call's arguments back, on the first attempt
      return { isError: false, value: { tool: input.tool, arguments: input.args, idempotencyKey: input.idempotencyKey }, attempts: Context.current().info.attempt };
    },
    async cancelDurableUpstream() {
      return false;
    },
  };
  return { ...activities, ...overrides };
}
