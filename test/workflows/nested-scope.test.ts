import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { buildContext, interpolate } from '../../src/common/interpolate';
import type { RunInput, RunSummary } from '../../src/common/run-types';
import { workflowBundle } from '../../temporal/worker';
import { nestedScope, stepScopeOf, type ListScope } from '../../workflows/interpreter/runtime';
import { useEngine } from '../../workflows/run/features';
import { recordHistoryPath } from '../support/ci';
import { lastMessage, startFakeLlm, type FakeLlm } from '../support/fake-llm';
import { getJson, pollStatus, publishWorkflow, startTestFlowgate, trigger, type Published, type StatusBody, type TestFlowgate } from '../support/flowgate';
import { listenOnLoopback, type LoopbackServer } from '../support/loopback';
import { startFakeSearch, type FakeSearch } from '../tools/support';
import { clearHistory } from '../support/histories';

interface ResultEntry { stepIndex: number; stepPath?: string; resultUrls?: Record<string, { url: string }> }
/** the synchronous answer's entries also carry the result inline */
interface SyncEntry { stepIndex: number; stepPath?: string; result: { resultType: string; result: string } }
interface WaitingStatus extends StatusBody { waitingOn?: { kind: string; stepPath?: string } }

const finished = (s: StatusBody): boolean => ['COMPLETE', 'FAILED', 'TIMEOUT'].includes(s.status);

describe('nestedScope: the scope of a list nested in a step', () => {
  const run = { runId: 'r', automationId: 'wf', automationVersion: 1, triggerId: 't', started: '2030-01-01T00:00:00Z', inputs: {} };
  const top: ListScope = { depth: 0, seen: [] };
  after(() => useEngine({ engine: undefined }));

  it('keeps the forEach item in branch and parallel lists inside it; a nested forEach item shadows it and keeps it as outer', () => {
    useEngine({ engine: 4 });
    const item = nestedScope(top, '1', 2, { item: { id: 'b' }, index: 1 });
    const branchList = nestedScope(item, '1.2.1', 1);
    assert.deepEqual(stepScopeOf(branchList), { prefix: '1.2.1.1', item: { id: 'b' }, index: 1 });
    const inner = nestedScope(nestedScope(branchList, '1.2.1.1.1', 3), '1.2.1.1.1.3.1', 1, { item: 'x', index: 0 });
    assert.deepEqual(stepScopeOf(inner), { prefix: '1.2.1.1.1.3.1.1', item: 'x', index: 0, outer: { item: { id: 'b' }, index: 1 } });
    const innermost = nestedScope(inner, '1.2.1.1.1.3.1.1.1', 2, { item: 7, index: 1 });
    const context = buildContext(run, [], stepScopeOf(innermost));
    assert.equal(interpolate('{{item}}#{{index}} {{outer.item}}#{{outer.index}} {{outer.outer.item.id}}#{{outer.outer.index}}', context), '7#1 x#0 b#1');
    assert.deepEqual(stepScopeOf(nestedScope(top, '2', 1)), { prefix: '2.1' }, 'outside a forEach there is no item');
  });

  it('leaves runs started before engine level 4 as they ran: no item past the item list itself', () => {
    useEngine({ engine: 2 });
    const item = nestedScope(top, '1', 2, { item: 'b', index: 1 });
    assert.deepEqual(stepScopeOf(nestedScope(item, '1.2.1', 1)), { prefix: '1.2.1.1' });
    assert.deepEqual(stepScopeOf(nestedScope(item, '1.2.1', 1, { item: 'x', index: 0 })), { prefix: '1.2.1.1', item: 'x', index: 0 });
  });
});

/**
 * `item` and `index` (and `outer`, the enclosing forEach item of a nested forEach) reach every step
 * of a forEach item, however deep it sits in branch, parallel and forEach steps, in the run's own
 * workflow and in the chunks of a large forEach: the step kinds that run as activities (template,
 * code, http, tool), the ones the workflow renders itself (waitUntil, approval, trigger, agent, a
 * polling tool) and the expressions (`if`, branch cases, `items`). A nested forEach's scope
 * (`outer`) runs in the fast layer (test/fast/interpreter.test.ts).
 */
