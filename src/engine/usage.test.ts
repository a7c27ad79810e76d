import { describe, expect, it } from 'vitest';
import { addReplyUsage, addUsage, costOf, defaultPrices, emptyUsage, priceFor } from './usage.js';

describe('usage and cost', () => {
  it('prices Anthropic cache reads at 0.1× and cache writes at 1.25× the input price', () => {
    const price = priceFor('claude-sonnet-4-5-20250929', defaultPrices)!;
    expect(price).toEqual({ input: 3, cached_input: 0.3, cache_write_input: 3.75, output: 15 });
    const usage = emptyUsage();
    addReplyUsage(usage, { inputTokens: 10_000, outputTokens: 100, cachedInputTokens: 6_000, cacheWriteInputTokens: 3_000 });
    // 1000 uncached × 3 + 6000 read × 0.3 + 3000 written × 3.75 + 100 out × 15, per million.
    expect(costOf(usage, price)).toBeCloseTo((1000 * 3 + 6000 * 0.3 + 3000 * 3.75 + 100 * 15) / 1e6, 9);
  });

  it('keeps results without cache writes as they were, and sums writes across parts', () => {
    const plain = emptyUsage();
    addReplyUsage(plain, { inputTokens: 10, outputTokens: 1, cachedInputTokens: 0 });
    expect('cache_write_prompt_tokens' in plain).toBe(false);
    const total = emptyUsage();
    const written = emptyUsage();
    addReplyUsage(written, { inputTokens: 10, outputTokens: 1, cachedInputTokens: 0, cacheWriteInputTokens: 8 });
    addUsage(total, plain);
    addUsage(total, written);
    addUsage(total, written);
    expect(total.cache_write_prompt_tokens).toBe(16);
    expect(total.prompt_tokens).toBe(30);
  });

  it('finds Claude and Gemini prices under dated, -latest and models/ names', () => {
    expect(priceFor('claude-3-5-haiku-latest', defaultPrices)?.input).toBe(0.8);
    expect(priceFor('claude-haiku-4-5-20251001', defaultPrices)?.cache_write_input).toBe(1.25);
    expect(priceFor('models/gemini-2.5-flash', defaultPrices)).toEqual({ input: 0.3, cached_input: 0.03, output: 2.5 });
    expect(priceFor('gpt-4.1-2025-04-14', defaultPrices)?.input).toBe(2);
    expect(priceFor('claude-unknown', defaultPrices)).toBeUndefined();
  });
});
