import assert from 'node:assert/strict';
import { MAX_STDOUT_BYTES, runCodeStep, sandboxGate } from '../../activities/steps/code/code-step';
import { SandboxGate } from '../../activities/steps/code/sandbox-gate';
import { CodeStepSchema, type CodeStep } from '../../activities/steps/code/schema';
import type { InterpolationContext } from '../../src/common/interpolate';

function codeStep(source: string, limits: { timeoutMs?: number; memoryLimitMb?: number } = {}): CodeStep {
  return CodeStepSchema.parse({ name: 'code', type: 'code', source, ...limits });
}

function context(): InterpolationContext {
  return {
    inputs: { name: 'Ada', tags: ['a', 'b'] },
    steps: { '1': { result: 'hello', json: undefined, exitCode: 0 }, '2': { result: '{"n":3}', json: { n: 3 }, exitCode: 0 } },
    run: { id: `run-${Math.random().toString(36).slice(2)}`, automationId: 'a1', automationVersion: 2, triggerId: 't1', started: '2024-01-01T00:00:00Z' },
  };
}

describe('runCodeStep', () => {
  it('returns a string as a plaintext result', async () => {
    const execution = await runCodeStep(codeStep("return 'plain'"), context());
    assert.deepEqual(execution, { status: 'COMPLETE', result: 'plain', resultType: 'plaintext', exitCode: 0, stdout: '' });
  });

  it('returns objects, arrays and numbers as JSON', async () => {
    const object = await runCodeStep(codeStep('return { a: [1, 2], b: null }'), context());
    assert.equal(object.resultType, 'json');
    assert.equal(object.result, '{"a":[1,2],"b":null}');
    const number = await runCodeStep(codeStep('return 1 + 2'), context());
    assert.equal(number.resultType, 'json');
    assert.equal(number.result, '3');
  });

  it('returns an empty plaintext result for undefined and null', async () => {
    for (const source of ['const x = 1', 'return null', 'return undefined']) {
      const execution = await runCodeStep(codeStep(source), context());
      assert.equal(execution.status, 'COMPLETE');
      assert.equal(execution.result, '');
      assert.equal(execution.resultType, 'plaintext');
    }
  });

  it('awaits an async result', async () => {
    const execution = await runCodeStep(codeStep("const v = await Promise.resolve('later'); return v"), context());
    assert.equal(execution.result, 'later');
  });

  it('reads inputs, earlier steps and run details', async () => {
    const ctx = context();
    const execution = await runCodeStep(codeStep(
      'return [inputs.name, inputs.tags.length, steps["1"].result.toUpperCase(), steps[2].json.n, run.id, run.automationVersion]',
    ), ctx);
    assert.deepEqual(JSON.parse(execution.result), ['Ada', 2, 'HELLO', 3, ctx.run.id, 2]);
  });

  it('reads item, index and a nested forEach\'s outer item; code declaring its own outer still runs', async () => {
    const nested = { ...context(), local: {}, item: 'x', index: 1, outer: { item: { name: 'g' }, index: 0 } };
    const execution = await runCodeStep(codeStep('return [item, index, outer.item.name, outer.index]'), nested);
    assert.deepEqual(JSON.parse(execution.result), ['x', 1, 'g', 0]);
    const own = await runCodeStep(codeStep('const outer = 5; return outer + index'), nested);
    assert.equal(own.result, '6');
    const flat = await runCodeStep(codeStep('return typeof outer'), context());
    assert.equal(flat.result, 'undefined');
  });

  it('works on copies: changes in the sandbox do not reach the caller', async () => {
    const ctx = context();
    await runCodeStep(codeStep("inputs.name = 'changed'; steps['1'].result = 'changed'"), ctx);
    assert.deepEqual(ctx.inputs, { name: 'Ada', tags: ['a', 'b'] });
    assert.equal(ctx.steps['1']?.result, 'hello');
  });

  it('captures console output line by line, objects as JSON and warnings prefixed', async () => {
    const execution = await runCodeStep(codeStep(
      "console.log('one', 2); console.info({ a: 1 }); console.debug([1, 'x']); console.warn('careful'); console.error(new RangeError('bad'))",
    ), context());
    assert.equal(execution.stdout, 'one 2\n{"a":1}\n[1,"x"]\n[warn] careful\n[error] RangeError: bad\n');
  });

  it('caps captured console output at 1 MiB', async () => {
    const execution = await runCodeStep(codeStep("const line = 'y'.repeat(100000); for (let i = 0; i < 30; i++) console.log(line); return 'done'"), context());
    assert.equal(execution.status, 'COMPLETE');
    assert.ok(Buffer.byteLength(execution.stdout) <= MAX_STDOUT_BYTES + 100);
    assert.match(execution.stdout, /\[stdout truncated at 1048576 bytes\]\n$/);
  });

  it('fails with exit code 1 on a thrown error, naming it and logging it', async () => {
    const execution = await runCodeStep(codeStep("console.log('before'); throw new TypeError('no good')"), context());
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.exitCode, 1);
    assert.equal(execution.error, 'TypeError: no good');
    assert.equal(execution.stdout, 'before\nTypeError: no good\n');
  });

  it('fails with exit code 1 when something other than an Error is thrown', async () => {
    const execution = await runCodeStep(codeStep("throw 'just a string'"), context());
    assert.equal(execution.exitCode, 1);
    assert.equal(execution.error, 'Error: just a string');
  });

  it('fails with exit code 1 on a syntax error', async () => {
    const execution = await runCodeStep(codeStep('return (1 +'), context());
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.exitCode, 1);
    assert.match(execution.error ?? '', /^SyntaxError: /);
  });

  it('fails with exit code 1 on a result that has no JSON form', async () => {
    const execution = await runCodeStep(codeStep('const a = {}; a.self = a; return a'), context());
    assert.equal(execution.exitCode, 1);
    assert.match(execution.error ?? '', /^TypeError: .*circular/i);
  });

  it('times out an infinite loop with exit code 124', async () => {
    const started = Date.now();
    const execution = await runCodeStep(codeStep('while (true) {}', { timeoutMs: 200 }), context());
    assert.equal(execution.status, 'TIMEOUT');
    assert.equal(execution.exitCode, 124);
    assert.match(execution.error ?? '', /200 ms/);
    assert.ok(Date.now() - started < 3000);
  });

  it('times out an infinite loop that starts after an await', async () => {
    const execution = await runCodeStep(codeStep('await null; for (;;) {}', { timeoutMs: 200 }), context());
    assert.equal(execution.status, 'TIMEOUT');
    assert.equal(execution.exitCode, 124);
  });

  it('times out a promise that never settles', async () => {
    const started = Date.now();
    const execution = await runCodeStep(codeStep('await new Promise(() => {})', { timeoutMs: 200 }), context());
    assert.equal(execution.status, 'TIMEOUT');
    assert.equal(execution.exitCode, 124);
    assert.ok(Date.now() - started < 3000);
  });

  it('keeps the output logged before a timeout', async () => {
    const execution = await runCodeStep(codeStep("console.log('started'); while (true) {}", { timeoutMs: 200 }), context());
    assert.match(execution.stdout, /^started\n/);
  });

  it('fails with exit code 137 when the heap outgrows the memory limit', async () => {
    // a generous time limit: QuickJS interprets, and on a loaded machine filling 16 MB takes seconds
    const execution = await runCodeStep(codeStep("const a = []; while (true) a.push('x'.repeat(1000) + a.length)", { memoryLimitMb: 16, timeoutMs: 60_000 }), context());
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.exitCode, 137);
    assert.match(execution.error ?? '', /16 MB/);
  });

  it('fails with exit code 137 when array buffers outgrow the memory limit', async () => {
    const execution = await runCodeStep(codeStep('new Uint8Array(256 * 1024 * 1024)', { memoryLimitMb: 16 }), context());
    assert.equal(execution.exitCode, 137);
  });

  it('counts many small array buffers against the memory limit too', async () => {
    const execution = await runCodeStep(codeStep('const kept = []; while (true) kept.push(new Uint8Array(1024 * 1024))', { memoryLimitMb: 16, timeoutMs: 60_000 }), context());
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.exitCode, 137);
  });

  it('fails with exit code 1 on runaway recursion, and the next step still runs', async () => {
    const execution = await runCodeStep(codeStep('function down(n) { return down(n + 1) + 1 } return down(0)'), context());
    assert.equal(execution.status, 'FAILED');
    assert.equal(execution.exitCode, 1);
    assert.match(execution.error ?? '', /stack overflow/i);
    assert.equal((await runCodeStep(codeStep("return 'alive'"), context())).result, 'alive');
  });

  it('keeps the host event loop free while user code spins', async () => {
    let hostTicks = 0;
    const ticker = setInterval(() => { hostTicks += 1; }, 1);
    try {
      const execution = await runCodeStep(codeStep('while (true) {}', { timeoutMs: 1000 }), context());
      assert.equal(execution.status, 'TIMEOUT');
    } finally {
      clearInterval(ticker);
    }
    assert.ok(hostTicks > 0, 'the host ran no timer while the sandbox spun');
  });

  it('runs steps side by side', async () => {
    const executions = await Promise.all([1, 2, 3].map((n) => runCodeStep(codeStep(`let s = 0; for (let i = 0; i <= ${n}; i++) s += i; return s`), context())));
    assert.deepEqual(executions.map((execution) => execution.result), ['1', '3', '6']);
  });

  it('still runs steps after a sandbox was torn down', async () => {
    await runCodeStep(codeStep("const a = []; while (true) a.push('x'.repeat(1000) + a.length)", { memoryLimitMb: 16 }), context());
    const execution = await runCodeStep(codeStep("return 'alive'"), context());
    assert.equal(execution.result, 'alive');
  });

  it('gives the sandbox no Node, network, timers or WebAssembly', async () => {
    const execution = await runCodeStep(codeStep(
      "return [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof setInterval, typeof module, typeof Buffer, typeof WebAssembly]",
    ), context());
    assert.deepEqual(JSON.parse(execution.result), Array(8).fill('undefined'));
  });

  it('keeps the harness out of reach of user code', async () => {
    const execution = await runCodeStep(codeStep('return [typeof $0, typeof $1, typeof $2, typeof sink, typeof data]'), context());
    assert.deepEqual(JSON.parse(execution.result), Array(5).fill('undefined'));
  });
});

