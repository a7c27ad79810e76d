import { describe, expect, it } from 'vitest';
import { parseCompletion } from './openai/openai-judge.js';
import { parseAnthropicMessage } from './anthropic/anthropic-judge.js';
import { parseGeminiResponse } from './gemini/gemini-judge.js';
import { resolvedModelOf } from './resolved-model.js';

describe('the model a reply says answered', () => {
  it('is read from each provider\'s own field', () => {
    expect(parseCompletion({ model: 'gpt-4o-mini-2024-07-18', choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] }, 'e').model).toBe('gpt-4o-mini-2024-07-18');
    expect(parseAnthropicMessage({ model: 'claude-x-20250101', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' }, undefined, 'e').model).toBe('claude-x-20250101');
    expect(parseGeminiResponse({ modelVersion: 'gemini-x-001', candidates: [{ content: { parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }, 'e').model).toBe('gemini-x-001');
  });

  it('is left out when the reply names none or something that is not an id', () => {
    expect(parseCompletion({ choices: [{ message: { content: 'ok' } }] }, 'e').model).toBeUndefined();
    expect(resolvedModelOf(42)).toBeUndefined();
    expect(resolvedModelOf('  ')).toBeUndefined();
    expect(resolvedModelOf('a\nb')).toBeUndefined();
    expect(resolvedModelOf('m'.repeat(201))).toBeUndefined();
    expect(resolvedModelOf(' gpt-4.1 ')).toBe('gpt-4.1');
  });
});
