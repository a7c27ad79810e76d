import { describe, expect, vi } from 'vitest';
import { RubricateError } from '../../errors.js';
import { test } from '../../testing/vitest-fixtures.js';
import type { JudgeRequest } from '../types.js';
import { retryAfterMilliseconds } from './http-errors.js';

const request: JudgeRequest = {
  messages: [
    { role: 'system', content: 'grade' },
    { role: 'user', content: 'text' },
  ],
  output: { name: 'criterion_verdict', schema: { type: 'object', properties: { criteria_met: { type: 'boolean' } }, required: ['criteria_met'] } },
  temperature: 0,
  maxTokens: 64,
};

const clientOptions = (transport: 'http' | 'sdk' = 'http') => ({ model: 'judge-model', apiKey: 'secret', transport });

async function failure(promise: Promise<unknown>): Promise<RubricateError> {
  try {
    await promise;
  } catch (error) {
    if (RubricateError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected failure');
}

const signal = () => new AbortController().signal;

describe.each(['http', 'sdk'] as const)('OpenAI-compatible judge over %s', (transport) => {
  test('sends model, messages, sampling, a strict JSON schema and the key; reads content and usage', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: { criteria_met: true }, usage: { prompt_tokens: 321, completion_tokens: 12, cached_tokens: 300 } }), clientOptions(transport));
    const reply = await judge.complete(request, { signal: signal() });
    expect(reply.text).toBe('{"criteria_met":true}');
    expect(reply.usage).toEqual({ inputTokens: 321, outputTokens: 12, cachedInputTokens: 300 });
    const sent = fake.requests[0];
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer secret');
    expect(sent.body).toMatchObject({
      model: 'judge-model',
      messages: request.messages,
      temperature: 0,
      max_tokens: 64,
      response_format: { type: 'json_schema', json_schema: { name: 'criterion_verdict', strict: true } },
    });
  });

  test('maps 429 with Retry-After, 5xx, 401 and context overflow to coded errors', async ({ scriptedJudge }) => {
    const answers = [
      { status: 429, headers: { 'retry-after': '2' } },
      { status: 503 },
      { status: 401, body: { error: { message: 'bad key' } } },
      { status: 400, body: { error: { message: "This model's maximum context length is 8192 tokens" } } },
    ];
    const { judge } = await scriptedJudge((incoming) => answers[incoming.index], clientOptions(transport));
    const rateLimited = await failure(judge.complete(request, { signal: signal() }));
    expect(rateLimited.code).toBe('JUDGE_RATE_LIMITED');
    expect(rateLimited.details.retryAfterMs).toBe(2000);
    expect((await failure(judge.complete(request, { signal: signal() }))).code).toBe('JUDGE_SERVER_ERROR');
    const auth = await failure(judge.complete(request, { signal: signal() }));
    expect(auth.code).toBe('JUDGE_AUTH');
    expect(auth.message).toMatch(/bad key/);
    expect((await failure(judge.complete(request, { signal: signal() }))).code).toBe('JUDGE_CONTEXT_OVERFLOW');
  });

  test('steps down from JSON schema to JSON mode to plain text when the server refuses, and remembers it', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((incoming) => {
      const format = incoming.body.response_format as { type?: string } | undefined;
      if (format?.type === 'json_schema') return { status: 400, body: { error: { message: 'response_format json_schema is not supported' } } };
      if (format?.type === 'json_object') return { status: 400, body: { error: { message: 'unknown field response_format' } } };
      return { content: '{"criteria_met": false}' };
    }, clientOptions(transport));
    expect((await judge.complete(request, { signal: signal() })).text).toBe('{"criteria_met": false}');
    expect(fake.requests.map((incoming) => (incoming.body.response_format as { type?: string } | undefined)?.type ?? 'none')).toEqual(['json_schema', 'json_object', 'none']);
    await judge.complete(request, { signal: signal() });
    expect(fake.requests).toHaveLength(4);
  });

  test('reports a refusal, and a dropped connection as a connection error', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge((incoming) => (incoming.index === 0 ? { content: '', refusal: 'I cannot help with that' } : { destroy: true }), clientOptions(transport));
    expect((await failure(judge.complete(request, { signal: signal() }))).code).toBe('JUDGE_REFUSED');
    expect((await failure(judge.complete(request, { signal: signal() }))).code).toBe('JUDGE_CONNECTION');
  });

  test('aborts a hanging call with the reason given to the signal', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ hang: true }), clientOptions(transport));
    const controller = new AbortController();
    const pending = failure(judge.complete(request, { signal: controller.signal }));
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
    controller.abort(new RubricateError('JUDGE_TIMEOUT', 'too slow'));
    const error = await pending;
    expect(error.code).toBe('JUDGE_TIMEOUT');
  });
});

describe('OpenAI-compatible judge details', () => {
  test('asks for and reads token log-probabilities', async ({ scriptedJudge }) => {
    const logprobs = { content: [{ token: 'true', logprob: -0.1, top_logprobs: [{ token: 'true', logprob: -0.1 }, { token: 'false', logprob: -2.4 }] }] };
    const { fake, judge } = await scriptedJudge(() => ({ content: 'true', logprobs }), clientOptions());
    const reply = await judge.complete({ ...request, logprobs: { top: 5 } }, { signal: signal() });
    expect(fake.requests[0].body).toMatchObject({ logprobs: true, top_logprobs: 5 });
    expect(reply.tokenProbabilities?.[0].top).toEqual([
      { token: 'true', logprob: -0.1 },
      { token: 'false', logprob: -2.4 },
    ]);
  });

  test('treats a 200 that is not a chat completion as a server error', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge((incoming) => (incoming.index === 0 ? { rawBody: '{"choices": [' } : { rawBody: '{"object": "list"}' }), clientOptions());
    expect((await failure(judge.complete(request, { signal: signal() }))).code).toBe('JUDGE_SERVER_ERROR');
    expect((await failure(judge.complete(request, { signal: signal() }))).message).toMatch(/no choices/);
  });

  test('parses Retry-After as seconds, HTTP dates and retry-after-ms', () => {
    expect(retryAfterMilliseconds({ 'retry-after': '1.5' })).toBe(1500);
    expect(retryAfterMilliseconds({ 'retry-after-ms': '250', 'retry-after': '9' })).toBe(250);
    expect(retryAfterMilliseconds({ 'retry-after': new Date(10_000).toUTCString() }, 4_000)).toBe(6_000);
    expect(retryAfterMilliseconds({})).toBeUndefined();
  });
});
