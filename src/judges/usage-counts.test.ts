import { describe, expect, it } from 'vitest';
import { parseAnthropicMessage } from './anthropic/anthropic-judge.js';
import { parseGeminiResponse } from './gemini/gemini-judge.js';
import { parseCompletion } from './openai/openai-judge.js';
import { maxPlausibleTokens, TokenCountReader } from './usage-counts.js';

describe('token counts from providers', () => {
  it('count whole numbers from 0 to the bound; absent is 0; anything else is left out and named', () => {
    const reader = new TokenCountReader();
    expect([reader.count('a', 12), reader.count('b', undefined), reader.count('c', null), reader.count('d', maxPlausibleTokens)]).toEqual([12, 0, 0, maxPlausibleTokens]);
    expect(reader.usage({ inputTokens: 12, outputTokens: 0, cachedInputTokens: 0 })).toEqual({ inputTokens: 12, outputTokens: 0, cachedInputTokens: 0 });
    const odd = new TokenCountReader();
    expect([odd.count('a', 1e300), odd.count('b', -1), odd.count('c', 0.5), odd.count('d', Number.NaN), odd.count('e', '7'), odd.count('f', maxPlausibleTokens + 1)]).toEqual([0, 0, 0, 0, 0, 0]);
    expect(odd.usage({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 }).implausible).toEqual(['a 1e+300', 'b -1', 'c 0.5', 'd NaN', 'e "7"', `f ${maxPlausibleTokens + 1}`]);
  });

  it('every provider reader applies them', () => {
    const openai = parseCompletion({ choices: [{ message: { content: '{}' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1e300, completion_tokens: 5, prompt_tokens_details: { cached_tokens: -3 } } }, 'http://x');
    expect(openai.usage).toEqual({ inputTokens: 0, outputTokens: 5, cachedInputTokens: 0, implausible: ['prompt_tokens 1e+300', 'cached_tokens -3'] });
    const anthropic = parseAnthropicMessage({ content: [{ type: 'text', text: '{}' }], usage: { input_tokens: 10, output_tokens: 2.5, cache_read_input_tokens: null } }, undefined, 'http://x');
    expect(anthropic.usage).toEqual({ inputTokens: 10, outputTokens: 0, cachedInputTokens: 0, implausible: ['output_tokens 2.5'] });
    const gemini = parseGeminiResponse({ candidates: [{ content: { parts: [{ text: '{}' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 20, candidatesTokenCount: -1, thoughtsTokenCount: 4 } }, 'http://x');
    expect(gemini.usage).toEqual({ inputTokens: 20, outputTokens: 4, cachedInputTokens: 0, implausible: ['candidatesTokenCount -1'] });
  });
});
