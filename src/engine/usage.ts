/**
 * Token and call accounting, and cost from a price table the user can override.
 * Usage counts what this run spent: a cache hit costs nothing and is counted as a hit.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { round } from '../statistics/descriptive.js';
import type { JudgeUsage } from '../judges/types.js';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_prompt_tokens: number;
  /** Prompt tokens written to the provider's prompt cache (Anthropic); absent when none were. */
  cache_write_prompt_tokens?: number;
  calls: number;
  cache_hits: number;
  retries: number;
  /** The retries by the error that caused them (an unreadable reply asked again, a timeout, a 429…); absent when none. */
  retry_reasons?: RetryReasons;
  /** Judge calls not made because a failed hard rule gated the item. */
  gate_calls_saved: number;
  /** The part of the tokens above answered through a provider Batch API (billed at the batch discount); absent when none. */
  batch?: BatchTokens;
  /** Replies whose reported token counts could not be true: those counts are left out above (and out of the cost); absent when none. */
  implausible_usage?: ImplausibleUsage;
}

/** Retries by error code. */
export type RetryReasons = Partial<Record<string, number>>;

/** Adds retries by reason into a usage. */
export function addRetryReasons(usage: Usage, reasons: RetryReasons): void {
  for (const [code, count] of Object.entries(reasons)) {
    if (!count) continue;
    usage.retry_reasons ??= {};
    usage.retry_reasons[code] = (usage.retry_reasons[code] ?? 0) + count;
  }
}

export interface ImplausibleUsage {
  replies: number;
  /** The first one seen, e.g. `prompt_tokens 1e+300`. */
  example: string;
}

export interface BatchTokens {
  calls: number;
  prompt_tokens: number;
  cached_prompt_tokens: number;
  completion_tokens: number;
}

/** Share of the synchronous price a provider Batch API bills (OpenAI and Anthropic: 50%). */
export const batchPriceFactor = 0.5;

export function emptyUsage(): Usage {
  return { prompt_tokens: 0, completion_tokens: 0, cached_prompt_tokens: 0, calls: 0, cache_hits: 0, retries: 0, gate_calls_saved: 0 };
}

export function addReplyUsage(usage: Usage, reply: JudgeUsage): void {
  usage.prompt_tokens += reply.inputTokens;
  usage.completion_tokens += reply.outputTokens;
  usage.cached_prompt_tokens += reply.cachedInputTokens;
  if (reply.cacheWriteInputTokens) usage.cache_write_prompt_tokens = (usage.cache_write_prompt_tokens ?? 0) + reply.cacheWriteInputTokens;
  if (reply.implausible?.length) addImplausible(usage, { replies: 1, example: reply.implausible.join(', ') });
  if (reply.batch) {
    usage.batch ??= { calls: 0, prompt_tokens: 0, cached_prompt_tokens: 0, completion_tokens: 0 };
    usage.batch.calls += 1;
    usage.batch.prompt_tokens += reply.inputTokens;
    usage.batch.cached_prompt_tokens += reply.cachedInputTokens;
    usage.batch.completion_tokens += reply.outputTokens;
  }
}

function addImplausible(usage: Usage, part: ImplausibleUsage): void {
  if (usage.implausible_usage) usage.implausible_usage.replies += part.replies;
  else usage.implausible_usage = { ...part };
}

export function addUsage(total: Usage, part: Usage): void {
  total.prompt_tokens += part.prompt_tokens;
  total.completion_tokens += part.completion_tokens;
  total.cached_prompt_tokens += part.cached_prompt_tokens;
  if (part.cache_write_prompt_tokens) total.cache_write_prompt_tokens = (total.cache_write_prompt_tokens ?? 0) + part.cache_write_prompt_tokens;
  total.calls += part.calls;
  total.cache_hits += part.cache_hits;
  total.retries += part.retries;
  if (part.retry_reasons) addRetryReasons(total, part.retry_reasons);
  total.gate_calls_saved += part.gate_calls_saved ?? 0;
  if (part.implausible_usage) addImplausible(total, part.implausible_usage);
  if (part.batch) {
    total.batch ??= { calls: 0, prompt_tokens: 0, cached_prompt_tokens: 0, completion_tokens: 0 };
    total.batch.calls += part.batch.calls;
    total.batch.prompt_tokens += part.batch.prompt_tokens;
    total.batch.cached_prompt_tokens += part.batch.cached_prompt_tokens;
    total.batch.completion_tokens += part.batch.completion_tokens;
  }
}

/** US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  /** Input served from the prompt cache; default: the input price. */
  cached_input?: number;
  /** Input written to the prompt cache (Anthropic: 1.25× input for the 5-minute cache); default: the input price. */
  cache_write_input?: number;
  output: number;
}

