import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, silentLogger } from '../../src/observability/logger';
import { openRegistry, type Registry } from '../../src/registry';
import { createConnectionCipher } from '../../src/crypto/connection-cipher';
import { ConnectionStore } from '../../src/tools/connections';
import { z } from 'zod';
import { ToolCatalog } from '../../src/tools/catalog';
import { defineTool, toolServer } from '../../src/tools/define-tool';
import { ToolDispatcher } from '../../src/tools/dispatcher';
import { ToolCallError, type ToolServer, type ToolServices } from '../../src/tools/server';

describe('ToolDispatcher', () => {
  let dir: string;
  let registry: Registry;
  let dispatcher: ToolDispatcher;
  let orgA: string;
  let orgB: string;
  const lookup = defineTool({
    name: 'crm_lookup', description: 'Look up.', input: z.object({ q: z.string() }),
    async handler(args, context) {
      return { q: args.q, via: context.connection?.credentials, key: context.idempotencyKey ?? null };
    },
  });
  const crm = toolServer({ name: 'crm', description: 'CRM', application: 'crm', tools: [lookup] });
  const bOnly = toolServer({ name: 'b-only', description: 'Only for B', embedded: false, tools: [lookup] });
  let services: ToolServices;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowgate-dispatcher-'));
    registry = await openRegistry({ kind: 'sqlite', file: join(dir, 'r.db') });
    orgA = (await registry.orgs.create('a')).id;
    orgB = (await registry.orgs.create('b')).id;
    services = {
      connections: new ConnectionStore(registry, createConnectionCipher(randomBytes(32))), log: silentLogger, allowPrivateNetwork: false,
      blobs: undefined as never, signer: undefined as never,
    };
    dispatcher = new ToolDispatcher({
      services,
      catalog: new ToolCatalog([crm], [{ servers: async (orgId) => (orgId === orgB ? [bOnly] : []) }]),
    });
  });
  after(async () => {
    await registry?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens the PCID connection of the caller\'s organization and hands its credentials and the idempotency key to the tool', async () => {
    const pc = await dispatcher.connections.create(orgA, 'crm', 'main', { apiKey: 'k-1' });
    const result = await dispatcher.call(orgA, '/crm', 'crm_lookup', { PCID: pc.PCID, q: 'acme' }, { idempotencyKey: 'run:1' });
    assert.deepEqual(result, { isError: false, value: { q: 'acme', via: { apiKey: 'k-1' }, key: 'run:1' }, content: undefined });
  });

  it('refuses a connection of another application or of another organization', async () => {
    const mail = await dispatcher.connections.create(orgA, 'mail', null, { from: 'x@y.z' });
    await assert.rejects(dispatcher.call(orgA, 'crm', 'crm_lookup', { PCID: mail.PCID, q: 'x' }),
      (e: unknown) => e instanceof ToolCallError && e.code === 'CONNECTION_REFUSED' && /a mail connection; \/crm needs a crm connection/.test(e.message));
    const theirs = await dispatcher.connections.create(orgB, 'crm', null, { apiKey: 'theirs' });
    await assert.rejects(dispatcher.call(orgA, 'crm', 'crm_lookup', { PCID: theirs.PCID, q: 'x' }),
      (e: unknown) => e instanceof ToolCallError && e.code === 'CONNECTION_REFUSED');
  });

  it('scopes custom servers to their organization', async () => {
    assert.deepEqual((await dispatcher.servers(orgB)).map((s) => s.name), ['crm', 'b-only']);
    assert.deepEqual((await dispatcher.servers(orgA)).map((s) => s.name), ['crm']);
    await assert.rejects(dispatcher.list(orgA, 'b-only'), (e: unknown) => e instanceof ToolCallError && e.code === 'UNKNOWN_SERVER');
  });

  it('rejects with the caller\'s reason when the caller gives up, and logs no tool failure', async () => {
    const logged: string[] = [];
    const slow: ToolServer = toolServer({
      name: 'slow', description: 'Slow.',
      tools: [defineTool({
        name: 'wait', description: 'Waits to be aborted.', input: z.object({}),
        handler: (_args, context) => new Promise((_, reject) => context.signal.addEventListener('abort', () => reject(new Error('handler noise')), { once: true })),
      })],
    });
    const waiting = new ToolDispatcher({ services: { ...services, log: createLogger('error', {}, (line) => logged.push(line)) }, catalog: new ToolCatalog([slow]) });
    const caller = new AbortController();
    const reason = new Error('the step was cancelled');
    const call = waiting.call(orgA, 'slow', 'wait', {}, { signal: caller.signal });
    setTimeout(() => caller.abort(reason), 20);
    await assert.rejects(call, (e: unknown) => e === reason);
    assert.deepEqual(logged, []);
  });

  it('gives a tool that reads its signal late a signal already aborted with the caller\'s reason', async () => {
    let seen: { aborted: boolean; reason: unknown } | undefined;
    const late: ToolServer = toolServer({
      name: 'late', description: 'Reads its signal late.',
      tools: [defineTool({
        name: 'look', description: 'Looks at its signal after a while.', input: z.object({}),
        handler: async (_args, context) => {
          await new Promise((resolve) => setTimeout(resolve, 30));
          seen = { aborted: context.signal.aborted, reason: context.signal.reason };
          return {};
        },
      })],
    });
    const caller = new AbortController();
    const reason = new Error('gone');
    const call = new ToolDispatcher({ services, catalog: new ToolCatalog([late]) }).call(orgA, 'late', 'look', {}, { signal: caller.signal });
    caller.abort(reason);
    // the tool chose to finish anyway: its answer stands
    assert.deepEqual((await call).value, {});
    assert.deepEqual(seen, { aborted: true, reason });
  });

  it('aborts the signal of a tool that runs past its time limit, and answers TIMEOUT', async () => {
    let abortedWith: unknown;
    const stuck: ToolServer = toolServer({
      name: 'stuck', description: 'Never answers.',
      tools: [defineTool({
        name: 'hang', description: 'Waits for its signal.', input: z.object({}),
        handler: (_args, context) => new Promise((_, reject) => context.signal.addEventListener('abort', () => {
          abortedWith = context.signal.reason;
          reject(new Error('handler noise'));
        }, { once: true })),
      })],
    });
    const call = new ToolDispatcher({ services, catalog: new ToolCatalog([stuck]), defaultTimeoutMs: 50 }).call(orgA, 'stuck', 'hang', {});
    await assert.rejects(call, (e: unknown) => e instanceof ToolCallError && e.code === 'TIMEOUT' && e === abortedWith);
  });

  it('shows zod-declared arguments as the contract\'s JSON Schema, with PCID required on an application server', async () => {
    const [entry] = await dispatcher.list(orgA, 'crm');
    assert.deepEqual(entry?.inputSchema.required, ['PCID', 'q']);
    assert.deepEqual(Object.keys(entry?.inputSchema.properties ?? {}), ['PCID', 'q']);
    assert.equal(entry?.inputSchema.type, 'object');
    assert.equal(entry?.inputSchema.$schema, undefined);
  });

  it('refuses arguments that fail the tool\'s schema before the tool runs, naming the field', async () => {
    const pc = await dispatcher.connections.create(orgA, 'crm', null, { apiKey: 'k' });
    await assert.rejects(dispatcher.call(orgA, 'crm', 'crm_lookup', { PCID: pc.PCID, q: 7 }),
      (e: unknown) => e instanceof ToolCallError && e.code === 'INVALID_ARGUMENTS' && /arguments\.q: /.test(e.message));
    await assert.rejects(dispatcher.call(orgA, 'crm', 'crm_lookup', { q: 'x' }),
      (e: unknown) => e instanceof ToolCallError && e.code === 'INVALID_ARGUMENTS' && /arguments\.PCID/.test(e.message));
  });
});
