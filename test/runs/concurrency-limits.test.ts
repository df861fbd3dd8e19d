/**
 * Concurrency limits that queue (issue 36), through the gateway on a real Temporal dev server: an
 * organization's limit (FLOWGATE_ORG_MAX_RUNNING=2) and a trigger's `concurrency`. Runs over a
 * limit read PENDING with `waitingOn: {kind: 'slot'}` and start in order as slots free; a run
 * terminated in Temporal gives its slot back at the semaphore's next check; newest-wins supersedes.
 */
import assert from 'node:assert/strict';
import { publishWorkflow, trigger, type Published, type TestFlowgate, startTestFlowgate } from '../support/flowgate';
import { allRequestsTakenIn, checkFifoByStart, mostAtOnce, sampleUntilEnded, slotHolds, slotIntervals, surelyAtOnce, type SampledRun } from '../support/slot-sampler';

const DELAYED = (name: string, delay: string) => ({
  name, steps: [{ name: 'Wait', type: 'delay', duration: delay }, { name: 'Done', type: 'template', format: 'plaintext', template: 'done' }],
});

async function startRuns(fg: TestFlowgate, p: Published, count: number): Promise<SampledRun[]> {
  const runs: SampledRun[] = [];
  // one after the other, as fast as the gateway answers: "at once", with a well-defined start order
  for (let i = 0; i < count; i++) {
    const response = await trigger(fg, p, {});
    assert.equal(response.status, 200, await response.clone().text());
    const runId = response.headers.get('X-Pf-Run-Id');
    assert.ok(runId);
    runs.push({ runId, base: fg.url, statusPath: `/ext/webhook/${p.apiKey}/runs/${p.workflowId}/${runId}/status`, pendingWaits: [] });
  }
  return runs;
}

