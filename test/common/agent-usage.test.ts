import assert from 'node:assert/strict';
import { addUsage, budgetReached, formatUsd, monthOf, sumUsage, usageView, usdToNano, type ModelUsage } from '../../src/common/agent-usage';
import { completeChat } from '../../src/llm/chat-model';
import { costOf, parsePriceTable } from '../../src/llm/prices';
import { loadConfig } from '../../src/config/config';
import { startFakeLlm } from '../support/fake-llm';

describe('token usage, prices and budgets', () => {
  const prices = parsePriceTable('{"gpt-x": {"input": 2.5, "output": 10, "cachedInput": 1.25}, "cheap": {"input": 0.15, "output": 0.6}}');

  it('turns tokens into nano-USD exactly: cached prompt tokens at cachedInput, else at input', () => {
    // 1000 prompt of which 400 cached, 200 completion: 600 × 2.5 + 400 × 1.25 + 200 × 10 = 4000 USD per million tokens
    assert.equal(costOf(prices, 'gpt-x', { promptTokens: 1000, completionTokens: 200, cachedPromptTokens: 400 }), 4_000_000);
    assert.equal(formatUsd(4_000_000), '0.004');
    // no cachedInput: cached tokens cost the input price; 7 × 0.15 = 1.05 nano-USD ×1000 → rounds
    assert.equal(costOf(prices, 'cheap', { promptTokens: 7, completionTokens: 0, cachedPromptTokens: 7 }), 1050);
    assert.equal(costOf(prices, 'unknown', { promptTokens: 7, completionTokens: 1, cachedPromptTokens: 0 }), null);
    // a million completion tokens at 10 USD: no precision lost on large counts
    assert.equal(costOf(prices, 'gpt-x', { promptTokens: 0, completionTokens: 3_000_000_000, cachedPromptTokens: 0 }), 30_000 * 1e9);
    assert.equal(formatUsd(usdToNano(0.0016)), '0.0016');
    assert.equal(formatUsd(0), '0');
    assert.equal(formatUsd(12_500_000_000), '12.5');
  });

  it('refuses a malformed price table with the reason, through the configuration', () => {
    assert.throws(() => loadConfig({ FLOWGATE_MODEL_PRICES: '{"m": {"input": -1, "output": 1}}' }), /FLOWGATE_MODEL_PRICES: not a price table: m\.input/);
    assert.throws(() => loadConfig({ FLOWGATE_MODEL_PRICES: '{"m": {"input": 1}}' }), /FLOWGATE_MODEL_PRICES: not a price table: m\.output/);
    assert.throws(() => loadConfig({ FLOWGATE_MODEL_PRICES: '/nonexistent/prices.json' }), /FLOWGATE_MODEL_PRICES: not a price table: .*ENOENT/);
    assert.equal(loadConfig({ FLOWGATE_MODEL_PRICES: '{"m": {"input": 1, "output": 2}}' }).modelPrices?.get('m')?.output, 2_000_000_000n);
  });

  it('adds calls up per model and shows an unpriced model\'s cost as null with the reason', () => {
    let totals: ModelUsage[] = [];
    totals = addUsage(totals, { model: 'gpt-x', promptTokens: 100, completionTokens: 10, cachedPromptTokens: 50, costNanoUsd: 300 });
    totals = addUsage(totals, { model: 'gpt-x', promptTokens: 200, completionTokens: 20, cachedPromptTokens: 0, costNanoUsd: 700 });
    totals = addUsage(totals, { model: 'local', promptTokens: 5, completionTokens: 5, cachedPromptTokens: 0, costNanoUsd: null });
    const view = usageView(totals);
    assert.equal(view.totalTokens, 340);
    assert.equal(view.cachedPromptTokens, 50);
    assert.equal(view.costUsd, '0.000001');
    assert.match(view.costNote ?? '', /without local: no price/);
    assert.deepEqual(view.byModel.map((m) => [m.model, m.calls, m.totalTokens, m.costUsd]), [['gpt-x', 2, 330, '0.000001'], ['local', 1, 10, null]]);
    assert.equal(usageView([totals[1]!]).costUsd, null);
    assert.equal(sumUsage([totals, totals]).find((m) => m.model === 'gpt-x')?.calls, 4);
  });

  it('names the budget reached, with the figures', () => {
    const used: ModelUsage[] = [{ model: 'gpt-x', calls: 2, promptTokens: 90, completionTokens: 20, cachedPromptTokens: 0, costNanoUsd: 1_600_000 }];
    assert.equal(budgetReached({ maxTokens: 111 }, used, undefined), undefined);
    assert.match(budgetReached({ maxTokens: 110 }, used, undefined) ?? '', /token budget \(limits\.maxTokens = 110\) is reached: 110 tokens used/);
    assert.match(budgetReached({ maxCostNanoUsd: usdToNano(0.001) }, used, undefined) ?? '', /cost budget \(limits\.maxCostUsd = 0\.001 USD\) is reached: 0\.0016 USD spent/);
    assert.match(budgetReached({ monthlyMaxTokens: 1000 }, used, { tokens: 1200, costNanoUsd: 0 }) ?? '', /monthly token budget \(monthlyMaxTokens = 1000\).*1200 tokens used this month/);
    assert.equal(monthOf(new Date('2026-12-31T23:59:59Z')), '2026-12');
  });

  it('reads cached prompt tokens from prompt_tokens_details, and a reply without usage has none', async () => {
    const fake = await startFakeLlm([{ content: 'a', usage: { prompt: 120, completion: 7, cached: 100 } }, { content: 'b', usage: null }, { content: 'c' }]);
    const settings = { baseUrl: fake.baseUrl, model: 'm', timeoutMs: 5000 };
    const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };
    try {
      assert.deepEqual((await completeChat(settings, request)).usage, { promptTokens: 120, completionTokens: 7, cachedPromptTokens: 100 });
      assert.equal((await completeChat(settings, request)).usage, undefined);
      assert.deepEqual((await completeChat(settings, request)).usage, { promptTokens: 10, completionTokens: 5, cachedPromptTokens: 0 });
    } finally {
      await fake.close();
    }
  });
});
