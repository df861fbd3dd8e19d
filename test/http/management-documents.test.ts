/**
 * Every management-API input that is a document or a text flowgate parses, sent to a gateway in a
 * process of its own over real HTTP (a crash is a dropped socket and an exited child): workflow
 * definitions (every step kind, expressions, input schemas), agents' output schemas (object or JSON text), and
 * OpenAPI documents (JSON or YAML text, or an object). First the hostile cases one by one, then a
 * seeded fast-check fuzz of all of them, deep nesting in every textual form included: never a 5xx,
 * never a dropped socket, and the process serves ordinary requests afterwards.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import YAML from 'yaml';
import { DEEP_TEXT_FORMS, INDENTED_FORMS } from '../support/deep-text';
import { startManagementProcess, type ManagementProcess } from '../support/management-process';
import { PETSTORE } from '../tools/custom-support';

/** fixed, so that a failure is reproduced by running again; FUZZ_SEED and FUZZ_RUNS explore further */
const SEED = Number(process.env.FUZZ_SEED ?? 28);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

const nested = (open: string, inner: string, close: string, n: number): string => `${open.repeat(n)}${inner}${close.repeat(n)}`;

/** `$defs` d0 → d1 → … each an object whose property refers to the next */
function refChain(n: number): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) defs[`d${i}`] = i === n - 1 ? { type: 'string' } : { type: 'object', properties: { a: { $ref: `#/$defs/d${i + 1}` } } };
  return { $ref: '#/$defs/d0', $defs: defs };
}

function workflow(step: Record<string, unknown> = {}, inputSchema?: unknown): Record<string, unknown> {
  return { name: 'fuzzed', steps: [{ name: 'Say', type: 'template', template: 'hi', ...step }], ...(inputSchema === undefined ? {} : { inputSchema }) };
}

