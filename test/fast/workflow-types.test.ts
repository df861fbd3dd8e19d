/**
 * Every workflow type besides the interpreter's own cases (interpreter.test.ts), run on a worker
 * with typed fake activities: invokeAgent (a model turn with a tool and a workflow tool, then an
 * answer), codeAgentTask (the waiter behind a code-agent MCP task), retentionSweep,
 * deliverRunCallback (started by a run that names a callback), runForEachChunk (a large
 * forEach's child) and runSlots (the semaphore of a concurrency limit, with runs that wait for it). Each run's history also replays here; with FLOWGATE_RECORD_HISTORIES_DIR=<dir>
 * each is written to <dir>/<file> (which must not exist yet), to be copied into
 * test/workflows/histories/, where replay-every-type.test.ts replays it in every suite run.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import type { AgentInvocationInput } from '../../src/common/agent-invocation';
import type { CodeAgentTaskInput } from '../../src/common/codeagent-task';
import { DurableFailureType, type DurableToolCallInput } from '../../src/common/durable-call';
import {
  agentStatusQuery, WORKFLOW_TYPES, type CodeAgentTaskWorkflow, type DurableToolCallWorkflow, type DeliverRunCallbackWorkflow, type InvokeAgentWorkflow, type RetentionSweepWorkflow,
} from '../../src/common/workflow-contracts';
import { createSlotActivities } from '../../activities/slots';
import { slotsWorkflowId } from '../../src/common/slots';
import { slotsQuery, stateQuery, type RunSlotsWorkflow } from '../../src/common/workflow-contracts';
import { shapeEventSignal, shapeStateQuery, type ShapeTriggerEventsWorkflow } from '../../src/common/workflow-contracts';
import { shapeWorkflowId, type ShapedEvent, type ShapeInput } from '../../src/common/shaping';
import { alertOutcomeSignal, alertStateQuery, type EvaluateAlertRuleWorkflow } from '../../src/common/workflow-contracts';
import { alertWorkflowId, type AlertCondition, type AlertEvaluatorInput, type AlertSignal } from '../../src/common/alerts';
import { workflowBundle } from '../../temporal/worker';
import { recordHistoriesDir } from '../support/ci';
import { eventually, FastWorker } from './support/fast-worker';
import { FAKE_ORG, FakeWorld } from './support/fake-activities';

/** Replays a finished workflow's history, and records it when a developer asked for it. */
async function replayAndRecord(fw: FastWorker, workflowId: string, file?: string): Promise<void> {
  const history = await fw.client.workflow.getHandle(workflowId).fetchHistory();
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId);
  const dir = recordHistoriesDir();
  if (dir && file) await writeFile(path.join(dir, file), `${historyToJSON(history)}\n`, { flag: 'wx' });
}