describe('the code sandboxes\' memory budget (FLOWGATE_WORKER_MEMORY_MB\'s share)', () => {
  it('runs no more steps at once than their memory limits fit in the budget, and all of them in the end', async () => {
    // 2 steps of 64 MB (+16 for the thread each) fit in 170 MB, a third does not
    const budget = 170;
    const gate = sandboxGate(budget);
    let most = 0;
    const watch = setInterval(() => {
      most = Math.max(most, gate.reservedMb);
    }, 5);
    try {
      const executions = await Promise.all([1, 2, 3, 4, 5].map((n) => runCodeStep(codeStep(`const t = Date.now(); while (Date.now() - t < 150) {} return ${n}`), context(), { sandboxMb: budget })));
      assert.deepEqual(executions.map((execution) => execution.result), ['1', '2', '3', '4', '5']);
    } finally {
      clearInterval(watch);
    }
    assert.equal(most, 2 * SandboxGate.cost(64));
    assert.equal(gate.reservedMb, 0);
    assert.equal(gate.waiting, 0);
  });

  it('runs a step that alone asks more than the budget when nothing else runs', async () => {
    const execution = await runCodeStep(codeStep("return 'big'", { memoryLimitMb: 512 }), context(), { sandboxMb: 100 });
    assert.equal(execution.result, 'big');
  });

  it('waits first come first served, and drops a wait that is aborted', async () => {
    const gate = new SandboxGate(100);
    const first = await gate.acquire(60);
    const order: string[] = [];
    const second = gate.acquire(60).then((release) => {
      order.push('second');
      return release;
    });
    const aborted = new AbortController();
    const third = gate.acquire(30, aborted.signal);
    // a small ask behind a waiting one waits its turn, so a large step is never starved
    const fourth = gate.acquire(10).then((release) => {
      order.push('fourth');
      return release;
    });
    aborted.abort(new Error('cancelled'));
    await assert.rejects(third, /cancelled/);
    assert.deepEqual(order, []);
    first();
    first();
    const releaseSecond = await second;
    const releaseFourth = await fourth;
    assert.deepEqual(order, ['second', 'fourth']);
    assert.equal(gate.reservedMb, 70);
    releaseSecond();
    releaseFourth();
    assert.equal(gate.reservedMb, 0);
  });
});