describe('management API document inputs (a separate gateway process)', function () {
  this.timeout(300_000);
  let gw: ManagementProcess;
  let pcid: string;

  before(async () => {
    gw = await startManagementProcess();
    const created = await gw.call('POST', '/api/v1/connections', { application: 'custom', name: 'api', credentials: { baseUrl: 'http://127.0.0.1:9/api', auth: { kind: 'api_key', name: 'k', value: 'v' } } });
    assert.equal(created.status, 201, created.text);
    pcid = String(created.json?.PCID);
  });
  after(async () => {
    await gw?.replica.stop();
  });

  const refused = async (method: string, pathname: string, body: unknown, message: RegExp): Promise<void> => {
    const answer = await gw.call(method, pathname, body);
    assert.equal(answer.status, 400, `${pathname} ${JSON.stringify(body).slice(0, 200)}: ${answer.text.slice(0, 500)}`);
    assert.match(String(answer.json?.message), message);
  };

  it('refuses workflow expressions nested past what jsonata\'s parser and a run take, with 400 (a chain of 5,000 `+` was a 500)', async () => {
    const cases: [string, RegExp][] = [
      [`1${'+1'.repeat(4_999)}`, /nests deeper than the 200 levels a run evaluates/],
      [nested('(', '1', ')', 4_000), /nests deeper than 64 levels/],
      [`${'true ? '.repeat(1_200)}1${' : 2'.repeat(1_200)}`, /nests deeper than 64 levels/],
      [`$x := ${'$y := '.repeat(100)}1`, /nests deeper than 64 levels/],
      // V8 compiles a regular expression recursively when the run evaluates it: the worker aborted
      [`$match("a", /${nested('(a|', 'b', ')', 2_000)}/)`, /nests deeper than 64 levels/],
      // closing brackets inside strings do not hide the real nesting
      [`${'(")"'.repeat(100)}1${')'.repeat(100)}`, /nests deeper than 64 levels/],
    ];
    for (const [expression, message] of cases) {
      await refused('POST', '/api/v1/workflows', workflow({ if: expression }), message);
      await refused('POST', '/api/v1/workflows', workflow({ type: 'forEach', items: expression, steps: [{ name: 'Each', type: 'template', template: 'x' }], template: undefined }), message);
    }
    const fine = await gw.call('POST', '/api/v1/workflows', workflow({ if: '$match(inputs.a, /^(a|b)+$/) and (inputs.n > 1 ? true : false)' }));
    assert.equal(fine.status, 201, fine.text);
    assert.equal(gw.exited(), undefined);
  });

  it('refuses an inputSchema whose $refs chain deeper than ajv\'s compiler follows, with a message instead of a caught stack overflow', async () => {
    await refused('POST', '/api/v1/workflows', workflow({}, refChain(300)), /inputSchema: not a usable JSON Schema: it nests deeper than 128 levels once its \$refs are followed/);
    const fine = await gw.call('POST', '/api/v1/workflows', workflow({}, refChain(20)));
    assert.equal(fine.status, 201, fine.text);
  });

  it('refuses an agent\'s outputSchema text nested past 64 levels, a pattern RE2 cannot run, and $refs chained too deep (all were saved, and the pattern aborted the worker)', async () => {
    const agent = (outputSchema: unknown): Record<string, unknown> => ({ name: 'structured', instructions: 'Answer in JSON.', outputSchema });
    const deepText = nested('{"type":"object","properties":{"a":', '{}', '}}', 40);
    await refused('POST', '/api/v1/agents', agent(deepText), /outputSchema: nests deeper than 64 levels/);
    await refused('POST', '/api/v1/agents', agent(nested('[', '1', ']', 50_000).slice(0, 100_000)), /outputSchema: must be a JSON Schema object/);
    await refused('POST', '/api/v1/agents', agent({ type: 'string', pattern: nested('(a|', 'b', ')', 7_000) }), /outputSchema is not a usable JSON Schema: .*nests too deeply/);
    await refused('POST', '/api/v1/agents', agent({ type: 'string', pattern: '^(?!x)' }), /outputSchema is not a usable JSON Schema/);
    await refused('POST', '/api/v1/agents', agent(refChain(300)), /nests deeper than 128 levels once its \$refs are followed/);
    const fine = await gw.call('POST', '/api/v1/agents', agent(JSON.stringify({ type: 'object', properties: { n: { type: 'string', pattern: '^[a-z]+$' } } })));
    assert.equal(fine.status, 201, fine.text);
    assert.equal(gw.exited(), undefined);
  });

  describe('seeded fuzz (fast-check)', () => {
    const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
    const json = fc.jsonValue({ maxDepth: 3 });
    const deepLevels = fc.oneof(fc.integer({ min: 55, max: 70 }), fc.integer({ min: 1_000, max: 50_000 }));
    /** deep nesting in every textual form (indented forms capped where their text passes 2 MiB) */
    const deepText = fc.record({ form: fc.constantFrom(...Object.keys(DEEP_TEXT_FORMS)), levels: deepLevels })
      .map(({ form, levels }) => DEEP_TEXT_FORMS[form]!(INDENTED_FORMS.has(form) ? Math.min(levels, 1_000) : levels));
    /** YAML-significant characters in any order */
    const yamlSoup = fc.array(fc.constantFrom(...'[]{}-:?,&*!|>\'"#% \n\t@`aZ09.<<'.split(''), '*a', '&a ', '- ', ': ', '\n  ', '!!map', '---\n'), { maxLength: 120 }).map((parts) => parts.join(''));
    const pointer = fc.oneof(
      fc.constantFrom('#', '#/', '#/paths', '#/components/schemas/A', '#/components/schemas/B', '#/components/schemas/A/properties/next', '#/components/schemas/%41', '#/info', 'other.yaml#/A', './#/components/schemas/A', '#/components/schemas/A~1B', ''),
      fc.string({ maxLength: 20 }),
    );
    const anyValue = fc.oneof(json, scalar, pointer.map(($ref) => ({ $ref })), deepLevels.map((n) => JSON.parse(nested('[', '1', ']', Math.min(n, 60))) as unknown));
    /** a few schemas referring to each other at random (chains, rings, fan-out) */
    const refGraph = fc.array(fc.array(fc.nat(30), { maxLength: 3 }), { minLength: 1, maxLength: 30 }).map((graph) => {
      const schemas: Record<string, unknown> = {};
      graph.forEach((refs, i) => {
        schemas[`S${i}`] = { type: 'object', properties: Object.fromEntries(refs.map((to, k) => [`p${k}`, { $ref: `#/components/schemas/S${to % graph.length}` }])) };
      });
      return schemas;
    });
    const PATHS = ['openapi', 'info', 'info.title', 'info.description', 'info.version', 'paths', 'paths./x', 'paths./x.get', 'paths./x.get.parameters',
      'paths./x.get.parameters.0', 'paths./x.get.parameters.0.name', 'paths./x.get.parameters.0.schema', 'paths./x.get.parameters.0.schema.pattern', 'paths./x.get.operationId',
      'paths./x.post.requestBody', 'paths./x.post.requestBody.content', 'paths./x.post.requestBody.content.application/json.schema', 'components', 'components.schemas',
      'components.schemas.A', 'components.schemas.A.properties.next', 'components.schemas.B', 'x-extra'];
    const openApiObject = fc.record({
      // half the documents are valid (so that resolving, generating and compiling run too), half are not
      mutations: fc.oneof(fc.constant([]), fc.array(fc.tuple(fc.constantFrom(...PATHS), anyValue), { minLength: 1, maxLength: 3 })),
      graph: fc.option(refGraph, { nil: undefined }),
      version: fc.constantFrom('3.0.3', '3.1.0'),
    }).map(({ mutations, graph, version }) => {
      const document: Record<string, unknown> = {
        openapi: version, info: { title: 'fuzzed', version: '1' },
        paths: { '/x': {
          get: { operationId: 'getX', parameters: [{ name: 'q', in: 'query', schema: { type: 'string', pattern: '^[a-z]*$' } }], responses: { 200: { description: 'ok' } } },
          post: { operationId: 'postX', requestBody: { content: { 'application/json': { schema: { $ref: graph ? '#/components/schemas/S0' : '#/components/schemas/A' } } } }, responses: { 200: { description: 'ok' } } },
        } },
        components: { schemas: graph ?? { A: { type: 'object', properties: { next: { $ref: '#/components/schemas/B' } } }, B: { type: 'string' } } },
      };
      for (const [path, value] of mutations) {
        const keys = path.split('.');
        let node: Record<string, unknown> = document;
        for (const key of keys.slice(0, -1)) {
          const next = node[key];
          if (next === null || typeof next !== 'object') node[key] = {};
          node = node[key] as Record<string, unknown>;
        }
        node[keys[keys.length - 1]!] = value;
      }
      return document;
    });
    const openApiDocument = fc.oneof(
      { arbitrary: openApiObject, weight: 3 },
      { arbitrary: openApiObject.map((d) => JSON.stringify(d)), weight: 3 },
      { arbitrary: openApiObject.map((d) => YAML.stringify(d)), weight: 3 },
      fc.tuple(openApiObject, deepText).map(([d, deep]) => `${YAML.stringify(d)}x-deep:\n  ${deep.replace(/\n/g, '\n  ')}\n`),
      fc.tuple(openApiObject, deepText).map(([d, deep]) => `${JSON.stringify(d).slice(0, -1)},"x-deep":${deep.startsWith('{') ? deep : JSON.stringify(deep)}}`),
      deepText,
      yamlSoup.map((soup) => `openapi: 3.0.3\ninfo: {title: t, version: "1"}\npaths: {}\nx: ${soup}`),
      yamlSoup,
      fc.string({ maxLength: 200 }),
    );

    /** JSONata-looking text: tokens that nest, quote, comment and open regular expressions, in any order */
    const expression = fc.oneof(
      fc.array(fc.constantFrom('(', ')', '[', ']', '{', '}', '?', ':', ':=', ';', ',', '"', '\'', '`', '/', '\\', '/*', '*/', '$x', 'steps.1.json', 'inputs.a',
        '1', '+', ' and ', '$match(inputs.a, ', '/(a|b)/', '.', '*', '**', '~>', '??', '?:', '$string(', ' ', 'local.`1`', '$step("1")', '/i'), { minLength: 1, maxLength: 60 }).map((t) => t.join('')),
      fc.record({ open: fc.constantFrom('(', '[', '{"a":', '$string(', 'true ? ', '$x := ', '/', '(a|'), levels: fc.integer({ min: 1, max: 5_000 }) })
        .map(({ open, levels }) => `${open.repeat(levels)}1`.slice(0, 10_000)),
      fc.integer({ min: 1, max: 4_999 }).map((n) => `1${'+1'.repeat(n)}`),
      // well-formed, around the limits: brackets 0 to 70 deep, chains of 150 to 250 operators
      fc.record({ pair: fc.constantFrom('()', '[]', '$string()', '{"a":}'), levels: fc.integer({ min: 0, max: 70 }) })
        .map(({ pair, levels }) => nested(pair.slice(0, -1), 'inputs.n > 1', pair.slice(-1), levels)),
      fc.integer({ min: 150, max: 250 }).map((n) => `inputs.n${' + 1'.repeat(n)} > 2`),
    );

    /** JSON-Schema-looking values: the vocabulary with random values, patterns that nest, $refs anywhere */
    const patternText = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('^(?!x)', '(a+)+$', '[', '\\', '(?<n>a)\\k<n>'),
      fc.integer({ min: 1, max: 7_000 }).map((n) => nested('(a|', 'b', ')', n)));
    const { schema } = fc.letrec((tie) => ({
      schema: fc.oneof({ depthSize: 'small', withCrossShrink: true },
        fc.record({
          type: fc.option(fc.oneof(fc.constantFrom('object', 'string', 'array', 'integer', 'null', 'foo'), json), { nil: undefined }),
          properties: fc.option(fc.dictionary(fc.string({ maxLength: 6 }), tie('schema'), { maxKeys: 3 }), { nil: undefined }),
          items: fc.option(tie('schema'), { nil: undefined }),
          pattern: fc.option(patternText, { nil: undefined }),
          $ref: fc.option(pointer, { nil: undefined }),
          required: fc.option(fc.oneof(fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }), json), { nil: undefined }),
          anyOf: fc.option(fc.array(tie('schema'), { maxLength: 2 }), { nil: undefined }),
        }, { requiredKeys: [] }),
        fc.integer({ min: 1, max: 400 }).map(refChain),
        json,
      ),
    }));

    /** workflow definitions: every step kind (and some that are not), fields with valid and random values, nested lists */
    const STEP_TYPES = ['template', 'code', 'http', 'tool', 'delay', 'waitUntil', 'approval', 'trigger', 'agent', 'branch', 'forEach', 'parallel', 'nope'];
    const LEAF = [{ name: 'Leaf', type: 'template', template: 'x' }];
    /** nested steps carry short expressions: the long ones come once per definition, at the top */
    const shortExpression = fc.array(fc.constantFrom('(', ')', '?', ':', '"', '/', 'inputs.a', '1', '+', ' and ', 'item', 'index', '$x := '), { minLength: 1, maxLength: 12 }).map((t) => t.join(''));
    const { steps } = fc.letrec((tie) => ({
      step: fc.record({
        name: fc.oneof(fc.constant('Step'), fc.string({ maxLength: 8 })),
        type: fc.constantFrom(...STEP_TYPES),
        if: fc.option(shortExpression, { nil: undefined }),
        template: fc.option(fc.oneof(fc.constant('{{inputs.a}} and {{steps.1.json.x}}'), fc.string({ maxLength: 30 })), { nil: undefined }),
        source: fc.option(fc.oneof(fc.constant('return inputs.a;'), fc.string({ maxLength: 30 }), fc.integer({ min: 1, max: 5_000 }).map((n) => `return ${nested('(', '1', ')', n)};`)), { nil: undefined }),
        url: fc.option(fc.oneof(fc.constant('https://example.com/{{inputs.a}}'), fc.string({ maxLength: 20 })), { nil: undefined }),
        body: fc.option(fc.oneof(json, fc.string({ maxLength: 20 })), { nil: undefined }),
        arguments: fc.option(json, { nil: undefined }),
        items: fc.option(shortExpression, { nil: undefined }),
        steps: fc.option(tie('steps'), { nil: undefined }),
        cases: fc.option(fc.array(fc.record({ if: shortExpression, steps: tie('steps') }), { maxLength: 2 }), { nil: undefined }),
        branches: fc.option(fc.array(fc.record({ steps: tie('steps') }), { maxLength: 2 }), { nil: undefined }),
        retry: fc.option(fc.oneof(json, fc.record({ maxAttempts: fc.integer({ min: -1, max: 20 }), initialInterval: fc.constantFrom('1s', 'x') })), { nil: undefined }),
        extra: fc.option(json, { nil: undefined }),
      }, { requiredKeys: ['name', 'type'] }),
      // past four levels of lists only the leaf is drawn (step lists themselves nest at most 3 deep)
      steps: fc.oneof({ maxDepth: 4, depthIdentifier: 'steps' }, fc.constant(LEAF), fc.array(tie('step'), { minLength: 1, maxLength: 3 }), json),
    }));
    const definition = fc.record({
      name: fc.oneof(fc.constant('fuzzed'), fc.string({ maxLength: 10 }), json),
      steps: fc.tuple(steps, fc.option(expression, { nil: undefined })).map(([list, top]) => (Array.isArray(list) && top !== undefined ? [{ ...(list[0] as object), if: top }, ...list.slice(1)] : list)),
      inputSchema: fc.option(schema, { nil: undefined }),
      timeoutSeconds: fc.option(fc.oneof(fc.integer(), json), { nil: undefined }),
    }, { requiredKeys: ['name', 'steps'] });

    const request = fc.oneof(
      definition.map((body) => ({ method: 'POST', path: '/api/v1/workflows', body: body as unknown })),
      definition.map((body) => ({ method: 'PUT', path: '/api/v1/workflows/WORKFLOW', body: body as unknown })),
      openApiDocument.map((document) => ({ method: 'POST', path: '/api/v1/servers', body: { connection: 'PCID', document } as unknown })),
      fc.record({ expression, where: fc.constantFrom('if', 'items', 'case'), inputSchema: fc.option(schema, { nil: undefined }) }).map(({ expression: e, where, inputSchema }) => ({
        method: 'POST', path: '/api/v1/workflows',
        body: where === 'if' ? workflow({ if: e }, inputSchema)
          : where === 'items' ? workflow({ type: 'forEach', items: e, steps: [{ name: 'Each', type: 'template', template: 'x' }], template: undefined }, inputSchema)
            : workflow({ type: 'branch', cases: [{ if: e, steps: [{ name: 'Then', type: 'template', template: 'x' }] }], template: undefined }, inputSchema),
      })),
      fc.oneof({ arbitrary: schema, weight: 3 }, { arbitrary: schema.map((s) => JSON.stringify(s)), weight: 3 }, deepText, fc.string({ maxLength: 100 })).map((outputSchema) => ({
        method: 'POST', path: '/api/v1/agents', body: { name: 'fuzzed', instructions: 'Answer in JSON.', outputSchema } as unknown,
      })),
    );

    it(`never answers 5xx or drops the socket, and serves ordinary requests afterwards (seed ${SEED}, ${RUNS} runs)`, async () => {
      const seen: Record<number, number> = {};
      const draft = await gw.call('POST', '/api/v1/workflows', workflow());
      assert.equal(draft.status, 201, draft.text);
      await fc.assert(fc.asyncProperty(request, async (r) => {
        const body = r.path === '/api/v1/servers' ? { ...(r.body as Record<string, unknown>), connection: pcid } : r.body;
        const answer = await gw.call(r.method, r.path.replace('WORKFLOW', String(draft.json?.id)), body);
        seen[answer.status] = (seen[answer.status] ?? 0) + 1;
        assert.notEqual(answer.status, 0, `${answer.text} after ${JSON.stringify(body).slice(0, 300)}; ${gw.exited() ?? ''}`);
        assert.ok(answer.status < 500, `${answer.status} ${answer.text.slice(0, 300)} for ${JSON.stringify(body).slice(0, 300)}`);
        if (answer.status >= 400) {
          assert.deepEqual(Object.keys(answer.json ?? {}).sort(), ['error', 'message'], answer.text);
        }
      }), { seed: SEED, numRuns: RUNS, endOnFailure: true });
      assert.equal(gw.exited(), undefined);
      // both refusals and acceptances were exercised
      assert.ok((seen[400] ?? 0) > 0 && (seen[201] ?? 0) > 0, JSON.stringify(seen));
      const server = await gw.call('POST', '/api/v1/servers', { connection: pcid, document: PETSTORE });
      assert.equal(server.status, 201, server.text);
      const created = await gw.call('POST', '/api/v1/workflows', workflow({ if: 'inputs.n > 1' }));
      assert.equal(created.status, 201, created.text);
      const health = await fetch(`${gw.url}/healthz`);
      assert.equal(health.status, 200);
    });
  });
});
