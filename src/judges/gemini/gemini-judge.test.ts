import { describe, expect, it } from 'vitest';
import { RubricateError } from '../../errors.js';
import { probabilityOfMet } from '../../grading/verdicts.js';
import { startFakeGemini, type FakeGemini, type FakeGeminiOptions, type FakeGeminiScript } from '../../testing/fake-gemini.js';
import { test as base } from '../../testing/vitest-fixtures.js';
import type { JudgeRequest } from '../types.js';
import { geminiHttpError } from './errors.js';
import { createGeminiJudge, thinkingFor } from './gemini-judge.js';
import { toGeminiSchema } from './response-schema.js';

const schema = { type: 'object', properties: { explanation: { type: 'string' }, criteria_met: { type: 'boolean' } }, required: ['explanation', 'criteria_met'], additionalProperties: false };
const request: JudgeRequest = {
  messages: [
    { role: 'system', content: 'You grade one response against one rubric criterion.' },
    { role: 'user', content: `${'<conversation-x>\nuser: a long question\n</conversation-x>\n'.repeat(150)}\n\n<criterion id="A" points="1">\nMentions water\n</criterion>` },
  ],
  output: { name: 'criterion_verdict', schema },
  temperature: 0,
  maxTokens: 256,
  seed: 3,
};

type GeminiJudge = ReturnType<typeof createGeminiJudge>;

/** `judgeWith(script, model, options, thinkingBudget)`: a fake generateContent API answering with `script`, and the real judge pointed at it (both closed after the test). */
const test = base.extend<{ judgeWith: (script: FakeGeminiScript, model?: string, options?: FakeGeminiOptions, thinkingBudget?: number) => Promise<{ fake: FakeGemini; judge: GeminiJudge }> }>({
  judgeWith: async ({ closeAfter }, use) => {
    await use(async (script, model = 'gemini-2.5-flash', options = {}, thinkingBudget) => {
      const fake = closeAfter(await startFakeGemini(script, options));
      return { fake, judge: closeAfter(createGeminiJudge({ model, baseUrl: fake.baseUrl, apiKey: 'test-gemini-key', thinkingBudget })) };
    });
  },
});

const signal = () => new AbortController().signal;

