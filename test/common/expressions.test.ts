import assert from 'node:assert/strict';
import { expressionNesting, expressionProblem, MAX_EXPRESSION_NESTING } from '../../src/common/flow-validation';
import { truthy } from '../../src/common/expressions';

describe('truthy', () => {
  it('is JSONata\'s truthiness', () => {
    for (const falsy of [undefined, null, false, 0, '', [], {}, [0, '', [false, []]], () => 1]) assert.equal(truthy(falsy), false, String(JSON.stringify(falsy)));
    for (const value of [true, 1, 'a', { a: 0 }, [0, [0, [1]]], [[], {}, 'x']]) assert.equal(truthy(value), true, JSON.stringify(value));
  });

  it('judges a value nested 100,000 deep (a step\'s JSON) without a stack overflow', () => {
    const deep = (leaf: string): unknown => JSON.parse(`${'['.repeat(100_000)}${leaf}${']'.repeat(100_000)}`);
    assert.equal(truthy(deep('0')), false);
    assert.equal(truthy(deep('1')), true);
  });
});

describe('expression nesting', () => {
  it('counts brackets, and conditionals and bindings until their bracket or list item ends', () => {
    assert.equal(expressionNesting('inputs.n > 1'), 0);
    assert.equal(expressionNesting('(a ? (b ? c : d) : e)'), 4);
    assert.equal(expressionNesting('[a ? 1 : 2, b ? 3 : 4]'), 2, 'a list item ends the conditional');
    assert.equal(expressionNesting('$match(x, /(a|(b))/)'), 3);
    assert.equal(expressionNesting('"((((" & x'), 4, 'inside a string brackets count, conservatively');
    assert.equal(expressionNesting(`${'(")"'.repeat(10)}1${')'.repeat(10)}`), 10, 'a closing bracket in a string hides nothing');
  });

  it('refuses past the limits before jsonata parses, and past what a run evaluates once parsed', () => {
    const wrapped = (n: number): string => `${'('.repeat(n)}inputs.n > 1${')'.repeat(n)}`;
    assert.equal(expressionProblem(wrapped(MAX_EXPRESSION_NESTING)), undefined);
    assert.match(expressionProblem(wrapped(MAX_EXPRESSION_NESTING + 1)) ?? '', /nests deeper than 64 levels/);
    assert.match(expressionProblem(wrapped(50_000)) ?? '', /nests deeper than 64 levels/);
    assert.equal(expressionProblem(`inputs.n${' + 1'.repeat(150)} > 2`), undefined);
    assert.match(expressionProblem(`1${'+1'.repeat(4_999)}`) ?? '', /nests deeper than the 200 levels a run evaluates/);
    assert.match(expressionProblem('(') ?? '', /does not parse as JSONata/);
  });
});
