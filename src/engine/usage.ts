/**
 * Token and call accounting, and cost from a price table the user can override.
 * Usage counts what this run spent: a cache hit costs nothing and is counted as a hit.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import type { JudgeUsage } from '../judges/types.js';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_prompt_tokens: number;
  calls: number;
  cache_hits: number;
  retries: number;
  /** Judge calls not made because a failed hard rule gated the item. */
  gate_calls_saved: number;
}

export function emptyUsage(): Usage {
  return { prompt_tokens: 0, completion_tokens: 0, cached_prompt_tokens: 0, calls: 0, cache_hits: 0, retries: 0, gate_calls_saved: 0 };
}

export function addReplyUsage(usage: Usage, reply: JudgeUsage): void {
  usage.prompt_tokens += reply.inputTokens;
  usage.completion_tokens += reply.outputTokens;
  usage.cached_prompt_tokens += reply.cachedInputTokens;
}

export function addUsage(total: Usage, part: Usage): void {
  total.prompt_tokens += part.prompt_tokens;
  total.completion_tokens += part.completion_tokens;
  total.cached_prompt_tokens += part.cached_prompt_tokens;
  total.calls += part.calls;
  total.cache_hits += part.cache_hits;
  total.retries += part.retries;
  total.gate_calls_saved += part.gate_calls_saved ?? 0;
}

/** US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  cached_input?: number;
  output: number;
}

const priceSchema = z.object({
  input: z.number().nonnegative(),
  cached_input: z.number().nonnegative().optional(),
  output: z.number().nonnegative(),
});

/**
 * Published list prices (USD per 1M tokens) of common judge models. Prices change:
 * pass `--prices FILE` to use your own; a model not listed gets no cost, not zero.
 */
export const defaultPrices: Readonly<Record<string, ModelPrice>> = {
  'gpt-4.1': { input: 2, cached_input: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cached_input: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cached_input: 0.025, output: 0.4 },
  'gpt-4o': { input: 2.5, cached_input: 1.25, output: 10 },
  'gpt-4o-mini': { input: 0.15, cached_input: 0.075, output: 0.6 },
  o3: { input: 2, cached_input: 0.5, output: 8 },
  'o4-mini': { input: 1.1, cached_input: 0.275, output: 4.4 },
  'gpt-5': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5-mini': { input: 0.25, cached_input: 0.025, output: 2 },
  'gpt-5-nano': { input: 0.05, cached_input: 0.005, output: 0.4 },
};

export function loadPriceTable(file: string): Record<string, ModelPrice> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new RubricateError('CONFIG_INVALID', `cannot read price table: ${(error as Error).message}`, { file, field: 'prices' });
  }
  let value: unknown;
  try {
    // YAML (a superset of JSON) is loaded only when a price table is given.
    const { parse } = createRequire(import.meta.url)('yaml') as { parse: (text: string) => unknown };
    value = parse(text);
  } catch (error) {
    throw new RubricateError('CONFIG_INVALID', `price table is not valid JSON or YAML: ${(error as Error).message}`, { file });
  }
  const parsed = z.record(z.string(), priceSchema).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RubricateError('CONFIG_INVALID', `price table: ${issue.message}`, { file, field: issue.path.join('.') });
  }
  return parsed.data;
}

/** Finds a model's price, also under a dated name such as `gpt-4.1-2025-04-14`. */
export function priceFor(model: string, table: Readonly<Record<string, ModelPrice>>): ModelPrice | undefined {
  if (table[model]) return table[model];
  const undated = model.replace(/-\d{4}-\d{2}-\d{2}$/, '');
  return table[undated];
}

/** Cost in USD, or null when the model's price is unknown. */
export function costOf(usage: Usage, price: ModelPrice | undefined): number | null {
  if (!price) return null;
  const cached = Math.min(usage.cached_prompt_tokens, usage.prompt_tokens);
  const uncached = usage.prompt_tokens - cached;
  const cost = (uncached * price.input + cached * (price.cached_input ?? price.input) + usage.completion_tokens * price.output) / 1_000_000;
  return Math.round(cost * 1e6) / 1e6;
}