const priceSchema = z.object({
  input: z.number().nonnegative(),
  cached_input: z.number().nonnegative().optional(),
  cache_write_input: z.number().nonnegative().optional(),
  output: z.number().nonnegative(),
});

/** Anthropic list prices: cache reads at 0.1× input, 5-minute cache writes at 1.25×. */
function anthropicPrice(input: number, output: number): ModelPrice {
  return { input, cached_input: round(input * 0.1), cache_write_input: round(input * 1.25), output };
}

/**
 * Published list prices (USD per 1M tokens) of common judge models. Prices change:
 * pass `--prices FILE` to use your own; a model not listed gets no cost, not zero.
 */
export const defaultPrices: Readonly<Record<string, ModelPrice>> = {
  // The scripted judge (`scripted:…`, `rubricate fake-judge`) asks no model.
  scripted: { input: 0, cached_input: 0, output: 0 },
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
  'claude-opus-4-5': anthropicPrice(5, 25),
  'claude-opus-4-1': anthropicPrice(15, 75),
  'claude-opus-4-0': anthropicPrice(15, 75),
  'claude-opus-4': anthropicPrice(15, 75),
  'claude-sonnet-4-5': anthropicPrice(3, 15),
  'claude-sonnet-4-0': anthropicPrice(3, 15),
  'claude-sonnet-4': anthropicPrice(3, 15),
  'claude-3-7-sonnet': anthropicPrice(3, 15),
  'claude-haiku-4-5': anthropicPrice(1, 5),
  'claude-3-5-haiku': anthropicPrice(0.8, 4),
  'claude-3-haiku': anthropicPrice(0.25, 1.25),
  // Gemini (prompts up to 200k tokens; output includes thinking tokens; implicit-cache hits at the cached price).
  'gemini-2.5-pro': { input: 1.25, cached_input: 0.125, output: 10 },
  'gemini-2.5-flash': { input: 0.3, cached_input: 0.03, output: 2.5 },
  'gemini-2.5-flash-lite': { input: 0.1, cached_input: 0.01, output: 0.4 },
  'gemini-2.0-flash': { input: 0.1, cached_input: 0.025, output: 0.4 },
  'gemini-2.0-flash-lite': { input: 0.075, output: 0.3 },
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
    throw zodIssueError(parsed.error, { code: 'CONFIG_INVALID', prefix: 'price table: ', fieldWhenEmpty: '', details: { file } });
  }
  return parsed.data;
}

/**
 * Finds a model's price, also under a dated name such as `gpt-4.1-2025-04-14` or
 * `claude-sonnet-4-5-20250929`, a `-latest` alias, or a Gemini `models/…` name.
 */
export function priceFor(model: string, table: Readonly<Record<string, ModelPrice>>): ModelPrice | undefined {
  if (table[model]) return table[model];
  const undated = model.replace(/^models\//, '').replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/, '');
  return table[undated];
}

/**
 * Cost in USD, or null when the model's price is unknown.
 *
 * @example
 * ```ts
 * import { costOf, scoreFile } from 'rubricate';
 * import type { Usage } from 'rubricate';
 * const usage: Usage = { prompt_tokens: 120_000, completion_tokens: 8_000, cached_prompt_tokens: 0, calls: 40, cache_hits: 0, retries: 0, gate_calls_saved: 0 };
 * const dollars = costOf(usage, { input: 0.4, output: 1.6 }); // prices per million tokens
 * ```
 */
export function costOf(usage: Usage, price: ModelPrice | undefined): number | null {
  if (!price) return null;
  const cached = Math.min(usage.cached_prompt_tokens, usage.prompt_tokens);
  const written = Math.min(usage.cache_write_prompt_tokens ?? 0, usage.prompt_tokens - cached);
  const uncached = usage.prompt_tokens - cached - written;
  let cost =
    (uncached * price.input + cached * (price.cached_input ?? price.input) + written * (price.cache_write_input ?? price.input) + usage.completion_tokens * price.output) / 1_000_000;
  if (usage.batch) {
    // Tokens answered by a Batch API were counted above at the synchronous price: take the discount off.
    const batchCached = Math.min(usage.batch.cached_prompt_tokens, usage.batch.prompt_tokens);
    const batchCost =
      ((usage.batch.prompt_tokens - batchCached) * price.input + batchCached * (price.cached_input ?? price.input) + usage.batch.completion_tokens * price.output) / 1_000_000;
    cost -= batchCost * (1 - batchPriceFactor);
  }
  return round(cost);
}