async function failure(promise: Promise<unknown>): Promise<RubricateError> {
  try {
    await promise;
  } catch (error) {
    if (RubricateError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('gemini: judge', () => {
  test('sends systemInstruction, a converted responseSchema, thinking off and the key header; reads text and usage', async ({ judgeWith }) => {
    const { fake, judge } = await judgeWith(() => ({ json: { explanation: 'Yes.', criteria_met: true } }));
    const reply = await judge.complete(request, { signal: signal() });
    expect(JSON.parse(reply.text)).toEqual({ explanation: 'Yes.', criteria_met: true });
    const sent = fake.requests[0];
    expect(sent.headers['x-goog-api-key']).toBe('test-gemini-key');
    expect(sent.body.systemInstruction).toEqual({ parts: [{ text: 'You grade one response against one rubric criterion.' }] });
    expect((sent.body.contents as unknown[])[0]).toMatchObject({ role: 'user' });
    expect(sent.body.generationConfig).toEqual({
      temperature: 0,
      maxOutputTokens: 256,
      seed: 3,
      responseMimeType: 'application/json',
      responseSchema: {
        type: 'OBJECT',
        properties: { explanation: { type: 'STRING' }, criteria_met: { type: 'BOOLEAN' } },
        propertyOrdering: ['explanation', 'criteria_met'],
        required: ['explanation', 'criteria_met'],
      },
      thinkingConfig: { thinkingBudget: 0, includeThoughts: false },
    });
    expect(reply.usage.inputTokens).toBeGreaterThan(1000);
    expect(reply.usage.cachedInputTokens).toBe(0);
    expect(reply.finishReason).toBe('stop');
  });

  test('counts implicitly cached input and thinking tokens (billed as output)', async ({ judgeWith }) => {
    const { fake, judge } = await judgeWith(() => ({ json: { explanation: 'ok', criteria_met: false }, thoughtsTokens: 40 }), 'gemini-2.5-pro');
    const first = await judge.complete(request, { signal: signal() });
    const second = await judge.complete(request, { signal: signal() });
    expect(first.usage.cachedInputTokens).toBe(0);
    expect(second.usage.cachedInputTokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage.outputTokens).toBe(first.usage.outputTokens);
    expect(first.usage.outputTokens).toBeGreaterThan(40);
    // 2.5 Pro cannot think less than 128 tokens: the smallest budget, with room for it in the output cap.
    expect((fake.requests[0].body.generationConfig as Record<string, unknown>).thinkingConfig).toEqual({ thinkingBudget: 128, includeThoughts: false });
    expect((fake.requests[0].body.generationConfig as Record<string, unknown>).maxOutputTokens).toBe(256 + 128);
  });

  test('is refused by the fake for JSON-Schema-only keywords and for turning thinking off on 2.5 Pro (the rules it enforces)', async ({ closeAfter }) => {
    const fake = closeAfter(await startFakeGemini());
    const raw = closeAfter(createGeminiJudge({ model: 'gemini-2.5-flash', baseUrl: fake.baseUrl, apiKey: 'test-gemini-key', extraBody: { generationConfig: { responseSchema: schema } } }));
    const unknown = await failure(raw.complete(request, { signal: signal() }));
    expect(unknown.code).toBe('JUDGE_REQUEST_REJECTED');
    expect(unknown.message).toContain('Unknown name "additionalProperties"');
    const pro = closeAfter(createGeminiJudge({ model: 'gemini-2.5-pro', baseUrl: fake.baseUrl, apiKey: 'test-gemini-key', thinkingBudget: 0 }));
    const budget = await failure(pro.complete(request, { signal: signal() }));
    expect(budget.message).toContain('only works in thinking mode');
  });

  test('reports blocked prompts and safety/recitation finishes as filtered content', async ({ judgeWith }) => {
    const actions = [{ blockReason: 'SAFETY' as const }, { finishReason: 'SAFETY' as const }, { finishReason: 'RECITATION' as const }];
    const { judge } = await judgeWith((sent) => actions[sent.index]);
    const blocked = await failure(judge.complete(request, { signal: signal() }));
    expect(blocked.code).toBe('JUDGE_CONTENT_FILTERED');
    expect(blocked.message).toContain('blocked the prompt (SAFETY)');
    expect((await failure(judge.complete(request, { signal: signal() }))).message).toContain('finishReason SAFETY');
    expect((await failure(judge.complete(request, { signal: signal() }))).message).toContain('finishReason RECITATION');
  });

  test('asks again with a larger maxOutputTokens when the reply stops at MAX_TOKENS, up to the model limit', async ({ judgeWith }) => {
    const { fake, judge } = await judgeWith((sent) =>
      ((sent.body.generationConfig as { maxOutputTokens: number }).maxOutputTokens < 1024 ? { json: '{"explanation": "cut', finishReason: 'MAX_TOKENS' } : { json: { explanation: 'ok', criteria_met: true } }),
    );
    const reply = await judge.complete(request, { signal: signal() });
    expect(fake.requests.map((sent) => (sent.body.generationConfig as { maxOutputTokens: number }).maxOutputTokens)).toEqual([256, 1024]);
    expect(reply.finishReason).toBe('stop');
    expect(reply.usage.inputTokens).toBeGreaterThan(2 * 1000);
    expect(judge.capabilities.limits?.maxOutputTokens).toBe(65_536);
  });

  test('asks for logprobs and reads them into P(met); a model without them stops the run', async ({ judgeWith }) => {
    const tokens = ['{"', 'explanation', '":"', 'ok', '","', 'criteria', '_met', '":', 'true', '}'];
    const logprobs = tokens.map((token) => ({
      token,
      logProbability: token === 'true' ? Math.log(0.8) : 0,
      top: token === 'true' ? [{ token: 'true', logProbability: Math.log(0.8) }, { token: 'false', logProbability: Math.log(0.2) }] : [{ token, logProbability: 0 }],
    }));
    const { fake, judge } = await judgeWith(() => ({ json: tokens.join(''), logprobs }), 'gemini-2.0-flash', { logprobModels: ['gemini-2.0-flash'] });
    const reply = await judge.complete({ ...request, logprobs: { top: 5 } }, { signal: signal() });
    expect((fake.requests[0].body.generationConfig as Record<string, unknown>).responseLogprobs).toBe(true);
    expect((fake.requests[0].body.generationConfig as Record<string, unknown>).logprobs).toBe(5);
    expect(probabilityOfMet(reply)).toBeCloseTo(0.8, 6);
    const { judge: without } = await judgeWith(() => ({ json: {} }), 'gemini-2.5-flash');
    const error = await failure(without.complete({ ...request, logprobs: { top: 5 } }, { signal: signal() }));
    expect(error.code).toBe('JUDGE_UNSUPPORTED');
  });

  test('maps the real error bodies: bad key, missing key, unknown model, quota with RetryInfo, overload', async ({ closeAfter }) => {
    const fake = closeAfter(
      await startFakeGemini(() => ({ status: 429, statusName: 'RESOURCE_EXHAUSTED', message: 'You exceeded your current quota.', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '17s' }] }), {
        models: ['gemini-2.5-flash'],
      }),
    );
    const badKey = closeAfter(createGeminiJudge({ model: 'gemini-2.5-flash', baseUrl: fake.baseUrl, apiKey: 'wrong' }));
    expect((await failure(badKey.complete(request, { signal: signal() }))).code).toBe('JUDGE_AUTH');
    const noKey = closeAfter(createGeminiJudge({ model: 'gemini-2.5-flash', baseUrl: fake.baseUrl }));
    expect((await failure(noKey.complete(request, { signal: signal() }))).code).toBe('JUDGE_AUTH');
    const unknownModel = closeAfter(createGeminiJudge({ model: 'gemini-9', baseUrl: fake.baseUrl, apiKey: 'test-gemini-key' }));
    const notFound = await failure(unknownModel.complete(request, { signal: signal() }));
    expect(notFound.code).toBe('JUDGE_NOT_FOUND');
    expect(notFound.message).toContain('models/gemini-9 is not found');
    const judge = closeAfter(createGeminiJudge({ model: 'gemini-2.5-flash', baseUrl: fake.baseUrl, apiKey: 'test-gemini-key' }));
    const quota = await failure(judge.complete(request, { signal: signal() }));
    expect(quota.code).toBe('JUDGE_RATE_LIMITED');
    expect(quota.details.retryAfterMs).toBe(17_000);
    const overloaded = geminiHttpError(503, {}, { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }, 'e');
    expect(overloaded.code).toBe('JUDGE_SERVER_ERROR');
    expect(overloaded.details.status).toBe(503);
    expect(overloaded.message).toContain('The model is overloaded');
    const tooLong = geminiHttpError(400, {}, { error: { code: 400, message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', status: 'INVALID_ARGUMENT' } }, 'e');
    expect(tooLong.code).toBe('JUDGE_CONTEXT_OVERFLOW');
  });

  it('converts schemas to the OpenAPI subset and picks thinking settings by model', () => {
    expect(toGeminiSchema({ type: 'object', properties: { choice: { type: 'string', enum: ['1', '2'] }, note: { type: ['string', 'null'] } }, additionalProperties: false })).toEqual({
      type: 'OBJECT',
      properties: { choice: { type: 'STRING', enum: ['1', '2'] }, note: { type: 'STRING', nullable: true } },
      propertyOrdering: ['choice', 'note'],
    });
    // An optional object, as the rubric generator's "check" is: one nullable object (Gemini has no "null" type).
    const check = { type: 'object', properties: { type: { type: 'string' } }, required: ['type'] };
    expect(toGeminiSchema({ type: 'object', properties: { check: { anyOf: [check, { type: 'null' }] } } })).toEqual({
      type: 'OBJECT',
      properties: { check: { type: 'OBJECT', properties: { type: { type: 'STRING' } }, propertyOrdering: ['type'], required: ['type'], nullable: true } },
      propertyOrdering: ['check'],
    });
    expect(thinkingFor('gemini-2.0-flash', undefined)).toEqual({ allowance: 0 });
    expect(thinkingFor('gemini-2.5-flash-lite', undefined).config).toEqual({ thinkingBudget: 0, includeThoughts: false });
    expect(thinkingFor('gemini-2.5-flash', 512)).toEqual({ config: { thinkingBudget: 512, includeThoughts: false }, allowance: 512 });
    expect(() => thinkingFor('gemini-2.5-flash', -2)).toThrow(/thinking-budget/);
  });
});