describe('item and index reach every nested construct (through the trigger surface)', () => {
  let fg: TestFlowgate;
  let upstream: LoopbackServer;
  let search: FakeSearch;
  let llm: FakeLlm;
  /** what the upstream was sent: path and parsed JSON body */
  const posted: { path: string; body: unknown }[] = [];

  before(async () => {
    llm = await startFakeLlm();
    llm.fallback = (request) => ({ content: `answer to: ${lastMessage(request).content ?? ''}` });
    search = await startFakeSearch();
    upstream = await listenOnLoopback(http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          // not JSON: kept as text
        }
        posted.push({ path: req.url ?? '/', body });
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ path: req.url, body }));
      });
    }));
    fg = await startTestFlowgate({ FLOWGATE_LLM_BASE_URL: llm.baseUrl, FLOWGATE_LLM_MODEL: 'fake-model', FLOWGATE_SEARCH_URL: search.url });
  });
  after(async () => {
    await fg?.stop();
    await upstream?.close();
    await search?.close();
    await llm?.close();
  });

  async function start(p: Published, inputs: unknown): Promise<string> {
    const response = await trigger(fg, p, inputs);
    assert.equal(response.status, 200, await response.clone().text());
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.ok(runId);
    return runId;
  }
  async function results(p: Published, runId: string): Promise<ResultEntry[]> {
    const { status, body } = await getJson<{ results: ResultEntry[] }>(fg, `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/results`);
    assert.equal(status, 200, JSON.stringify(body));
    return body.results;
  }
  /** A step's whole file (inline results are cut), by its address. */
  async function stepFile(p: Published, runId: string, address: string, name: 'output.txt' | 'stdout.txt'): Promise<string> {
    const entry = (await results(p, runId)).find((r) => (r.stepPath ?? String(r.stepIndex)) === address);
    const url = entry?.resultUrls?.[name]?.url;
    assert.ok(url, `no ${name} for step ${address}`);
    const file = await fetch(url.startsWith('http') ? url : `${fg.url}${url}`);
    assert.equal(file.status, 200);
    return file.text();
  }
  const replays = async (runId: string): Promise<void> => {
    const history = await clearHistory(fg, runId);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, runId);
  };

  it('activity steps (http, code, template, tool) and if conditions see the item in a branch and a parallel step, in a forEach inside a branch', async function () {
    this.timeout(180_000);
    const p = await publishWorkflow(fg, {
      name: 'nested-scope-activities',
      steps: [{
        name: 'Outer', type: 'branch',
        cases: [{ if: 'true', steps: [{
          name: 'Each order', type: 'forEach', items: 'inputs.orders', concurrency: 2,
          steps: [
            {
              name: 'Route', type: 'branch',
              cases: [{ if: 'item.total > 1000', steps: [
                { name: 'Review', type: 'http', method: 'POST', url: `${upstream.url}/review/{{item.id}}`, body: { order: '{{item.id}}', index: '{{index}}', text: 'order {{item.id}} at {{index}}' } },
                { name: 'Seen', type: 'code', source: 'return { item, index, reviewed: local[1].json.body.order }' },
              ] }],
              default: [
                { name: 'Auto', type: 'template', format: 'plaintext', template: 'auto-approved {{item.id}} #{{index}}' },
                { name: 'Only b', type: 'template', format: 'plaintext', if: 'item.id = "b"', template: 'b seen at {{index}}' },
              ],
            },
            {
              name: 'Both', type: 'parallel',
              branches: [
                { steps: [{ name: 'Search', type: 'tool', server: 'web-search', tool: 'search', arguments: { query: 'order {{item.id}}', limit: 1 } }] },
                { steps: [
                  { name: 'Pair', type: 'code', source: 'return [item.id, index]' },
                  { name: 'Echo', type: 'template', format: 'plaintext', template: '{{item.id}}@{{index}} {{local.1.result}}' },
                ] },
              ],
            },
            { name: 'Sum', type: 'template', format: 'plaintext', template: '{{local.1.result}} | {{local.2.json.0.query}} | {{local.2.json.1}}' },
          ],
        }] }],
      }],
    });
    const runId = await start(p, { orders: [{ id: 'a', total: 5 }, { id: 'b', total: 50 }, { id: 'c', total: 5000 }] });
    const final = await pollStatus(fg, p, runId, finished, 150_000);
    assert.equal(final.status, 'COMPLETE', JSON.stringify(final));

    assert.deepEqual(JSON.parse(await stepFile(p, runId, '1', 'output.txt')), [
      'auto-approved a #0 | order a | a@0 ["a",0]',
      'b seen at 1 | order b | b@1 ["b",1]',
      '{"item":{"id":"c","total":5000},"index":2,"reviewed":"c"} | order c | c@2 ["c",2]',
    ]);
    assert.equal(final.stepStatus['1.1.1.1.1.2.2'], 'SKIPPED', 'item a is not b');
    assert.equal(final.stepStatus['1.1.1.2.1.2.2'], 'COMPLETE', 'item b is b');
    assert.deepEqual(posted.filter((r) => r.path.startsWith('/review')), [{ path: '/review/c', body: { order: 'c', index: 2, text: 'order c at 2' } }]);
    assert.deepEqual(search.requests.map((u) => u.searchParams.get('q')).filter((q) => q?.startsWith('order')).sort(), ['order a', 'order b', 'order c']);
    // two items at once: their template steps run their local activities one at a time (engine level 4), so the run replays
    await replays(runId);
  });

  it('workflow-side steps (waitUntil, approval with if, trigger, agent, polling tool) see the item in a branch inside a forEach', async function () {
    this.timeout(240_000);
    const child = await publishWorkflow(fg, { name: 'nested-scope-child', steps: [{ name: 'Echo', type: 'template', format: 'plaintext', template: 'child {{inputs.id}} #{{inputs.index}}' }] });
    const agent = await fg.admin<{ id: string }>('POST', '/api/v1/agents', { name: 'nested-scope-agent', instructions: 'Answer.' });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const p = await publishWorkflow(fg, {
      name: 'nested-scope-waits',
      steps: [{
        name: 'Each', type: 'forEach', items: 'inputs.orders',
        steps: [{
          name: 'Route', type: 'branch',
          cases: [{ if: 'true', steps: [
            { name: 'At', type: 'waitUntil', until: '{{item.at}}' },
            { name: 'Sign-off', type: 'approval', if: 'item.approve', approvers: ['ann@example.com'], message: 'approve {{item.id}} #{{index}}', timeout: '10m' },
            { name: 'Chain', type: 'trigger', triggerId: child.triggerId, inputs: { id: '{{item.id}}', index: '{{index}}' } },
            { name: 'Ask', type: 'agent', agentId: agent.body.id, message: 'about {{item.id}} #{{index}}' },
            { name: 'Poll', type: 'tool', server: 'web-search', tool: 'search', arguments: { query: 'poll {{item.id}}', limit: 1 }, until: { path: 'query', in: ['poll a', 'poll b'] }, pollSeconds: 1, maxWaitSeconds: 3 },
            { name: 'Sum', type: 'code', source: 'return { approval: local[2].status, chain: local[3].json.results[0].result, agent: local[4].result, poll: local[5].json.query }' },
          ] }],
        }],
      }],
    });
    const runId = await start(p, { orders: [
      { id: 'a', approve: true, at: '2020-01-01T00:00:00Z' },
      { id: 'b', approve: false, at: '2020-01-02T00:00:00+01:00' },
    ] });

    const waiting = await pollStatus(fg, p, runId, (s) => finished(s) || (s as WaitingStatus).waitingOn?.kind === 'approval', 120_000) as WaitingStatus;
    assert.equal(waiting.waitingOn?.kind, 'approval', JSON.stringify(waiting));
    assert.equal(waiting.waitingOn?.stepPath, '1.1.1.1.2');
    const listed = await fg.admin<{ approvals: { message: string }[] }>('GET', `/api/v1/runs/${runId}/approvals`);
    assert.deepEqual(listed.body.approvals.map((a) => a.message), ['approve a #0']);
    const decided = await fg.request(`/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/approval`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: 'approve', approver: 'ann@example.com' }),
    });
    assert.equal(decided.status, 200, await decided.text());

    const final = await pollStatus(fg, p, runId, finished, 120_000);
    assert.equal(final.status, 'COMPLETE', JSON.stringify(final));
    assert.deepEqual(JSON.parse(await stepFile(p, runId, '1', 'output.txt')), [
      { approval: 'COMPLETE', chain: 'child a #0', agent: 'answer to: about a #0', poll: 'poll a' },
      { approval: 'SKIPPED', chain: 'child b #1', agent: 'answer to: about b #1', poll: 'poll b' },
    ]);
    assert.match(await stepFile(p, runId, '1.1.1.1.1', 'stdout.txt'), /^2020-01-01T00:00:00Z has already passed/);
    assert.match(await stepFile(p, runId, '1.2.1.1.1', 'stdout.txt'), /^2020-01-02T00:00:00\+01:00 has already passed/);
    await replays(runId);
  });

  it('a large forEach (child-workflow chunks) passes item, index and outer into nested branch and parallel steps', async function () {
    this.timeout(600_000);
    const p = await publishWorkflow(fg, {
      name: 'nested-scope-chunks', timeoutSeconds: 1800,
      steps: [
        {
          name: 'Big', type: 'forEach', items: '[1..101]', concurrency: 10,
          steps: [
            {
              name: 'Route', type: 'branch',
              cases: [{ if: 'index = 0', steps: [{ name: 'First', type: 'template', format: 'plaintext', template: 'first {{item}}#{{index}}' }] }],
              default: [{ name: 'Rest', type: 'template', format: 'plaintext', template: 'n{{item}}#{{index}}' }],
            },
            {
              name: 'Both', type: 'parallel',
              branches: [
                { steps: [{ name: 'A', type: 'template', format: 'plaintext', template: '{{item}}a' }] },
                { steps: [{ name: 'B', type: 'code', source: 'return item * 1000 + index' }] },
              ],
            },
            { name: 'Sum', type: 'template', format: 'plaintext', template: '{{local.1.result}}|{{local.2.result}}' },
          ],
        },
        {
          name: 'Groups', type: 'forEach', items: 'inputs.groups',
          steps: [{
            name: 'Via', type: 'branch',
            cases: [{ if: 'true', steps: [{
              name: 'Inner', type: 'forEach', items: '[1..101]', concurrency: 10,
              steps: [{ name: 'Cell', type: 'template', format: 'plaintext', template: '{{outer.item}}{{outer.index}}:{{item}}#{{index}}' }],
            }] }],
          }],
        },
      ],
    });
    const runId = await start(p, { groups: ['g', 'h'] });
    const final = await pollStatus(fg, p, runId, finished, 570_000);
    assert.equal(final.status, 'COMPLETE', JSON.stringify(final).slice(0, 2000));
    // both ran in chunks: the run lists no inner step of either
    await fg.client.workflow.getHandle(`${runId}-foreach-1-2`).describe();
    await fg.client.workflow.getHandle(`${runId}-foreach-2.2.1.1.1-2`).describe();

    const big = JSON.parse(await stepFile(p, runId, '1', 'output.txt')) as string[];
    assert.equal(big.length, 101);
    assert.equal(big[0], 'first 1#0|["1a",1000]');
    big.slice(1).forEach((v, i) => assert.equal(v, `n${i + 2}#${i + 1}|["${i + 2}a",${(i + 2) * 1000 + i + 1}]`));
    const groups = JSON.parse(await stepFile(p, runId, '2', 'output.txt')) as string[][];
    assert.deepEqual(groups.map((g) => g.length), [101, 101]);
    groups.forEach((cells, g) => cells.forEach((v, i) => assert.equal(v, `${['g', 'h'][g]}${g}:${i + 1}#${i}`)));
  });

  /**
   * Before the fix a nested list lost the item: a condition reading it was false, so the step was
   * skipped (no command). A run started then must replay as it ran, so the fix applies from engine
   * level 4 (workflows/run/features.ts): a level-2 run keeps the old scope, a run without a level
   * asks patched(). The level-2 run's history is saved as histories/run-automation-nested-scope-engine-2.json.
   */
  it('a run started at engine level 2 keeps the scope it started with and replays; one without a level takes the fix through a patch marker', async function () {
    this.timeout(180_000);
    const p = await publishWorkflow(fg, {
      name: 'nested-scope-levels',
      steps: [{
        name: 'Each', type: 'forEach', items: 'inputs.orders',
        steps: [{
          name: 'Route', type: 'branch',
          cases: [{ if: 'item.total > 100', steps: [{ name: 'Big only', type: 'template', format: 'plaintext', if: 'item.total > 100', template: 'big {{item.id}}' }] }],
        }],
      }],
    });
    const response = await trigger(fg, p, { orders: [{ id: 'a', total: 5 }, { id: 'c', total: 5000 }] }, { 'x-api-wait': 'true' });
    assert.equal(response.status, 200, await response.clone().text());
    const current = (await response.json()) as { status: string; results: SyncEntry[] };
    const currentRunId = response.headers.get('X-Pf-Run-Id') ?? '';
    const payload = (await clearHistory(fg, currentRunId)).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    assert.ok(payload);
    const { engine: _level, ...input } = defaultPayloadConverter.fromPayload<RunInput>(payload);

    const levelTwo = randomUUID();
    const old = await fg.client.workflow.execute('runAutomation', { workflowId: levelTwo, taskQueue: fg.taskQueue, args: [{ ...input, runId: levelTwo, engine: 2 }] }) as RunSummary;
    assert.equal(old.status, 'COMPLETE');
    assert.equal(old.steps?.['1.2.1.1.1']?.status, 'SKIPPED', 'a level-2 run keeps the old scope');
    const oldHistory = await clearHistory(fg, levelTwo);
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, oldHistory, levelTwo);
    // FLOWGATE_RECORD_HISTORY=<file>: keep it (committed as histories/run-automation-nested-scope-engine-2.json)
    const recordTo = recordHistoryPath();
    if (recordTo) await writeFile(recordTo, `${historyToJSON(oldHistory)}\n`, { flag: 'wx' });

    const noLevel = randomUUID();
    const unlevelled = await fg.client.workflow.execute('runAutomation', { workflowId: noLevel, taskQueue: fg.taskQueue, args: [{ ...input, runId: noLevel }] }) as RunSummary;
    assert.equal(unlevelled.steps?.['1.2.1.1.1']?.status, 'COMPLETE', JSON.stringify(unlevelled.steps));
    // a patch marker's details carry its patch ID
    const patches = ((await clearHistory(fg, noLevel)).events ?? [])
      .map((e) => e.markerRecordedEventAttributes).filter((m) => m?.markerName === 'core_patch')
      .flatMap((m) => Object.values(m?.details ?? {}).flatMap((d) => d.payloads ?? []).map((pl) => Buffer.from(pl.data ?? []).toString('utf8')));
    assert.ok(patches.some((d) => d.includes('nested-item-scope')), patches.join(' '));
    await replays(noLevel);

    assert.equal(current.status, 'COMPLETE', JSON.stringify(current));
    const own = current.results.find((r) => r.stepIndex === 1 && r.stepPath === undefined);
    assert.deepEqual(JSON.parse(own?.result.result ?? 'null'), ['', 'big c']);
    await replays(currentRunId);
  });
});