describe('concurrency limits that queue (FLOWGATE_ORG_MAX_RUNNING=2, trigger concurrency)', function () {
  this.timeout(240_000);
  let fg: TestFlowgate;

  before(async () => {
    fg = await startTestFlowgate({ FLOWGATE_ORG_MAX_RUNNING: '2', FLOWGATE_SLOT_CHECK_SECONDS: '1' });
  });
  after(async () => {
    await fg?.stop();
  });

  it('ten runs started at once: never more than 2 in progress, all complete in start order, the waiting ones read PENDING with the slot and their place', async () => {
    const p = await publishWorkflow(fg, DELAYED('ten-at-limit-two', '2s'));
    const t0 = Date.now();
    const runs = await startRuns(fg, p, 10);
    const startMs = Date.now() - t0;
    const sample = await sampleUntilEnded(runs, { everyMs: 100, timeoutMs: 180_000 });
    const spentMs = Date.now() - t0;
    const atOnce = surelyAtOnce(runs);
    assert.ok(atOnce <= 2, `${atOnce} runs were in progress at once by their answers`);
    for (const run of runs) assert.equal(run.final?.status, 'COMPLETE', JSON.stringify(run.final));
    // Temporal's record: the semaphore served its queue first come by start (while slots are free, a run whose
    // request reached it a moment late may be overtaken by one that asked first: a clean-clone CI run granted 1, 3, 2);
    // each run held one slot from its grant to its release, never more than 2 at once
    const ids = runs.map((r) => r.runId);
    const order = await checkFifoByStart(fg, `slots:org:org_default@${fg.taskQueue}`, ids);
    assert.deepEqual([...order].sort(), [...ids].sort(), 'every run got a slot');
    const intervals = await slotIntervals(fg.client, ids);
    assert.equal(mostAtOnce(intervals), 2, `runs holding a slot at once by Temporal's record: ${JSON.stringify(intervals)}`);
    // completed in grant order: each run waited its 2 s from its grant; two runs granted within a second of each
    // other run side by side and may end either way (on the production-shaped Temporal under load a CI run saw the
    // second of two runs granted together end more than 300 ms before the first: the worker's pace, not the queue's)
    const byGrant = order.map((id) => intervals[ids.indexOf(id)]!);
    byGrant.forEach((run, i) => assert.ok(run.closed >= run.granted + 2000, `grant ${i + 1} completed ${run.closed - run.granted} ms after its grant`));
    for (let i = 1; i < byGrant.length; i++) {
      if (byGrant[i]!.granted - byGrant[i - 1]!.granted < 1000) continue;
      assert.ok(byGrant[i - 1]!.closed <= byGrant[i]!.closed, `grant ${i + 1} completed before grant ${i}, granted ${byGrant[i]!.granted - byGrant[i - 1]!.granted} ms later`);
    }
    for (let i = 2; i < byGrant.length; i++) assert.ok(byGrant[i - 2]!.closed < byGrant[i]!.closed, `grant ${i + 1} completed before grant ${i - 1}`);
    // every answer a run gave before its grant said PENDING, waiting for the organization's slot
    let seenWaiting = 0;
    runs.forEach((run, i) => {
      const before = (run.observations ?? []).filter((o) => o.at < intervals[i]!.granted);
      for (const o of before) {
        assert.equal(o.status, 'PENDING', `run ${i + 1} answered ${o.status} before it had its slot`);
        if (i >= 2 && o.waitingOn) assert.deepEqual({ ...o.waitingOn, position: undefined }, { kind: 'slot', scope: 'organization', limit: 2, position: undefined });
      }
      if (run.pendingWaits.length > 0) seenWaiting++;
    });
    assert.ok(seenWaiting >= 6, `only ${seenWaiting} runs were seen waiting for a slot`);
    // the last run's place: never behind the nine started before it; once the semaphore has taken in
    // every request, it only moves forward (before, a run started earlier whose request came late
    // goes ahead of it: first come by start)
    const semaphore = `slots:org:org_default@${fg.taskQueue}`;
    const takenIn = await allRequestsTakenIn(fg, semaphore, ids);
    const placeOf = (o: { waitingOn?: Record<string, unknown> }) => o.waitingOn?.position;
    const lastPlaces = (runs[9]!.observations ?? []).filter((o) => typeof placeOf(o) === 'number');
    assert.ok(lastPlaces.length > 0, 'the last run never showed its place');
    assert.ok(lastPlaces.every((o) => (placeOf(o) as number) >= 1 && (placeOf(o) as number) <= 9), `the last run's places: ${lastPlaces.map(placeOf).join(', ')}`);
    const settled = lastPlaces.filter((o) => o.sent > takenIn).map((o) => placeOf(o) as number);
    assert.ok(settled.every((pl, i) => i === 0 || pl <= settled[i - 1]!),
      `once the semaphore had every request, the last run's place only moved forward: ${settled.join(', ')} (all: ${lastPlaces.map(placeOf).join(', ')})`);
    console.log(`      ten runs: started in ${startMs} ms, all done in ${spentMs} ms; ${sample.samples} samples (${Math.round(spentMs / sample.samples)} ms each), at most ${sample.maxInProgress} in progress; `
      + `last run's places ${lastPlaces.map(placeOf).join(',')} (${settled.length} after every request was in); grant order by start #${order.map((id) => ids.indexOf(id) + 1).join(',')}`);
  });

  it('a trigger\'s limit holds beside the organization\'s: at most 1 of its runs and 2 in all in progress', async () => {
    const one = await publishWorkflow(fg, DELAYED('trigger-limit-one', '1s'), { concurrency: { limit: 1 } });
    const free = await publishWorkflow(fg, DELAYED('no-trigger-limit', '1s'));
    const trigger1 = await startRuns(fg, one, 3);
    const others = await startRuns(fg, free, 2);
    const all = [...trigger1, ...others];
    await sampleUntilEnded(all);
    for (const run of all) assert.equal(run.final?.status, 'COMPLETE');
    // by the runs' answers (each run surely in progress between two answers that said so) ...
    const allAtOnce = surelyAtOnce(all);
    const triggerAtOnce = surelyAtOnce(trigger1);
    assert.ok(allAtOnce <= 2, `${allAtOnce} runs in progress at once by their answers`);
    assert.ok(triggerAtOnce <= 1, `${triggerAtOnce} runs of the limited trigger in progress at once by their answers`);
    // ... and by Temporal's record: each run held each slot from its grant to its release
    const created = await fg.admin<{ triggers: { id: string; concurrency: unknown }[] }>('GET', `/api/v1/triggers?workflowId=${one.workflowId}`);
    const triggerKey = `trigger:${created.body.triggers[0]!.id}@${fg.taskQueue}`;
    const triggerHolds = await slotHolds(fg, trigger1.map((r) => r.runId), triggerKey);
    assert.equal(mostAtOnce(triggerHolds), 1, `runs holding the trigger's slot at once: ${JSON.stringify(triggerHolds)}`);
    const orgHolds = await slotHolds(fg, all.map((r) => r.runId), `org:org_default@${fg.taskQueue}`);
    assert.equal(mostAtOnce(orgHolds), 2, `runs holding an organization slot at once: ${JSON.stringify(orgHolds)}`);
    assert.ok(trigger1.slice(1).every((r) => r.pendingWaits.some((w) => w.scope === 'trigger')), 'the trigger\'s waiting runs named its limit');
    assert.deepEqual(created.body.triggers[0]?.concurrency, { limit: 1 });
  });

  it('a run terminated in Temporal gives its slot back (at the semaphore\'s next check)', async () => {
    const long = await publishWorkflow(fg, DELAYED('holds-forever', '10m'), { concurrency: { limit: 1 } });
    const [holder] = await startRuns(fg, long, 1);
    // wait for the holder to run, then start the next and terminate the holder
    const deadline = Date.now() + 30_000;
    for (;;) {
      const body = (await (await fetch(`${fg.url}${holder!.statusPath}`)).json()) as { status: string };
      if (body.status === 'PAUSED') break;
      assert.ok(Date.now() < deadline, `the holder is ${body.status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const nextResponse = await trigger(fg, long, {});
    const nextId = nextResponse.headers.get('X-Pf-Run-Id')!;
    const nextPath = `/ext/webhook/${long.apiKey}/runs/${long.workflowId}/${nextId}/status`;
    let pending: { status: string; waitingOn?: Record<string, unknown> } | undefined;
    for (let i = 0; i < 100; i++) {
      pending = (await (await fetch(`${fg.url}${nextPath}`)).json()) as typeof pending;
      if (pending?.status === 'PENDING' && pending.waitingOn?.position === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(pending?.waitingOn, { kind: 'slot', scope: 'trigger', limit: 1, position: 1 });
    const terminatedAt = Date.now();
    await fg.client.workflow.getHandle(holder!.runId).terminate('test: a run that cannot release its slot');
    let got: number | undefined;
    for (let i = 0; i < 200 && got === undefined; i++) {
      const body = (await (await fetch(`${fg.url}${nextPath}`)).json()) as { status: string };
      if (body.status === 'PAUSED') got = Date.now();
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(got !== undefined, 'the waiting run never got the freed slot');
    console.log(`      the terminated run's slot went to the next run ${got - terminatedAt} ms after the termination (check every 1 s)`);
    await fg.client.workflow.getHandle(nextId).terminate('test: done');
  });

  it('newest-wins: a new run supersedes the waiting one and cancels the one in progress; the newest completes', async () => {
    const p = await publishWorkflow(fg, DELAYED('newest-wins', '3s'), { concurrency: { limit: 1, mode: 'newest-wins' } });
    const [first] = await startRuns(fg, p, 1);
    for (let i = 0; i < 300; i++) {
      const body = (await (await fetch(`${fg.url}${first!.statusPath}`)).json()) as { status: string };
      if (body.status === 'PAUSED') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const [second, third] = await startRuns(fg, p, 2);
    await sampleUntilEnded([first!, second!, third!]);
    assert.equal(first!.final?.status, 'FAILED');
    assert.match(first!.final?.error ?? '', /cancelled/);
    assert.equal(second!.final?.status, 'FAILED');
    assert.match(second!.final?.error ?? '', /superseded by run|cancelled/);
    assert.equal(third!.final?.status, 'COMPLETE');
  });

  it('refuses a bad concurrency field with a clear 400', async () => {
    for (const concurrency of [{ limit: 0 }, { limit: 2, mode: 'newest-wins' }, { limit: 1, mode: 'oldest' }, { limit: 1, extra: true }]) {
      const created = await fg.admin<{ id: string }>('POST', '/api/v1/workflows', DELAYED(`bad-${Math.random().toString(36).slice(2)}`, '1s'));
      await fg.admin('POST', `/api/v1/workflows/${created.body.id}/publish`);
      const answer = await fg.admin<{ error: string; message: string }>('POST', '/api/v1/triggers', { workflowId: created.body.id, concurrency });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.match(answer.body.message, /concurrency/);
    }
  });

  it('what a limited run pays at an idle system: synchronous calls with and without the limit (figures)', async () => {
    const plain = await startTestFlowgate();
    try {
      const definition = { name: 'one-template', steps: [{ name: 'Hi', type: 'template', format: 'plaintext', template: 'hi' }] };
      const timed = async (gate: TestFlowgate): Promise<number[]> => {
        const p = await publishWorkflow(gate, definition);
        const times: number[] = [];
        for (let i = 0; i < 6; i++) {
          const t = Date.now();
          const response = await trigger(gate, p, {}, { 'x-api-wait': 'true' });
          assert.equal(response.status, 200);
          assert.equal(((await response.json()) as { status: string }).status, 'COMPLETE');
          if (i > 0) times.push(Date.now() - t);
        }
        return times.sort((a, b) => a - b);
      };
      const unlimited = await timed(plain);
      const limited = await timed(fg);
      const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
      console.log(`      synchronous one-step call, median of 5 (ms): without a limit ${median(unlimited)} [${unlimited.join(', ')}], under the organization's limit ${median(limited)} [${limited.join(', ')}]`);
    } finally {
      await plain.stop();
    }
  });
});
