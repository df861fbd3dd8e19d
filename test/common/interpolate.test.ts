import assert from 'node:assert/strict';
import { buildContext, interpolate, interpolateDeep, type InterpolationContext } from '../../src/common/interpolate';
import type { StepOutcome } from '../../src/common/run-types';

function outcome(stepIndex: number, result: string): StepOutcome {
  const file = (name: string) => ({ key: `runs/o/r/steps/${stepIndex}/${name}`, mimeType: 'text/plain; charset=utf-8', size: result.length });
  return {
    stepIndex, status: 'COMPLETE', resultType: 'plaintext', result, truncated: false, exitCode: 0, duration: 1,
    files: { 'output.txt': file('output.txt'), 'stdout.txt': file('stdout.txt') },
  };
}

function context(inputs: Record<string, unknown> | '' = { name: 'Ada', tags: ['x', 'y'], nested: { n: 3, list: [{ v: 'deep' }] }, count: 7, flag: false }): InterpolationContext {
  return buildContext({
    runId: `run-${Math.random().toString(36).slice(2)}`,
    automationId: 'wf_1',
    automationVersion: 4,
    triggerId: 'trg_1',
    started: '2024-05-01T12:00:00.000Z',
    inputs,
  }, [outcome(1, 'hello'), outcome(2, '{"n":3,"items":["a","b"]}')]);
}

describe('interpolate', () => {
  it('renders inputs by dotted path', () => {
    assert.equal(interpolate('Hi {{inputs.name}}, {{ inputs.nested.n }}!', context()), 'Hi Ada, 3!');
  });

  it('renders step results, parsed JSON and exit codes', () => {
    const ctx = context();
    assert.equal(interpolate('{{steps.1.result}}/{{steps.2.json.n}}/{{steps.1.exitCode}}', ctx), 'hello/3/0');
  });

  it('renders run details', () => {
    const ctx = context();
    assert.equal(interpolate('{{run.id}} {{run.automationId}} v{{run.automationVersion}} {{run.triggerId}} {{run.started}}', ctx),
      `${ctx.run.id} wf_1 v4 trg_1 2024-05-01T12:00:00.000Z`);
  });

  it('reads bracket indexes in arrays and step numbers', () => {
    const ctx = context();
    assert.equal(interpolate('{{inputs.tags[1]}} {{steps[2].json.items[0]}} {{inputs.nested.list[0].v}}', ctx), 'y a deep');
  });

  it('renders a missing path as an empty string', () => {
    const ctx = context();
    assert.equal(interpolate('[{{inputs.missing}}][{{inputs.nested.missing.deeper}}][{{steps.9.result}}][{{steps.1.json.n}}][{{nope}}]', ctx), '[][][][][]');
  });

  it('renders paths into empty inputs as an empty string', () => {
    assert.equal(interpolate('[{{inputs.name}}][{{inputs}}]', context('')), '[][]');
  });

  it('renders objects and arrays as JSON, numbers and booleans as text', () => {
    const ctx = context();
    assert.equal(interpolate('{{inputs.nested}}', ctx), '{"n":3,"list":[{"v":"deep"}]}');
    assert.equal(interpolate('{{inputs.tags}}', ctx), '["x","y"]');
    assert.equal(interpolate('{{inputs.count}} {{inputs.flag}}', ctx), '7 false');
  });

  it('leaves text without placeholders untouched', () => {
    assert.equal(interpolate('no {placeholders} here {{ }}', context()), 'no {placeholders} here {{ }}');
  });

  it('does not reach prototypes: __proto__, constructor and inherited members render empty', () => {
    const ctx = context();
    for (const template of ['{{inputs.__proto__}}', '{{constructor}}', '{{inputs.constructor}}', '{{inputs.constructor.name}}',
      '{{inputs.toString}}', '{{inputs.tags.map}}', '{{__proto__.polluted}}', '{{inputs.hasOwnProperty}}', '{{steps.__proto__}}']) {
      assert.equal(interpolate(template, ctx), '', template);
    }
  });
});

describe('interpolateDeep', () => {
  it('keeps the type of a value when the string is exactly one placeholder', () => {
    const ctx = context();
    assert.deepEqual(interpolateDeep({
      n: '{{steps.2.json.n}}', tags: '{{ inputs.tags }}', nested: '{{inputs.nested}}', flag: '{{inputs.flag}}', name: '{{inputs.name}}',
    }, ctx), { n: 3, tags: ['x', 'y'], nested: { n: 3, list: [{ v: 'deep' }] }, flag: false, name: 'Ada' });
  });

  it('renders a string with text around a placeholder as a string', () => {
    assert.deepEqual(interpolateDeep({ s: 'n={{steps.2.json.n}}', list: ['{{inputs.name}}!', 5, null, true] }, context()),
      { s: 'n=3', list: ['Ada!', 5, null, true] });
  });

  it('turns a whole placeholder with a missing path into null', () => {
    assert.deepEqual(interpolateDeep({ a: '{{inputs.missing}}' }, context()), { a: null });
  });

  it('does not reach prototypes through a whole placeholder', () => {
    const ctx = context();
    assert.deepEqual(interpolateDeep({ a: '{{inputs.__proto__}}', b: '{{constructor}}', c: '{{inputs.constructor}}' }, ctx),
      { a: null, b: null, c: null });
  });

  it('does not change the value it was given', () => {
    const body = { greeting: 'hi {{inputs.name}}', list: ['{{inputs.count}}'] };
    const copy = structuredClone(body);
    interpolateDeep(body, context());
    assert.deepEqual(body, copy);
  });
});
