import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, silentLogger } from '../../src/logger';
import { openRegistry, type Registry } from '../../src/registry';
import { createConnectionCipher } from '../../src/tools/connection-cipher';
import { ConnectionStore } from '../../src/tools/connections';
import { ToolCallError, ToolDispatcher } from '../../src/tools/dispatcher';
import type { ToolServer } from '../../src/tools/types';

describe('ToolDispatcher', () => {
  let dir: string;
  let registry: Registry;
  let dispatcher: ToolDispatcher;
  let orgA: string;
  let orgB: string;
  const crm: ToolServer = {
    name: 'crm', description: 'CRM', embedded: true, application: 'crm',
    tools: [{
      name: 'crm_lookup', description: 'Look up.',
      inputSchema: { type: 'object', properties: { PCID: { type: 'string' }, q: { type: 'string' } }, required: ['PCID', 'q'] },
      async handler(args, context) {
        return { q: args.q, via: context.connection?.credentials, key: context.idempotencyKey ?? null };
      },
    }],
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flowgate-dispatcher-'));
    registry = await openRegistry({ kind: 'sqlite', file: join(dir, 'r.db') });
    orgA = (await registry.createOrg('a')).id;
    orgB = (await registry.createOrg('b')).id;
    dispatcher = new ToolDispatcher({
      builtIns: [crm], connections: new ConnectionStore(registry, createConnectionCipher(randomBytes(32))), log: silentLogger,
      orgServers: (orgId) => (orgId === orgB ? [{ ...crm, name: 'b-only', application: undefined, embedded: false }] : []),
    });
  });
  after(async () => {
    await registry?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens the PCID connection of the caller\'s organization and hands its credentials and the idempotency key to the tool', async () => {
    const pc = await dispatcher.connections.create(orgA, 'crm', 'main', { apiKey: 'k-1' });
    const result = await dispatcher.call(orgA, '/crm', 'crm_lookup', { PCID: pc.PCID, q: 'acme' }, { idempotencyKey: 'run:1' });
    assert.deepEqual(result, { isError: false, value: { q: 'acme', via: { apiKey: 'k-1' }, key: 'run:1' } });
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
    const waiting = new ToolDispatcher({
      connections: dispatcher.connections, log: createLogger('error', {}, (line) => logged.push(line)),
      builtIns: [{
        name: 'slow', description: 'Slow.', embedded: true,
        tools: [{
          name: 'wait', description: 'Waits to be aborted.', inputSchema: { type: 'object', properties: {}, required: [] },
          handler: (_args, context) => new Promise((_, reject) => context.signal?.addEventListener('abort', () => reject(new Error('handler noise')), { once: true })),
        }],
      }],
    });
    const caller = new AbortController();
    const reason = new Error('the step was cancelled');
    const call = waiting.call(orgA, 'slow', 'wait', {}, { signal: caller.signal });
    setTimeout(() => caller.abort(reason), 20);
    await assert.rejects(call, (e: unknown) => e === reason);
    assert.deepEqual(logged, []);
  });
});
