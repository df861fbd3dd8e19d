/**
 * The price table (FLOWGATE_MODEL_PRICES): USD per million tokens of each model, for prompt
 * (`input`), completion (`output`) and cached prompt tokens (`cachedInput`, else `input`). Given as
 * JSON, or as the path of a JSON file. Cost is computed exactly in integers: each price is kept in
 * nano-USD per million tokens, and a call's cost rounded to the nano-USD.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { CallUsage } from '../common/agent-usage';

const Price = z.number().min(0).max(1_000_000);
const ModelPriceSchema = z.object({ input: Price, output: Price, cachedInput: Price.optional() }).strict();
export const PriceTableSchema = z.record(z.string().min(1).max(200), ModelPriceSchema);

/** Nano-USD per million tokens. */
export interface ModelPrice {
  input: bigint;
  output: bigint;
  cachedInput: bigint;
}

export type PriceTable = ReadonlyMap<string, ModelPrice>;

const NANO = 1_000_000_000;

function nano(usdPerMillion: number): bigint {
  return BigInt(Math.round(usdPerMillion * NANO));
}

/** Parses the variable's value: JSON text (starting with `{`) or a file path. Throws with the reason. */
export function parsePriceTable(value: string): PriceTable {
  const text = value.trim().startsWith('{') ? value : readFileSync(value.trim(), 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`not JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const parsed = PriceTableSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue?.path.join('.') || '(table)'}: ${issue?.message ?? 'invalid'}; expected {"<model>": {"input": <USD per 1M tokens>, "output": …, "cachedInput"?: …}}`);
  }
  return new Map(Object.entries(parsed.data).map(([model, p]) => [model, {
    input: nano(p.input), output: nano(p.output), cachedInput: nano(p.cachedInput ?? p.input),
  }]));
}

/** The cost of one call in nano-USD, or null when the model has no price. */
export function costOf(prices: PriceTable | undefined, model: string, usage: Pick<CallUsage, 'promptTokens' | 'completionTokens' | 'cachedPromptTokens'>): number | null {
  const price = prices?.get(model);
  if (!price) return null;
  const cached = BigInt(Math.min(usage.cachedPromptTokens, usage.promptTokens));
  const uncached = BigInt(usage.promptTokens) - cached;
  const numerator = uncached * price.input + cached * price.cachedInput + BigInt(usage.completionTokens) * price.output;
  // per million tokens, rounded half up
  return Number((numerator + 500_000n) / 1_000_000n);
}
