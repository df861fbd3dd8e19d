/**
 * Pausing a whole workflow or trigger (issue 54; src/runs/run-holds.ts) over real HTTP on a real
 * Temporal: calls made while it is paused are answered with their run ID as usual, and each run
 * waits PENDING (waitingOn {kind: "operator", scope}) without starting its first step (a counting
 * upstream sees no call); a restart of the whole flowgate changes nothing; the unpause releases
 * every held run and each runs its steps once. A trigger's pause holds that trigger's runs only.
 * Roles, 404s, the holds list and the audit trail.
 */
import assert from 'node:assert/strict';
import { eventually } from '../support/eventually';
import { countingUpstream, type CountingUpstream, type FleetRunStatus } from '../support/fleet';
import { asAdminOf, publishWorkflow, startTestFlowgate, trigger, type Published, type TestFlowgate } from '../support/flowgate';

interface HeldStatus extends FleetRunStatus {
  waitingOn?: FleetRunStatus['waitingOn'] & { scope?: string; at?: string };
}

describe('pausing a whole workflow or trigger: new runs wait PENDING until the unpause', () => {
  let fg: TestFlowgate;
  let viewer: TestFlowgate;
  let up: CountingUpstream;
  before(async () => {
    fg = await startTestFlowgate();
    up = await countingUpstream(500);
    const member = await fg.admin<{ id: string }>('POST', '/api/v1/members', { email: 'vic@example.com', role: 'viewer' });
    assert.equal(member.status, 201, JSON.stringify(member.body));
    const token = await fg.admin<{ token: string }>('POST', `/api/v1/members/${member.body.id}/tokens`);
    viewer = asAdminOf(fg, token.body.token);
  });
  after(async () => {
    await fg?.stop();
    await up?.close();
  });

  const status = async (runId: string): Promise<HeldStatus> => (await fg.admin<HeldStatus>('GET', `/api/v1/runs/${runId}`)).body;
  const statusWhen = (runId: string, done: (s: HeldStatus) => boolean, what: string, timeoutMs = 60_000): Promise<HeldStatus> =>
    eventually(async () => {
      const s = await status(runId);
      return done(s) ? s : undefined;
    }, `run ${runId}: ${what}`, timeoutMs, 200);
  const ended = (s: HeldStatus): boolean => ['COMPLETE', 'FAILED', 'TIMEOUT'].includes(s.status);
  const call = async (p: Published): Promise<string> => {
    const response = await trigger(fg, p, {}, { Prefer: 'wait=0' });
    const runId = response.headers.get('X-Pf-Run-Id');
    await response.arrayBuffer();
    assert.equal(response.status, 202);
    assert.ok(runId, 'the call is answered with its run ID');
    return runId;
  };
  const steps = (path: string) => [{ name: 'First', type: 'http', url: `${up.url}/${path}` }, { name: 'Second', type: 'template', template: 'two' }];

  it('a paused workflow: its runs wait PENDING through a restart, and all run once after the unpause', async function () {
    this.timeout(240_000);
    const p = await publishWorkflow(fg, { name: 'held-workflow', steps: steps('wf') });
    assert.equal((await viewer.admin('POST', `/api/v1/workflows/${p.workflowId}/pause`, {})).status, 403, 'a viewer cannot pause');
    assert.equal((await fg.admin('POST', '/api/v1/workflows/wf_nothing/pause', {})).status, 404);
    const paused = await fg.admin<{ paused: boolean; hold: { by: string; at: string; reason?: string } }>('POST', `/api/v1/workflows/${p.workflowId}/pause`, { reason: 'upstream change' });
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.deepEqual([paused.body.paused, paused.body.hold.by, paused.body.hold.reason], [true, 'instance-admin', 'upstream change']);
    const again = await fg.admin<{ hold: { at: string } }>('POST', `/api/v1/workflows/${p.workflowId}/pause`, {});
    assert.equal(again.body.hold.at, paused.body.hold.at, 'a second pause keeps the first one\'s who and when');
    const listed = await viewer.admin<{ holds: { scope: string; id: string }[] }>('GET', '/api/v1/holds');
    assert.deepEqual(listed.body.holds.map((h) => [h.scope, h.id]), [['workflow', p.workflowId]]);

    const runIds = [await call(p), await call(p), await call(p)];
    for (const runId of runIds) {
      const held = await statusWhen(runId, (s) => s.waitingOn?.kind === 'operator', 'waiting for its workflow');
      assert.equal(held.status, 'PENDING');
      assert.deepEqual([held.waitingOn?.scope, held.waitingOn?.by, held.waitingOn?.reason, held.waitingOn?.at], ['workflow', 'instance-admin', 'upstream change', paused.body.hold.at]);
      assert.equal(held.stepStatus['1'], 'PENDING');
    }
    // the whole flowgate stops and starts again on the same task queue: the runs still wait
    await fg.stop(true);
    fg = await startTestFlowgate({}, { restartOf: fg });
    viewer = asAdminOf(fg, viewer.adminToken);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const runId of runIds) assert.equal((await status(runId)).status, 'PENDING');
    assert.equal(up.calls['/wf'] ?? 0, 0, 'no first step starts while the workflow is paused');

    const unpaused = await fg.admin<{ paused: boolean; releaseId: string; hold?: { at: string } }>('POST', `/api/v1/workflows/${p.workflowId}/unpause`);
    assert.equal(unpaused.status, 200, JSON.stringify(unpaused.body));
    assert.equal(unpaused.body.paused, false);
    assert.equal(unpaused.body.hold?.at, paused.body.hold.at);
    for (const runId of runIds) assert.equal((await statusWhen(runId, ended, 'ending after the unpause')).status, 'COMPLETE');
    assert.equal(up.calls['/wf'], runIds.length, 'each first step ran once');
    // a run started after the unpause starts at once
    const after = await call(p);
    assert.equal((await statusWhen(after, ended, 'ending')).status, 'COMPLETE');
    assert.deepEqual((await fg.admin<{ holds: unknown[] }>('GET', '/api/v1/holds')).body.holds, []);
    const audit = await fg.admin<{ records: { action: string; target: { id: string } }[] }>('GET', `/api/v1/audit?target=workflow:${p.workflowId}`);
    const actions = audit.body.records.filter((r) => r.target.id === p.workflowId).map((r) => r.action);
    assert.ok(actions.includes('workflow.paused') && actions.includes('workflow.unpaused'), `audited: ${actions.join(', ')}`);
  });

  it('a paused trigger holds its own runs only; its unpause releases them', async function () {
    this.timeout(120_000);
    const p = await publishWorkflow(fg, { name: 'held-trigger', steps: steps('trg') });
    const other = await fg.admin<{ id: string }>('POST', '/api/v1/triggers', { workflowId: p.workflowId });
    assert.equal(other.status, 201, JSON.stringify(other.body));
    assert.equal((await viewer.admin('POST', `/api/v1/triggers/${p.triggerId}/pause`, {})).status, 403);
    const paused = await fg.admin('POST', `/api/v1/triggers/${p.triggerId}/pause`, { reason: 'one trigger' });
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    const held = await call(p);
    const free = await call({ ...p, triggerId: other.body.id });
    assert.equal((await statusWhen(free, ended, 'the other trigger\'s run ending')).status, 'COMPLETE');
    const waiting = await statusWhen(held, (s) => s.waitingOn?.kind === 'operator', 'waiting for its trigger');
    assert.deepEqual([waiting.status, waiting.waitingOn?.scope, waiting.waitingOn?.reason], ['PENDING', 'trigger', 'one trigger']);
    const unpaused = await fg.admin('POST', `/api/v1/triggers/${p.triggerId}/unpause`);
    assert.equal(unpaused.status, 200, JSON.stringify(unpaused.body));
    assert.equal((await statusWhen(held, ended, 'ending after the unpause')).status, 'COMPLETE');
    assert.equal(up.calls['/trg'], 2);
  });
});
