import assert from 'node:assert/strict';
import { cutToBudget } from '../../activities/agent-tool-call';
import { completeChat, ModelError, modelToolName, retryAfterMs } from '../../src/llm/chat-model';
import { startFakeLlm } from '../support/fake-llm';

describe('the model adapter', () => {
  it('fits tool names to ^[a-zA-Z0-9_-]{1,64}$ and keeps them unique', () => {
    const taken = new Set<string>();
    const first = modelToolName('my.server_do thing', taken);
    assert.equal(first, 'my_server_do_thing');
    taken.add(first);
    assert.equal(modelToolName('my.server/do thing', taken), 'my_server_do_thing_2');
    const long = modelToolName('x'.repeat(100), new Set(['x'.repeat(64)]));
    assert.match(long, /^x{62}_2$/);
  });

  it('reads Retry-After as seconds, as an HTTP date, and retry-after-ms', () => {
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '3' })), 3000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': new Date(10_000).toUTCString() }), 4000), 6000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' })), 250);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' })), undefined);
  });

  it('cuts a tool result to its budget without splitting a surrogate pair', () => {
    assert.equal(cutToBudget('short', 10), 'short');
    assert.equal(cutToBudget(`ab${'😀'}cd`, 3), 'ab\n[… 4 more characters cut]');
  });

  it('maps the endpoint\'s errors: 429 retryable after Retry-After, 400 not retryable with the upstream message', async () => {
    const fake = await startFakeLlm([
      { status: 429, message: 'slow down', headers: { 'Retry-After': '7' } },
      { status: 400, message: 'bad tools', code: 'invalid_value' },
      { toolCalls: [{ name: 'web-search_search', arguments: { query: 'q' } }] },
    ]);
    const settings = { baseUrl: fake.baseUrl, model: 'm', timeoutMs: 5000 };
    const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
    try {
      await assert.rejects(completeChat(settings, request), (e: unknown) => e instanceof ModelError && e.kind === 'RATE_LIMITED' && e.retryable && e.retryAfterMs === 7000);
      await assert.rejects(completeChat(settings, request), (e: unknown) => e instanceof ModelError && !e.retryable && /\(400\): bad tools/.test(e.message));
      const reply = await completeChat(settings, request);
      assert.deepEqual(reply.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]), [['web-search_search', { query: 'q' }]]);
      assert.equal(fake.requests.length, 3, 'the SDK retries nothing itself');
    } finally {
      await fake.close();
    }
  });
});
