/**
 * Eager starts: a run whose caller waits for it (a synchronous trigger call, a workflow tool called
 * without a task) asks Temporal to hand its first workflow task back in the start's answer, to this
 * process's worker. `flowgate_eager_starts_total` counts what the server did with the request.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { parsePrometheus, valueOf, type Sample } from '../observability/prometheus-text';
import { pollStatus, publishWorkflow, startTestFlowgate, trigger, type TestFlowgate } from '../support/flowgate';
import { callTool, runtimeToken } from '../tools/support';

const HELLO = { name: 'hello', steps: [{ name: 'Hi', type: 'template', template: 'hi {{inputs.who}}' }] };

describe('runs: eager starts for callers that wait', () => {
  let fg: TestFlowgate;

  before(async () => {
    fg = await startTestFlowgate();
  });
  after(async () => {
    await fg?.stop();
  });

  async function eagerStarts(): Promise<{ eager: number; declined: number }> {
    const response = await fg.request('/metrics', { headers: { Authorization: `Bearer ${fg.adminToken}` } });
    assert.equal(response.status, 200);
    const samples: Sample[] = parsePrometheus(await response.text());
    return {
      eager: valueOf(samples, 'flowgate_eager_starts_total', { result: 'eager' }),
      declined: valueOf(samples, 'flowgate_eager_starts_total', { result: 'declined' }),
    };
  }

  it('starts a synchronous call\'s run eagerly on the local worker, and an asynchronous call\'s run as usual', async () => {
    const p = await publishWorkflow(fg, HELLO);
    const before = await eagerStarts();
    for (const who of ['ann', 'bob']) {
      const answer = await trigger(fg, p, { who }, { 'x-api-wait': 'true' });
      assert.equal(answer.status, 200);
      const body = (await answer.json()) as { status: string; results: { result: { result: string } }[] };
      assert.equal(body.status, 'COMPLETE');
      assert.equal(body.results[0]?.result.result, `hi ${who}`);
    }
    const async = await trigger(fg, p, { who: 'cy' });
    assert.equal(async.status, 200);
    assert.equal((await pollStatus(fg, p, async.headers.get('X-Pf-Run-Id') ?? '')).status, 'COMPLETE');
    const after = await eagerStarts();
    assert.equal(after.eager - before.eager, 2, 'both synchronous runs took their first task from the start');
    assert.equal(after.declined - before.declined, 0);
  });

  it('starts a workflow tool called without a task eagerly', async () => {
    const name = `hello_${randomUUID().slice(0, 8)}`;
    await publishWorkflow(fg, { ...HELLO, name: `hello-${randomUUID()}` }, { tool: { name, description: 'says hi' } });
    const { token } = await runtimeToken(fg);
    const before = await eagerStarts();
    const answer = await callTool(fg, 'workflows', token, name, { who: 'dee' });
    assert.equal(answer.body?.result?.isError, false, JSON.stringify(answer.body));
    const after = await eagerStarts();
    assert.equal(after.eager - before.eager, 1);
  });

  it('starts a waiting caller\'s run as usual while no local worker runs, and the run goes on once one does', async () => {
    const p = await publishWorkflow(fg, HELLO);
    await fg.stopWorker();
    try {
      const before = await eagerStarts();
      const answer = await trigger(fg, p, { who: 'eve' }, { Prefer: 'wait=1' });
      assert.equal(answer.status, 202, 'no worker took the run within the second');
      const after = await eagerStarts();
      assert.equal(after.declined - before.declined, 1, 'no local worker slot: the server was not asked for the first task');
      assert.equal(after.eager - before.eager, 0);
      await fg.startWorker();
      assert.equal((await pollStatus(fg, p, answer.headers.get('X-Pf-Run-Id') ?? '')).status, 'COMPLETE');
    } finally {
      await fg.startWorker();
    }
  });
});
