import { describe, expect, it } from 'vitest';
import { httpStatusToError, readErrorBody } from './openai/http-errors.js';
import { azureEndpoint } from './openai/azure.js';
import { chatCompletionsUrl } from './openai/transport.js';
import { readBudgetOverflow } from './overflow.js';
import { chooseProfile, isOpenAIReasoningModel, modelLimitsFor } from './profiles.js';

describe('capability profiles', () => {
  it('are chosen from the endpoint and the model name, and can be overridden', () => {
    const pick = (model: string, baseUrl: string, provider = 'openai', override?: string) => chooseProfile({ provider, model, baseUrl, override }).name;
    expect(pick('o3', 'https://api.openai.com/v1')).toBe('openai-reasoning');
    expect(pick('gpt-5-mini', 'http://proxy:4000/v1')).toBe('openai-reasoning');
    expect(pick('gpt-5-chat-latest', 'https://api.openai.com/v1')).toBe('openai');
    expect(pick('gpt-4.1', 'https://api.openai.com/v1')).toBe('openai');
    expect(pick('my-deployment', 'https://res.openai.azure.com', 'azure')).toBe('openai');
    expect(pick('qwen3:8b', 'http://localhost:11434/v1')).toBe('ollama');
    expect(pick('Qwen3-8B', 'http://vllm:8000/v1')).toBe('generic');
    expect(pick('claude-sonnet-4-5', 'https://api.anthropic.com/v1/')).toBe('anthropic-compat');
    expect(pick('gemini-2.5-flash', 'https://generativelanguage.googleapis.com/v1beta/openai/')).toBe('gemini-compat');
    expect(pick('o3', 'http://vllm:8000/v1', 'openai', 'vllm')).toBe('vllm');
    expect(() => pick('m', 'http://x/v1', 'openai', 'nope')).toThrow(/unknown judge profile "nope"/);
  });

  it('carry the traits each endpoint needs', () => {
    const reasoning = chooseProfile({ provider: 'openai', model: 'o4-mini', baseUrl: 'https://api.openai.com/v1' });
    expect(reasoning).toMatchObject({ tokenLimitField: 'max_completion_tokens', temperature: false, logprobs: 'rejected', reasoning: true, maxOutputTokens: 100_000, contextWindow: 200_000 });
    const ollama = chooseProfile({ provider: 'openai', model: 'llama3', baseUrl: 'http://127.0.0.1:11434/v1' });
    expect(ollama).toMatchObject({ tokenLimitField: 'max_tokens', logprobs: 'supported' });
    expect(ollama.maxOutputTokens).toBeUndefined();
    const anthropic = chooseProfile({ provider: 'openai', model: 'claude-opus-4-1', baseUrl: 'https://api.anthropic.com/v1/' });
    expect(anthropic).toMatchObject({ seed: false, structuredOutput: 'none', logprobs: 'ignored', maxTemperature: 1, maxOutputTokens: 32_000 });
  });

  it('know published model limits by name, with routing prefixes', () => {
    expect(modelLimitsFor('gpt-4o')).toEqual({ maxOutputTokens: 16_384, contextWindow: 128_000 });
    expect(modelLimitsFor('openai/gpt-4.1-mini').maxOutputTokens).toBe(32_768);
    expect(modelLimitsFor('models/gemini-2.5-pro').contextWindow).toBe(1_048_576);
    expect(modelLimitsFor('claude-sonnet-4-5-20250929').maxOutputTokens).toBe(64_000);
    expect(modelLimitsFor('Qwen3-32B')).toEqual({});
    expect(isOpenAIReasoningModel('o1')).toBe(true);
    expect(isOpenAIReasoningModel('omni-moderation')).toBe(false);
  });
});

