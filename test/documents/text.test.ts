import assert from 'node:assert/strict';
import { DocumentTextError, parseDocumentText } from '../../src/documents/text';
import { jsonShapeProblem } from '../../src/documents/json-shape';
import { DEEP_TEXT_FORMS, INDENTED_FORMS } from '../support/deep-text';

const LIMITS = { maxDepth: 64, maxValues: 100_000, maxAliasCount: 100 };

describe('parseDocumentText', () => {
  it('reads JSON and YAML nested exactly as deep as the limit, in every textual form', () => {
    for (const [form, text] of Object.entries(DEEP_TEXT_FORMS)) {
      if (form.startsWith('unclosed')) continue;
      assert.equal(jsonShapeProblem(parseDocumentText(text(LIMITS.maxDepth - 1), LIMITS), LIMITS), undefined, form);
    }
  });

  it('refuses one level more, and 50,000 more, in every textual form without a stack overflow', () => {
    for (const [form, text] of Object.entries(DEEP_TEXT_FORMS)) {
      for (const levels of [LIMITS.maxDepth, 5_000, INDENTED_FORMS.has(form) ? 2_000 : 50_000]) {
        // an unclosed text one level too deep is as much a syntax error as a deep one
        const expected = form.startsWith('unclosed') && levels === LIMITS.maxDepth ? /neither JSON nor YAML/ : /nests deeper than 64 levels/;
        assert.throws(() => parseDocumentText(text(levels), LIMITS),
          (error: unknown) => error instanceof DocumentTextError && expected.test(error.message), `${form}, ${levels} levels`);
      }
    }
  });

  it('counts what YAML aliases repeat: an alias inside its own anchor, a chain of aliases, a big anchor aliased often', () => {
    assert.throws(() => parseDocumentText('a: &x [ *x ]\n', LIMITS), /nests deeper than 64 levels/);
    assert.throws(() => parseDocumentText('a: &x { b: *x }\n', LIMITS), /nests deeper than 64 levels/);
    const chain = Array.from({ length: 70 }, (_, i) => (i === 0 ? 'l0: &l0 [1]' : `l${i}: &l${i} [*l${i - 1}]`)).join('\n');
    assert.throws(() => parseDocumentText(chain, { ...LIMITS, maxAliasCount: -1 }), /nests deeper than 64 levels/);
    assert.throws(() => parseDocumentText(chain, LIMITS), /Excessive alias count/, 'the yaml package\'s own guard still applies');
    const big = `a: &a [${Array(5_000).fill('1').join(',')}]\nb: [${Array(30).fill('*a').join(',')}]\n`;
    assert.throws(() => parseDocumentText(big, LIMITS), /holds more than 100000 values/);
    assert.deepEqual(parseDocumentText('a: &a [1, 2]\nb: *a\n', LIMITS), { a: [1, 2], b: [1, 2] });
    // long strings aliased often: few values, a great deal of JSON (2 MB of YAML was 190 MB)
    const strings = Array.from({ length: 20 }, (_, i) => `s${i}: &s${i} ${'x'.repeat(5_000)}`).join('\n');
    const uses = Array.from({ length: 20 }, (_, i) => `  - [${Array(99).fill(`*s${i}`).join(',')}]`).join('\n');
    assert.throws(() => parseDocumentText(`${strings}\nb:\n${uses}\n`, { ...LIMITS, maxChars: 1_000_000 }), /more than 100000 values or 1000000 characters of JSON/);
    assert.equal(jsonShapeProblem(parseDocumentText(`${strings}\nb:\n${uses}\n`, LIMITS), LIMITS), undefined, 'without a bound on characters it passes');
  });

  it('says where YAML goes wrong, and refuses several documents in one text', () => {
    assert.throws(() => parseDocumentText('just: [text', LIMITS), /neither JSON nor YAML: .*\(line 1, column \d+\)/);
    assert.throws(() => parseDocumentText('a: 1\n---\nb: 2\n', LIMITS), /more than one YAML document/);
    assert.deepEqual(parseDocumentText('{"a": [1, {"b": null}]}', LIMITS), { a: [1, { b: null }] });
    assert.deepEqual(parseDocumentText('a:\n  - 1\n  - b: x\n', LIMITS), { a: [1, { b: 'x' }] });
    assert.equal(parseDocumentText('', LIMITS), null);
  });
});

describe('jsonShapeProblem', () => {
  it('judges depth and size with repetition, stopping at the first excess', () => {
    assert.equal(jsonShapeProblem(1, { maxDepth: 0, maxValues: 1 }), undefined);
    assert.equal(jsonShapeProblem([1], { maxDepth: 1, maxValues: 1 }), 'size');
    assert.equal(jsonShapeProblem([[1]], { maxDepth: 1, maxValues: 10 }), 'depth');
    const shared = [1, 2, 3];
    assert.equal(jsonShapeProblem([shared, shared, shared], { maxDepth: 2, maxValues: 12 }), 'size');
    assert.equal(jsonShapeProblem([shared, shared, shared], { maxDepth: 2, maxValues: 13 }), undefined);
    const cycle: unknown[] = [];
    cycle.push(cycle);
    assert.equal(jsonShapeProblem(cycle, { maxDepth: 64, maxValues: 1_000_000 }), 'depth');
    assert.equal(jsonShapeProblem(new Array(2_000_000).fill(0), { maxDepth: 64, maxValues: 1_000_000 }), 'size', 'a wide array is refused before its children are stacked');
  });
});