describe('every workflow type on a worker with fake activities (fast layer)', () => {
  let fw: FastWorker;
  before(async () => {
    fw = await FastWorker.start();
  });
  beforeEach(() => {
    fw.world = new FakeWorld();
    fw.overrides = {};
  });
  after(async () => {
    await fw?.stop();
  });

  it('invokeAgent: calls the model, runs a tool and a workflow tool (a child run), answers with the final reply', async () => {
    fw.world.agentPlan = {
      agentName: 'helper', maxTurns: 4, maxToolCalls: 4, toolResultChars: 2000,
      tools: [{ modelName: 'search', kind: 'tool', server: 'web', tool: 'web_search' }, { modelName: 'greet', kind: 'workflow', triggerId: 'trg_greet' }],
    };
    fw.world.triggers.set('trg_greet', { name: 'greet', steps: [{ name: 'Hi', type: 'template', format: 'plaintext', template: 'hi {{inputs.who}}' }] });
    fw.world.modelReplies = [
      { content: null, toolCalls: [{ id: 'c1', name: 'search', arguments: '{"q":"flowgate"}' }, { id: 'c2', name: 'greet', arguments: '{"inputs":{"who":"Ada"}}' }] },
      { content: 'all done', toolCalls: [] },
    ];
    const invocationId = `inv_${randomUUID()}`;
    const input: AgentInvocationInput = { invocationId, orgId: FAKE_ORG, agentId: 'agt_1', chatId: 'chat_1', message: 'do it', forwardHeaders: {}, startedBy: 'fast-test' };
    const handle = await fw.client.workflow.start<InvokeAgentWorkflow>(WORKFLOW_TYPES.invokeAgent, { workflowId: invocationId, taskQueue: fw.taskQueue, args: [input] });
    const result = await handle.result();
    assert.equal(result.status, 'COMPLETE');
    assert.equal(result.response, 'all done');
    assert.equal(result.turns, 2);
    assert.deepEqual(result.toolCalls.map((c) => [c.name, c.ok]), [['search', true], ['greet', true]]);
    assert.match(result.toolCalls[1]?.line ?? '', /completed/);
    const second = fw.world.modelTurns[1];
    assert.ok(second?.toolResults.some((r) => r.toolCallId === 'c2' && /hi Ada/.test(r.text ?? '')), 'the workflow tool\'s result goes to the next model turn');
    assert.deepEqual(await handle.query(agentStatusQuery), { status: 'COMPLETE', turns: 2, toolCalls: 2 });
    assert.deepEqual(fw.world.finishedAgents, [invocationId]);
    await replayAndRecord(fw, invocationId, 'invoke-agent.json');
  });

  it('invokeAgent: fails with TURN_LIMIT when the model never answers within its turns', async () => {
    fw.world.agentPlan = { agentName: 'loops', maxTurns: 2, maxToolCalls: 10, toolResultChars: 100, tools: [{ modelName: 'search', kind: 'tool', server: 'web', tool: 'web_search' }] };
    const again = { content: null, toolCalls: [{ id: 'c', name: 'search', arguments: '{}' }] };
    fw.world.modelReplies = [again, again, again];
    const invocationId = `inv_${randomUUID()}`;
    const handle = await fw.client.workflow.start<InvokeAgentWorkflow>(WORKFLOW_TYPES.invokeAgent, {
      workflowId: invocationId, taskQueue: fw.taskQueue, args: [{ invocationId, orgId: FAKE_ORG, agentId: 'agt_2', chatId: 'chat_2', message: 'go', forwardHeaders: {}, startedBy: 'fast-test' }],
    });
    await assert.rejects(handle.result(), (err: unknown) => err instanceof WorkflowFailedError && /all 2 model turns/.test(err.cause?.message ?? ''));
  });

  it('invokeAgent at level 7: adds up usage per model, answers it, and ends BUDGET_EXHAUSTED at a token budget before the next model call', async () => {
    const usage = (promptTokens: number, completionTokens: number) => ({ model: 'm', promptTokens, completionTokens, cachedPromptTokens: 0, costNanoUsd: 1000 });
    fw.world.agentPlan = { agentName: 'counted', maxTurns: 5, maxToolCalls: 5, toolResultChars: 100, tools: [{ modelName: 'search', kind: 'tool', server: 'web', tool: 'web_search' }], budget: { maxTokens: 50 } };
    fw.world.modelReplies = [
      { content: null, toolCalls: [{ id: 'c1', name: 'search', arguments: '{}' }], usage: usage(20, 5) },
      { content: null, toolCalls: [{ id: 'c2', name: 'search', arguments: '{}' }], usage: usage(25, 5) },
      { content: 'never', toolCalls: [] },
    ];
    const invocationId = `inv_${randomUUID()}`;
    const handle = await fw.client.workflow.start<InvokeAgentWorkflow>(WORKFLOW_TYPES.invokeAgent, {
      workflowId: invocationId, taskQueue: fw.taskQueue,
      args: [{ invocationId, orgId: FAKE_ORG, agentId: 'agt_7', chatId: 'chat_7', message: 'go', forwardHeaders: {}, startedBy: 'fast-test', engine: 7 }],
    });
    await assert.rejects(handle.result(), (err: unknown) => err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure
      && err.cause.type === 'BUDGET_EXHAUSTED' && /limits\.maxTokens = 50\) is reached: 55 tokens used; the invocation stopped after model call 2/.test(err.cause.message)
      && JSON.stringify(err.cause.details?.[0]) .includes('"calls":2'));
    assert.equal(fw.world.modelTurns.length, 2, 'no third model call');
    assert.deepEqual((await handle.query(agentStatusQuery)).usage?.map((u) => [u.model, u.calls, u.promptTokens, u.costNanoUsd]), [['m', 2, 45, 2000]]);
    await replayAndRecord(fw, invocationId, 'invoke-agent-budget-engine-7.json');

    fw.world.agentPlan = { agentName: 'counted', maxTurns: 5, maxToolCalls: 5, toolResultChars: 100, tools: [] };
    fw.world.modelReplies = [{ content: 'done', toolCalls: [], usage: usage(7, 3) }];
    const answered = `inv_${randomUUID()}`;
    const result = await fw.client.workflow.execute<InvokeAgentWorkflow>(WORKFLOW_TYPES.invokeAgent, {
      workflowId: answered, taskQueue: fw.taskQueue,
      args: [{ invocationId: answered, orgId: FAKE_ORG, agentId: 'agt_7', chatId: 'chat_8', message: 'go', forwardHeaders: {}, startedBy: 'fast-test', engine: 7 }],
    });
    assert.deepEqual(result.usage, [{ ...usage(7, 3), calls: 1 }]);
  });

  it('codeAgentTask: waits for the agent\'s run to end and answers the tool\'s result; a run that ended otherwise fails the task', async () => {
    const taskId = `task_${randomUUID()}`;
    const input: CodeAgentTaskInput = {
      orgId: FAKE_ORG, taskId, tool: 'codeagent_create_run', pcid: 'pc_1', agentId: 'bc-agent', runId: 'run-1', started: { run: { id: 'run-1', status: 'RUNNING' } }, ttlMs: 120_000,
    };
    const done = await fw.client.workflow.start<CodeAgentTaskWorkflow>(WORKFLOW_TYPES.codeAgentTask, { workflowId: taskId, taskQueue: fw.taskQueue, args: [input], workflowExecutionTimeout: input.ttlMs });
    assert.deepEqual(await done.result(), { run: { id: 'run-1', agentId: 'bc-agent', status: 'FINISHED' } });
    await replayAndRecord(fw, taskId, 'codeagent-task.json');

    fw.world.codeAgentRun = { status: 'ERROR' };
    const failedId = `task_${randomUUID()}`;
    const failed = await fw.client.workflow.start<CodeAgentTaskWorkflow>(WORKFLOW_TYPES.codeAgentTask, { workflowId: failedId, taskQueue: fw.taskQueue, args: [{ ...input, taskId: failedId }] });
    await assert.rejects(failed.result(), (err: unknown) => err instanceof WorkflowFailedError && /ended ERROR/.test(err.cause?.message ?? ''));
  });

  it('durableToolCall: retries its one activity under the server\'s policy and answers the tool\'s result; a tool error fails it without another attempt', async () => {
    const taskId = `dtask_${randomUUID()}`;
    const input: DurableToolCallInput = {
      orgId: FAKE_ORG, taskId, server: 'd7r2dt3l9foc7192703g', serverName: 'Orders', tool: 'placeOrder', args: { item: 'tea' },
      policy: { maxAttempts: 3, initialIntervalSeconds: 0.1 }, idempotencyKey: `flowgate-${taskId}`, forwardHeaders: {}, ttlMs: 120_000,
    };
    let attempts = 0;
    fw.overrides = {
      async callDurableTool(call) {
        attempts++;
        if (attempts === 1) throw ApplicationFailure.create({ message: 'POST /orders answered 503', type: DurableFailureType.RETRYABLE, details: [{ isError: true, value: { status: 503 } }] });
        return { isError: false, value: { order: 'o-1', key: call.idempotencyKey }, attempts };
      },
    };
    const done = await fw.client.workflow.start<DurableToolCallWorkflow>(WORKFLOW_TYPES.durableToolCall, { workflowId: taskId, taskQueue: fw.taskQueue, args: [input], workflowExecutionTimeout: input.ttlMs });
    assert.deepEqual(await done.result(), { isError: false, value: { order: 'o-1', key: `flowgate-${taskId}` }, attempts: 2 });
    await replayAndRecord(fw, taskId, 'durable-tool-call.json');

    attempts = 0;
    fw.overrides = {
      async callDurableTool() {
        attempts++;
        throw ApplicationFailure.create({ message: 'POST /orders answered 400', type: DurableFailureType.TOOL_ERROR, nonRetryable: true, details: [{ isError: true, value: { status: 400 } }] });
      },
    };
    const failedId = `dtask_${randomUUID()}`;
    const failed = await fw.client.workflow.start<DurableToolCallWorkflow>(WORKFLOW_TYPES.durableToolCall, { workflowId: failedId, taskQueue: fw.taskQueue, args: [{ ...input, taskId: failedId }] });
    await assert.rejects(failed.result(), (err: unknown) => err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure && err.cause.type === DurableFailureType.TOOL_ERROR);
    assert.equal(attempts, 1);
  });

  it('retentionSweep: sweeps expired blobs, then finished runs, as of the time it is given', async () => {
    const workflowId = `sweep-${randomUUID()}`;
    const now = '2026-11-26T12:00:00.000Z';
    const handle = await fw.client.workflow.start<RetentionSweepWorkflow>(WORKFLOW_TYPES.retentionSweep, { workflowId, taskQueue: fw.taskQueue, args: [{ now }] });
    assert.deepEqual(await handle.result(), { blobs: { removed: 2, kept: 5, stale: 0 }, finishedRuns: { removed: 1, auditRemoved: 0, oauthClientsRemoved: 0 } });
    assert.deepEqual(fw.world.sweeps, [{ activity: 'sweepExpiredBlobs', request: { now } }, { activity: 'sweepFinishedRuns', request: { now } }]);
    await replayAndRecord(fw, workflowId, 'retention-sweep.json');
  });

  it('deliverRunCallback: a run that names a callback starts its delivery, which retries a failed attempt and answers DELIVERED', async function () {
    this.timeout(60_000);
    fw.world.callbackFailures = 1;
    const { runId, summary } = await fw.run({ name: 'with-callback', steps: [{ name: 'Hi', type: 'template', format: 'plaintext', template: 'hi' }] },
      {}, { callback: { url: 'https://receiver.example/hook' } });
    assert.equal(summary.status, 'COMPLETE');
    const callbackId = `${runId}-callback`;
    const delivered = await fw.client.workflow.getHandle<DeliverRunCallbackWorkflow>(callbackId).result();
    assert.deepEqual(delivered, { state: 'DELIVERED', attempts: 2 });
    assert.deepEqual(fw.world.callbacks.map((c) => [c.request.run.runId, c.request.status, c.attempt]), [[runId, 'COMPLETE', 1], [runId, 'COMPLETE', 2]]);
    await replayAndRecord(fw, callbackId, 'deliver-run-callback.json');
  });

  it('runForEachChunk: a forEach over more than 100 items runs in chunk child workflows, keeps the results in order, and the chunks replay', async function () {
    this.timeout(240_000);
    const { runId, summary } = await fw.run({
      name: 'chunks', steps: [{ name: 'Each', type: 'forEach', items: '[1..120]', concurrency: 5, steps: [{ name: 'Twice', type: 'code', source: 'return item * 2' }] }],
    });
    assert.equal(summary.status, 'COMPLETE', summary.error);
    assert.equal((JSON.parse(fw.output(runId, 1)) as number[])[119], 240);
    const chunks = await eventually(async () => {
      const ids: string[] = [];
      for await (const w of fw.client.workflow.list({ query: `WorkflowType = '${WORKFLOW_TYPES.runForEachChunk}' AND TaskQueue = '${fw.taskQueue}'` })) ids.push(w.workflowId);
      return ids.length >= 2 ? ids.sort() : undefined;
    }, 'both chunks of the forEach listed');
    // test/workflows/histories/run-for-each-chunk.json is this type's saved history (recorded by fan-out.test.ts)
    for (const chunk of chunks) await replayAndRecord(fw, chunk);
  });

  it('shapeTriggerEvents: a batch of 2 starts a run per 2 events in arrival order, the rest after the maximum wait; a repeated event id counts once', async () => {
    const triggerId = `trg_fast_${randomUUID()}`;
    const workflowId = shapeWorkflowId(triggerId, 'k');
    const input: ShapeInput = { orgId: FAKE_ORG, triggerId, key: '', shaping: { batch: { size: 2, maxWaitSeconds: 1 } } };
    const send = (n: number, id = `e${n}`) => fw.client.workflow.signalWithStart<ShapeTriggerEventsWorkflow, [ShapedEvent]>(WORKFLOW_TYPES.shapeTriggerEvents, {
      workflowId, taskQueue: fw.taskQueue, args: [input], signal: shapeEventSignal, signalArgs: [{ id, receivedAt: new Date().toISOString(), inputs: { n } }],
    });
    for (const n of [1, 2, 3]) await send(n);
    await send(3); // a redelivery of event 3
    await eventually(async () => (fw.world.shapedRuns.length === 2 ? true : undefined), 'two runs: one of 2, one of 1 after the maximum wait');
    const handle = fw.client.workflow.getHandle<ShapeTriggerEventsWorkflow>(workflowId);
    await handle.result();
    assert.deepEqual(fw.world.shapedRuns.map((r) => r.events.map((e) => e.id)), [['e1', 'e2'], ['e3']]);
    assert.ok(fw.world.shapedRuns.every((r) => r.mode === 'batch' && r.triggerId === triggerId));
    assert.equal(new Set(fw.world.shapedRuns.map((r) => r.idempotencyKey)).size, 2);
    assert.deepEqual((await handle.query(shapeStateQuery)).runs, ['run-1', 'run-2']);
    await replayAndRecord(fw, workflowId, 'shape-trigger-events.json');
  });

  it('evaluateAlertRule: a burst of failures over the threshold makes one delivery, the rest held back by the cooldown', async () => {
    const ruleId = `alr_fast_${randomUUID()}`;
    const workflowId = alertWorkflowId(ruleId);
    // a window of 2 s and a cooldown of 1 s: the entity completes soon after the last outcome
    const condition: AlertCondition = { kind: 'failure_rate', windowSeconds: 2, threshold: 3, cooldownSeconds: 1 };
    const input: AlertEvaluatorInput = { orgId: FAKE_ORG, ruleId, condition };
    const at = Date.now();
    const send = (n: number) => fw.client.workflow.signalWithStart<EvaluateAlertRuleWorkflow, [AlertSignal]>(WORKFLOW_TYPES.evaluateAlertRule, {
      workflowId, taskQueue: fw.taskQueue, args: [input], signal: alertOutcomeSignal,
      signalArgs: [{ condition, ended: { runId: `run-${n}`, orgId: FAKE_ORG, workflowId: 'wf_fast', workflowName: 'fast', status: 'FAILED', error: `boom ${n}`, at: at + n } }],
    });
    for (let n = 1; n <= 10; n++) await send(n);
    const handle = fw.client.workflow.getHandle<EvaluateAlertRuleWorkflow>(workflowId);
    const state = await eventually(async () => {
      const s = await handle.query(alertStateQuery);
      return s.failures === 10 ? s : undefined;
    }, 'the evaluator took every outcome in');
    assert.deepEqual([state.fired, state.delivered, state.suppressed], [1, 1, 7]);
    assert.equal(fw.world.alertDeliveries.length, 1);
    const [delivery] = fw.world.alertDeliveries;
    assert.deepEqual([delivery!.firing.count, delivery!.run?.runId, delivery!.ruleId], [3, 'run-3', ruleId]);
    await handle.result();
    await replayAndRecord(fw, workflowId, 'evaluate-alert-rule.json');
  });

  it('runSlots: runs under a limit of 1 run one at a time in start order, the waiting one reads PENDING, a terminated holder\'s slot is freed', async function () {
    this.timeout(120_000);
    fw.overrides = createSlotActivities({ temporal: fw.client, taskQueue: fw.taskQueue, slotCheckSeconds: 1 });
    const key = `trigger:trg_fast_${randomUUID()}`;
    const slots = { claims: [{ scope: 'trigger' as const, key, limit: 1 }], maxWaitSeconds: 600 };
    const definition = { name: 'slotted', steps: [{ name: 'Wait', type: 'delay', duration: '1500ms' }, { name: 'Hi', type: 'template', format: 'plaintext', template: 'hi' }] };
    const first = await fw.startRun(definition, {}, { slots, started: '2026-11-26T00:00:01.000Z' });
    await eventually(async () => ((await first.query(stateQuery)).status === 'PAUSED' ? true : undefined), 'the first run holds the slot');
    const second = await fw.startRun(definition, {}, { slots, started: '2026-11-26T00:00:02.000Z' });
    const waiting = await eventually(async () => {
      const state = await second.query(stateQuery);
      return state.status === 'PENDING' && state.waitingOn?.kind === 'slot' ? state : undefined;
    }, 'the second run waits for the slot');
    assert.deepEqual(waiting.waitingOn, { kind: 'slot', scope: 'trigger', key, limit: 1 });
    const semaphore = fw.client.workflow.getHandle<RunSlotsWorkflow>(slotsWorkflowId(key));
    const queued = await eventually(async () => {
      const held = await semaphore.query(slotsQuery);
      return held.queue.length === 1 ? held : undefined;
    }, 'the semaphore holds one run and queues the other');
    assert.deepEqual(queued, { key, limit: 1, holders: [first.workflowId], queue: [second.workflowId] });
    assert.equal((await first.result()).status, 'COMPLETE');
    assert.equal((await second.result()).status, 'COMPLETE');
    const [firstEnd, secondEnd] = await Promise.all([first.describe(), second.describe()]);
    assert.ok(firstEnd.closeTime && secondEnd.closeTime && secondEnd.closeTime.getTime() - firstEnd.closeTime.getTime() >= 1400,
      'the second run started only when the first had ended');
    await replayAndRecord(fw, second.workflowId, 'run-automation-slots-engine-7.json');

    // a holder terminated by an operator sends no release: the semaphore's check frees its slot
    const stuck = await fw.startRun({ ...definition, steps: [{ name: 'Wait', type: 'delay', duration: '10m' }] }, {}, { slots });
    await eventually(async () => ((await semaphore.query(slotsQuery)).holders.includes(stuck.workflowId) ? true : undefined), 'the long run holds the slot');
    const next = await fw.startRun(definition, {}, { slots });
    await eventually(async () => ((await semaphore.query(slotsQuery)).queue.includes(next.workflowId) ? true : undefined), 'the next run waits');
    await stuck.terminate('test: a run that cannot release its slot');
    assert.equal((await next.result()).status, 'COMPLETE');
    await replayAndRecord(fw, slotsWorkflowId(key), 'run-slots.json');
  });

  it('runSlots newest-wins is by start time: a request from a run started earlier that arrives later is superseded, the newer run is not cancelled', async function () {
    this.timeout(120_000);
    fw.overrides = createSlotActivities({ temporal: fw.client, taskQueue: fw.taskQueue, slotCheckSeconds: 1 });
    const key = `trigger:trg_fast_${randomUUID()}`;
    const slots = { claims: [{ scope: 'trigger' as const, key, limit: 1, mode: 'newest-wins' as const }], maxWaitSeconds: 600 };
    const definition = { name: 'newest', steps: [{ name: 'Wait', type: 'delay', duration: '1500ms' }, { name: 'Hi', type: 'template', format: 'plaintext', template: 'hi' }] };
    // the newer run's request reaches the semaphore first (as when the older run's first workflow task runs late)
    const newer = await fw.startRun(definition, {}, { slots, started: '2026-11-26T00:00:02.000Z' });
    await eventually(async () => ((await newer.query(stateQuery)).status === 'PAUSED' ? true : undefined), 'the newer run holds the slot');
    const older = await fw.startRun(definition, {}, { slots, started: '2026-11-26T00:00:01.000Z' });
    const outcome = async (run: typeof older): Promise<string> => run.result().then(
      (summary) => summary.status,
      (error: unknown) => (error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure ? `FAILED ${error.cause.type}` : String(error)),
    );
    assert.equal(await outcome(older), 'FAILED RUN_SUPERSEDED', 'the older run was superseded without running');
    assert.equal(await outcome(newer), 'COMPLETE', 'the newer run was not cancelled by the older one\'s late request');
    const semaphore = fw.client.workflow.getHandle<RunSlotsWorkflow>(slotsWorkflowId(key));
    await eventually(async () => ((await semaphore.query(slotsQuery)).holders.length === 0 ? true : undefined), 'the slot is free again');
    await replayAndRecord(fw, slotsWorkflowId(key), 'run-slots-newest-wins.json');
  });
});
