/**
 * The tool gateway's zod-free parses of a JSON-RPC message and of tools/call params against the
 * schemas that define them: the same verdict and the same data on every message of the corpus.
 */
import assert from 'node:assert/strict';
import type { z } from 'zod';
import { JsonRpcMessageSchema, ToolsCallParamsSchema, parseJsonRpcMessage, parseToolsCallParams } from '../../src/tools/mcp/jsonrpc';

/** Values as JSON.parse makes them (the only source of messages): no prototype-less objects, no undefined inside. */
const values: unknown[] = [
  undefined, null, 0, -0, 1, -7, 1.5, 2 ** 53, -(2 ** 53), Number.MAX_SAFE_INTEGER, '', 'x', '2.0', true, false, [], [1, 'a'], {}, { a: 1 },
];

function messages(): unknown[] {
  const corpus: unknown[] = [...values, JSON.parse('{"jsonrpc":"2.0","method":"ping","__proto__":{"id":1}}')];
  for (const jsonrpc of [undefined, '2.0', '1.0', 2]) {
    for (const method of [undefined, '', 'tools/call', 7]) {
      for (const params of values) {
        for (const id of [undefined, null, 0, 1, 1.5, 2 ** 53, 'abc', '', {}, []]) {
          const message: Record<string, unknown> = { extra: 'dropped' };
          if (jsonrpc !== undefined) message.jsonrpc = jsonrpc;
          if (method !== undefined) message.method = method;
          if (params !== undefined) message.params = params;
          if (id !== undefined) message.id = id;
          corpus.push(message);
        }
      }
    }
  }
  return corpus;
}

function callParams(): unknown[] {
  const corpus: unknown[] = [...values];
  for (const name of [undefined, '', 'echo', 3, null]) {
    for (const args of values) {
      for (const meta of [undefined, null, {}, { idempotencyKey: 'k' }, [], 'm']) {
        const params: Record<string, unknown> = { other: true };
        if (name !== undefined) params.name = name;
        if (args !== undefined) params.arguments = args;
        if (meta !== undefined) params._meta = meta;
        corpus.push(params);
      }
    }
  }
  return corpus;
}

/** Holds `parse` to `schema` on every value of the corpus (verdict and data); answers how many were valid. */
function sameAsSchema(corpus: unknown[], schema: z.ZodType, parse: (raw: unknown) => unknown): number {
  let valid = 0;
  for (const raw of corpus) {
    const expected = schema.safeParse(raw);
    const actual = parse(raw);
    assert.deepEqual(actual, expected.success ? expected.data : undefined, JSON.stringify(raw));
    if (actual) valid++;
  }
  return valid;
}

describe('JSON-RPC parsing without zod', () => {
  it('parses every message exactly as JsonRpcMessageSchema does', () => {
    const valid = sameAsSchema(messages(), JsonRpcMessageSchema, parseJsonRpcMessage);
    assert.ok(valid >= 25, `the corpus holds valid messages too (${valid})`);
  });

  it('parses every tools/call params exactly as ToolsCallParamsSchema does', () => {
    const valid = sameAsSchema(callParams(), ToolsCallParamsSchema, parseToolsCallParams);
    assert.ok(valid >= 9, `the corpus holds valid params too (${valid})`);
  });
});
