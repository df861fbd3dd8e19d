/**
 * The console editor's placing of validation problems (src/console/definition-text.ts) and its
 * version diff (src/console/line-diff.ts), without a gateway.
 */
import assert from 'node:assert/strict';
import { lineOf, locatePaths, parseJsonText, pathText } from '../../src/console/definition-text';
import { lineDiff } from '../../src/console/line-diff';

describe('console definition text and line diff', () => {
  it('writes paths as JSON does', () => {
    assert.equal(pathText(['steps', 2, 'url']), 'steps[2].url');
    assert.equal(pathText(['inputSchema', 'properties', 'a b']), 'inputSchema.properties["a b"]');
    assert.equal(pathText([]), '(definition)');
  });

  it('finds the line of each path, and of the nearest ancestor of a missing one', () => {
    const text = '{\n  "name": "x",\n  "steps": [\n    { "name": "a", "type": "template" },\n    {\n      "name": "b",\n      "url": 42\n    }\n  ],\n  "a\\"b": {"c": [1, {"d": true}]}\n}';
    JSON.parse(text);
    const lines = locatePaths(text);
    assert.equal(lineOf(lines, ['name']), 2);
    assert.equal(lineOf(lines, ['steps']), 3);
    assert.equal(lineOf(lines, ['steps', 0]), 4);
    assert.equal(lineOf(lines, ['steps', 0, 'template']), 4);
    assert.equal(lineOf(lines, ['steps', 1]), 5);
    assert.equal(lineOf(lines, ['steps', 1, 'url']), 7);
    assert.equal(lineOf(lines, ['steps', 1, 'missing']), 5);
    assert.equal(lineOf(lines, ['a"b', 'c', 1, 'd']), 10);
    assert.equal(lineOf(lines, ['nothing', 'here']), 1);
  });

  it('names the line of a syntax error', () => {
    const parsed = parseJsonText('{\n  "a": 1,\n  "b": 2\n  "c": 3\n}');
    assert.equal(parsed.ok, false);
    if (!parsed.ok) assert.equal(parsed.line, 4);
    // a message without a position: the line is found by reading the text
    const unclosed = parseJsonText('{\n  "name": "x",\n  "steps": [\n}');
    assert.equal(unclosed.ok ? 0 : unclosed.line, 4);
    const trailing = parseJsonText('{\n  "a": [1, 2,]\n}');
    assert.equal(trailing.ok ? 0 : trailing.line, 2);
  });

  it('diffs lines: the common part kept, changes as removed and added', () => {
    const diff = lineDiff('a\nb\nc\nd', 'a\nc\nx\nd');
    assert.deepEqual(diff.map((l) => `${l.kind === 'same' ? ' ' : l.kind === 'added' ? '+' : '-'}${l.text}`), [' a', '-b', ' c', '+x', ' d']);
    assert.deepEqual(diff.find((l) => l.kind === 'added'), { kind: 'added', text: 'x', newLine: 3 });
    assert.deepEqual(diff.find((l) => l.kind === 'removed'), { kind: 'removed', text: 'b', oldLine: 2 });
    assert.ok(lineDiff('same\ntext', 'same\ntext').every((l) => l.kind === 'same'));
    assert.deepEqual(lineDiff('', 'new').map((l) => l.kind), ['removed', 'added']);
  });
});