describe('budget overflows as each server words them', () => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['OpenAI output limit', 'max_tokens is too large: 30720. This model supports at most 16384 completion tokens, whereas you provided 30720.', { cause: 'output', maxOutputTokens: 16384, requestedOutputTokens: 30720 }],
    ['OpenAI context', "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (1000 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.", { cause: 'output', contextWindow: 8192, promptTokens: 1000 }],
    ['OpenAI prompt alone', "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.", { cause: 'prompt', contextWindow: 128000 }],
    ['vLLM output budget', "You passed 1200 input tokens and requested 30720 output tokens. However, the model's context length is only 8192 tokens, resulting in a maximum input length of -22528 tokens.", { cause: 'output', promptTokens: 1200, contextWindow: 8192 }],
    ['vLLM prompt', "You passed 9000 input tokens and requested 100 output tokens. However, the model's context length is only 8192 tokens.", { cause: 'prompt' }],
    ['vLLM max_model_len', 'max_tokens=30720 cannot be greater than max_model_len=8192. Please request fewer output tokens.', { cause: 'output', contextWindow: 8192 }],
    ['llama.cpp', 'request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it', { cause: 'prompt', promptTokens: 9000, contextWindow: 8192 }],
    ['llama.cpp, older builds', 'the request exceeds the available context size, try increasing it', { cause: 'prompt' }],
    ['Anthropic prompt', 'prompt is too long: 210000 tokens > 200000 maximum', { cause: 'prompt', contextWindow: 200000 }],
    ['Anthropic budget', 'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again', { cause: 'output', promptTokens: 188240 }],
    ['Anthropic output limit', 'max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5', { cause: 'output', maxOutputTokens: 64000 }],
    ['Gemini', 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', { cause: 'prompt', contextWindow: 1048576 }],
  ];
  it.each(cases)('%s', (_name, message, expected) => {
    expect(readBudgetOverflow(message)).toMatchObject(expected);
    const error = httpStatusToError(400, {}, { error: { message } }, 'http://judge/v1/chat/completions');
    expect(error.code).toBe('JUDGE_CONTEXT_OVERFLOW');
    if (expected.cause === 'output') expect(error.message).not.toMatch(/prompt too long/);
  });

  it('leaves other rejections alone', () => {
    expect(readBudgetOverflow("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")).toBeUndefined();
  });
});

describe('error bodies of every shape', () => {
  it('reads OpenAI, Anthropic, vLLM flat, FastAPI, Gemini array and text bodies', () => {
    expect(readErrorBody({ error: { message: 'm', type: 'invalid_request_error', param: 'max_tokens', code: 'unsupported_parameter' } })).toMatchObject({ message: 'm', param: 'max_tokens', code: 'unsupported_parameter' });
    expect(readErrorBody({ type: 'error', error: { type: 'invalid_request_error', message: 'a' } }).message).toBe('a');
    expect(readErrorBody({ object: 'error', message: 'v', type: 'BadRequestError', param: null, code: 400 })).toMatchObject({ message: 'v', code: '400' });
    expect(readErrorBody({ detail: [{ loc: ['body', 'chat_template_kwargs'], msg: 'Extra inputs are not permitted' }] }).message).toBe('body.chat_template_kwargs: Extra inputs are not permitted');
    expect(readErrorBody([{ error: { code: 400, message: 'Invalid JSON payload received. Unknown name "x": Cannot find field.', status: 'INVALID_ARGUMENT' } }]).message).toMatch(/Unknown name "x"/);
    expect(readErrorBody('upstream connect error').message).toBe('upstream connect error');
  });

  it('maps 404 to not found and content filters to filtered', () => {
    expect(httpStatusToError(404, {}, { error: { message: 'The model `x` does not exist.' } }, 'e').code).toBe('JUDGE_NOT_FOUND');
    expect(httpStatusToError(400, {}, { error: { message: 'The response was filtered', param: 'prompt', code: 'content_filter' } }, 'e').code).toBe('JUDGE_CONTENT_FILTERED');
  });
});

describe('URLs', () => {
  it('keep the base path and query', () => {
    expect(chatCompletionsUrl('http://h:8000/v1').toString()).toBe('http://h:8000/v1/chat/completions');
    expect(chatCompletionsUrl('http://h/openai/deployments/d?api-version=1').toString()).toBe('http://h/openai/deployments/d/chat/completions?api-version=1');
    expect(() => chatCompletionsUrl('ftp://h')).toThrow(/http or https/);
  });

  it('build both Azure forms', () => {
    expect(azureEndpoint('https://res.openai.azure.com', 'dep', undefined)).toEqual({ form: 'classic', baseUrl: 'https://res.openai.azure.com/openai/deployments/dep', query: { 'api-version': '2024-10-21' } });
    expect(azureEndpoint('https://res.openai.azure.com/openai/deployments/other?api-version=2025-01-01-preview', 'dep').baseUrl).toBe('https://res.openai.azure.com/openai/deployments/other');
    expect(azureEndpoint('https://res.openai.azure.com/openai/v1/', 'dep')).toEqual({ form: 'v1', baseUrl: 'https://res.openai.azure.com/openai/v1', query: {} });
  });
});
