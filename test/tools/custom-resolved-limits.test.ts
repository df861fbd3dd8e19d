/**
 * OpenAPI documents that are small as written but huge or deep once their `$ref`s are followed:
 * each is refused with a message, quickly, before swagger-parser or ajv recurse over it.
 */
import assert from 'node:assert/strict';
import { acyclic, generateApi, TOOL_SCHEMA_LIMITS } from '../../src/tools/custom/openapi';
import { resolvedProblem } from '../../src/documents/resolved-shape';
import { ORG_CHART_YAML, PETSTORE } from './custom-support';

/** one POST operation whose JSON body is `schema`, plus `schemas` as components */
function withBody(schema: unknown, schemas: Record<string, unknown> = {}, operations = 1): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < operations; i++) {
    paths[`/x${i}`] = { post: { operationId: `op${i}`, requestBody: { content: { 'application/json': { schema } } }, responses: { 200: { description: 'ok' } } } };
  }
  return { openapi: '3.0.3', info: { title: 't', version: '1' }, paths, components: { schemas } };
}

/** s0 → s1 → … → s(n-1), each an object whose property `a` refers to the next (`fanOut` times) */
function chain(n: number, fanOut = 1): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    const properties: Record<string, unknown> = {};
    for (let k = 0; k < fanOut; k++) properties[`a${k}`] = { $ref: `#/components/schemas/s${i + 1}` };
    schemas[`s${i}`] = i === n - 1 ? { type: 'string' } : { type: 'object', properties };
  }
  return withBody({ $ref: '#/components/schemas/s0' }, schemas);
}

const LIMITS = { maxDepth: 400, maxValues: 4 * 1024 * 1024 };

describe('resolvedProblem', () => {
  it('finds nothing to refuse in the Petstore or in recursive schemas', () => {
    assert.equal(resolvedProblem(PETSTORE, LIMITS), undefined);
    assert.equal(resolvedProblem(chain(50), LIMITS), undefined);
    const tree = withBody({ $ref: '#/components/schemas/Node' }, { Node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } } });
    assert.equal(resolvedProblem(tree, LIMITS), undefined);
  });

  it('bounds the depth of chains and rings of $refs, and of pointers that pass through $refs', () => {
    assert.equal(resolvedProblem(chain(10_000), LIMITS), 'depth');
    const ring: Record<string, unknown> = {};
    for (let i = 0; i < 500; i++) ring[`r${i}`] = { type: 'object', properties: { next: { $ref: `#/components/schemas/r${(i + 1) % 500}` } } };
    assert.equal(resolvedProblem(withBody({ $ref: '#/components/schemas/r0' }, ring), LIMITS), 'depth', 'a path through a ring visits every member once');
    const hops: Record<string, unknown> = {};
    for (let i = 0; i < 1000; i++) hops[`h${i}`] = { $ref: `#/components/schemas/h${i + 1}` };
    hops.h1000 = { type: 'string' };
    assert.equal(resolvedProblem(withBody({ $ref: '#/components/schemas/h0/x' }, hops), LIMITS), 'depth');
    const loop = withBody({ $ref: '#/components/schemas/a/b' }, { a: { $ref: '#/components/schemas/c' }, c: { $ref: '#/components/schemas/a' } });
    assert.equal(resolvedProblem(loop, LIMITS), 'depth', 'a pointer through $refs that point at each other');
  });

  it('counts the validated tree with repetition: twenty schemas each referring twice to the next are millions of values', () => {
    assert.equal(resolvedProblem(chain(10, 2), LIMITS), undefined);
    assert.equal(resolvedProblem(chain(40, 2), LIMITS), 'size');
    // a cycle stays a $ref in the validated tree, however often it is referred to
    const cyclic = chain(40, 2);
    (cyclic.components as { schemas: Record<string, unknown> }).schemas.s39 = { type: 'object', properties: { back: { $ref: '#/components/schemas/s0' } } };
    assert.equal(resolvedProblem(cyclic, { maxDepth: 1000, maxValues: LIMITS.maxValues }), undefined);
  });
});

describe('generated tools once $refs are resolved', () => {
  it('refuses a chain of 10,000 schemas with a message, not a stack overflow', async () => {
    await assert.rejects(generateApi(chain(10_000)), /nests deeper than 400 levels once its \$refs are followed/);
    await assert.rejects(generateApi(JSON.stringify(chain(600))), /nests deeper than 400 levels once its \$refs are followed/);
  });

  it('refuses in milliseconds the 3 KB document whose $refs fan out into millions of values (it took a minute)', async () => {
    // no timing assertion (the machine is shared): before, the first took a minute and the mocha timeout catches that
    await assert.rejects(generateApi(chain(24, 2)), /grows past 4194304 values once its \$refs are resolved/);
    await assert.rejects(generateApi(chain(16, 2)), /input schemas hold more than 100000 values/);
  });

  it('bounds the tools\' schemas: their total size across operations, and their depth', async () => {
    const big: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) big[`p${i}`] = { type: 'string', maxLength: 20, description: `field ${i}` };
    const shared = { Big: { type: 'object', properties: big } };
    assert.equal((await generateApi(withBody({ $ref: '#/components/schemas/Big' }, shared, 20))).operations.length, 20);
    await assert.rejects(generateApi(withBody({ $ref: '#/components/schemas/Big' }, shared, 300)), /input schemas hold more than 100000 values/);
    // 70 schemas, each two levels deeper than the last once resolved: within the document's bound, past the tools'
    await assert.rejects(generateApi(chain(70)), /a tool's input schema nests deeper than 128 levels once \$refs are resolved/);
    assert.equal((await generateApi(chain(60))).operations.length, 1);
  });

  it('copies recursive schemas as before, and takes any parameter name as a name', async () => {
    const api = await generateApi(ORG_CHART_YAML);
    assert.match(JSON.stringify(api.operations.find((o) => o.toolName === 'replaceTeam')?.inputSchema), /recursive: the same shape as its enclosing/);
    const odd = await generateApi({
      openapi: '3.0.3', info: { title: 't', version: '1' },
      paths: { '/x': { get: { operationId: 'odd', parameters: ['__proto__', 'constructor', 'toString'].map((name) => ({ name, in: 'query', schema: { type: 'string' } })), responses: { 200: { description: 'ok' } } } } },
    });
    const schema = odd.operations[0]!.inputSchema;
    assert.deepEqual(Object.keys(schema.properties), ['__proto__', 'constructor', 'toString']);
    assert.equal(Object.getPrototypeOf(schema.properties), Object.prototype);
    assert.deepEqual(odd.operations[0]!.parameters.map((p) => p.argument), ['__proto__', 'constructor', 'toString']);
    const budget = { values: 2 };
    assert.throws(() => acyclic({ a: { b: 1 } }, budget), new RegExp(`more than ${TOOL_SCHEMA_LIMITS.maxValues} values`));
  });
});
