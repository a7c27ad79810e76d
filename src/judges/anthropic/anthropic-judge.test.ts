import { describe, expect, it } from 'vitest';
import { GradingEngine } from '../../engine/engine.js';
import { RubricateError } from '../../errors.js';
import { createPerCriterionStrategy } from '../../grading/strategies.js';
import { normalizeItem } from '../../rubric/normalize.js';
import { startFakeAnthropic, type FakeAnthropic, type FakeAnthropicScript } from '../../testing/fake-anthropic.js';
import { test as base } from '../../testing/vitest-fixtures.js';
import type { JudgeRequest } from '../types.js';
import { createAnthropicJudge, toAnthropicMessages } from './anthropic-judge.js';
import { anthropicHttpError, rateLimitResetMilliseconds } from './errors.js';

const schema = { type: 'object', properties: { explanation: { type: 'string' }, criteria_met: { type: 'boolean' } }, required: ['explanation', 'criteria_met'], additionalProperties: false };
const context = `<conversation-x>\nuser: ${'Tell me about fevers in children. '.repeat(200)}\n</conversation-x>\n\n<response-x>\nDrink water.\n</response-x>`;

function request(criterion: string, extra: Partial<JudgeRequest> = {}): JudgeRequest {
  return {
    messages: [
      { role: 'system', content: 'You grade one response against one rubric criterion.' },
      { role: 'user', content: `${context}\n\n<criterion id="${criterion}" points="1">\n${criterion}\n</criterion>` },
    ],
    output: { name: 'criterion_verdict', schema },
    temperature: 0,
    maxTokens: 256,
    seed: 7,
    sharedPrefix: { message: 1, characters: context.length },
    ...extra,
  };
}

/** `judgeWith(script, model)`: a fake Messages API answering with `script`, and the real judge pointed at it (both closed after the test). */
const test = base.extend<{ judgeWith: (script: FakeAnthropicScript, model?: string) => Promise<{ fake: FakeAnthropic; judge: ReturnType<typeof createAnthropicJudge> }> }>({
  judgeWith: async ({ closeAfter }, use) => {
    await use(async (script, model = 'claude-sonnet-4-5') => {
      const fake = closeAfter(await startFakeAnthropic(script));
      return { fake, judge: closeAfter(createAnthropicJudge({ model, baseUrl: fake.baseUrl, apiKey: 'test-anthropic-key' })) };
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

describe('anthropic: judge', () => {
  test('forces the verdict tool, marks the shared prefix for caching, sends no seed, and reads the tool input and usage', async ({ judgeWith }) => {
    const { fake, judge } = await judgeWith(() => ({ input: { explanation: 'It says so.', criteria_met: true } }));
    const reply = await judge.complete(request('A'), { signal: signal() });
    expect(JSON.parse(reply.text)).toEqual({ explanation: 'It says so.', criteria_met: true });
    const sent = fake.requests[0];
    expect(sent.headers['x-api-key']).toBe('test-anthropic-key');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body.seed).toBeUndefined();
    expect(sent.body.tool_choice).toEqual({ type: 'tool', name: 'criterion_verdict', disable_parallel_tool_use: true });
    expect((sent.body.tools as Array<{ input_schema: unknown }>)[0].input_schema).toEqual(schema);
    expect(sent.body.system).toEqual([{ type: 'text', text: 'You grade one response against one rubric criterion.' }]);
    const content = (sent.body.messages as Array<{ content: Array<{ text: string; cache_control?: unknown }> }>)[0].content;
    expect(content[0]).toEqual({ type: 'text', text: context, cache_control: { type: 'ephemeral' } });
    expect(content[1].text).toContain('<criterion id="A"');
    expect(content[1].cache_control).toBeUndefined();
    // First call writes the prefix: the prompt is input + write + read.
    expect(reply.usage.cacheWriteInputTokens).toBeGreaterThan(1024);
    expect(reply.usage.cachedInputTokens).toBe(0);
    expect(reply.usage.inputTokens).toBe(fake.totals.inputTokens);
    expect(reply.finishReason).toBe('tool_use');
  });

  test('sends the calls that share a prefix after the first is answered, so they read the cache instead of each writing it', async ({ judgeWith }) => {
    const { fake, judge } = await judgeWith(async (sent) => {
      // The first call is slow: without the wait, the others would all miss.
      if (sent.index === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      return { input: { explanation: 'ok', criteria_met: true } };
    });
    const replies = await Promise.all(['A', 'B', 'C', 'D', 'E'].map((criterion) => judge.complete(request(criterion), { signal: signal() })));
    const writes = replies.filter((reply) => (reply.usage.cacheWriteInputTokens ?? 0) > 0);
    const reads = replies.filter((reply) => reply.usage.cachedInputTokens > 0);
    expect(writes).toHaveLength(1);
    expect(reads).toHaveLength(4);
    expect(fake.totals.cacheWriteTokens).toBe(reads[0].usage.cachedInputTokens);
  });

  test('puts no breakpoint on a prefix too short to be cached', async ({ judgeWith }) => {
    const { fake, judge } = await judgeWith(() => ({ input: { explanation: 'ok', criteria_met: false } }));
    await judge.complete({ ...request('A'), messages: [{ role: 'user', content: 'short context\n\ncriterion' }], sharedPrefix: { message: 0, characters: 13 } }, { signal: signal() });
    expect(JSON.stringify(fake.requests[0].body)).not.toContain('cache_control');
  });

  it('maps a ChatMessage to content blocks in one place, splitting at the cache point', () => {
    const { system, messages } = toAnthropicMessages(
      [
        { role: 'system', content: 'rules' },
        { role: 'user', content: 'prefix|rest' },
        { role: 'assistant', content: 'ok' },
      ],
      { message: 1, characters: 7 },
    );
    expect(system).toEqual([{ type: 'text', text: 'rules' }]);
    expect(messages[0].content).toEqual([
      { type: 'text', text: 'prefix|', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'rest' },
    ]);
    expect(messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'ok' }] });
  });

  test('asks again with more room when a reply stops at max_tokens, counting every call, and marks a cut at the model limit', async ({ judgeWith }) => {
    const cutBelow = (limit: number): FakeAnthropicScript => (sent) =>
      (sent.body.max_tokens as number) < limit ? { input: {}, stopReason: 'max_tokens' } : { input: { explanation: 'ok', criteria_met: true } };
    const { fake, judge } = await judgeWith(cutBelow(4096));
    const reply = await judge.complete(request('A', { sharedPrefix: undefined }), { signal: signal() });
    expect(fake.requests.map((sent) => sent.body.max_tokens)).toEqual([256, 1024, 4096]);
    expect(reply.finishReason).toBe('tool_use');
    expect(reply.atOutputLimit).toBeUndefined();
    expect(reply.usage.inputTokens).toBe(fake.totals.inputTokens);
    expect(reply.usage.outputTokens).toBe(fake.totals.outputTokens);
    // Claude 3 Haiku writes at most 4,096 tokens: still cut there is final.
    const { fake: haiku, judge: small } = await judgeWith(cutBelow(1e9), 'claude-3-haiku-20240307');
    const cut = await small.complete(request('A', { sharedPrefix: undefined }), { signal: signal() });
    expect(haiku.requests.map((sent) => sent.body.max_tokens)).toEqual([256, 1024, 4096]);
    expect(cut.finishReason).toBe('length');
    expect(cut.atOutputLimit).toBe(true);
    expect(small.capabilities.limits?.maxOutputTokens).toBe(4096);
  });

  test('reads stop_reason refusal as a refusal', async ({ judgeWith }) => {
    const { judge } = await judgeWith(() => ({ refusal: true }));
    const refused = await failure(judge.complete(request('B'), { signal: signal() }));
    expect(refused.code).toBe('JUDGE_REFUSED');
  });

  test('refuses probability verdicts: the API has no token probabilities', async ({ judgeWith }) => {
    const { fake, judge } = await judgeWith(() => ({ input: {} }));
    expect(judge.capabilities.tokenProbabilities).toBe(false);
    const error = await failure(judge.complete(request('A', { logprobs: { top: 5 } }), { signal: signal() }));
    expect(error.code).toBe('JUDGE_UNSUPPORTED');
    expect(fake.requests).toHaveLength(0);
  });

  test('maps the real error bodies and statuses', async ({ judgeWith }) => {
    const cases: Array<[number, string, string]> = [
      [400, 'invalid_request_error', 'JUDGE_REQUEST_REJECTED'],
      [401, 'authentication_error', 'JUDGE_AUTH'],
      [403, 'permission_error', 'JUDGE_AUTH'],
      [404, 'not_found_error', 'JUDGE_NOT_FOUND'],
      [413, 'request_too_large', 'JUDGE_CONTEXT_OVERFLOW'],
      [429, 'rate_limit_error', 'JUDGE_RATE_LIMITED'],
      [500, 'api_error', 'JUDGE_SERVER_ERROR'],
      [529, 'overloaded_error', 'JUDGE_SERVER_ERROR'],
    ];
    const { judge } = await judgeWith((sent) => {
      const [status, type] = cases[sent.index];
      return { status, type, message: `${type} happened`, headers: status === 429 ? { 'retry-after': '3' } : ({} as Record<string, string>) };
    });
    for (const [status, type, code] of cases) {
      const error = await failure(judge.complete(request('A'), { signal: signal() }));
      expect(error.code, `${status}`).toBe(code);
      expect(error.message).toContain(`${type} happened`);
      expect(error.details.status).toBe(status);
      expect(error.details.requestId).toMatch(/^req_/);
      if (status === 429) expect(error.details.retryAfterMs).toBe(3000);
    }
  });

  it('reads "prompt is too long" as a context overflow and the rate-limit reset header as the wait', () => {
    const overflow = anthropicHttpError(400, {}, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }, 'e');
    expect(overflow.code).toBe('JUDGE_CONTEXT_OVERFLOW');
    expect(overflow.details.overflow).toEqual({ cause: 'prompt', promptTokens: 210000, contextWindow: 200000 });
    const budget = anthropicHttpError(400, {}, { type: 'error', error: { type: 'invalid_request_error', message: 'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again' } }, 'e');
    expect(budget.code).toBe('JUDGE_CONTEXT_OVERFLOW');
    expect((budget.details.overflow as { cause: string }).cause).toBe('output');
    const now = Date.parse('2026-01-01T00:00:00Z');
    const headers = { 'anthropic-ratelimit-tokens-remaining': '0', 'anthropic-ratelimit-tokens-reset': '2026-01-01T00:00:12Z', 'anthropic-ratelimit-requests-remaining': '10', 'anthropic-ratelimit-requests-reset': '2026-01-01T00:01:00Z' };
    expect(rateLimitResetMilliseconds(headers, now)).toBe(12_000);
  });

  test('is refused by the fake when it breaks a request rule (the fake enforces them)', async ({ closeAfter }) => {
    const fake = closeAfter(await startFakeAnthropic());
    const judge = closeAfter(createAnthropicJudge({ model: 'claude-sonnet-4-5', baseUrl: fake.baseUrl, apiKey: 'test-anthropic-key', extraBody: { seed: 1 } }));
    const error = await failure(judge.complete(request('A'), { signal: signal() }));
    expect(error.code).toBe('JUDGE_REQUEST_REJECTED');
    expect(error.message).toContain('seed: Extra inputs are not permitted');
  });

  test('lowers the engine\'s concurrency on 529 overloaded, as on 429', async ({ judgeWith }) => {
    let arrived = 0;
    let releaseWave!: () => void;
    const wave = new Promise<void>((resolve) => (releaseWave = resolve));
    const { judge } = await judgeWith(async (sent) => {
      if (sent.index < 4) {
        arrived += 1;
        if (arrived === 4) releaseWave();
        await wave;
        return { status: 529, message: 'Overloaded' };
      }
      return { input: { explanation: 'ok', criteria_met: true } };
    });
    const engine = new GradingEngine({ judge, strategy: createPerCriterionStrategy({ sampling: { temperature: 0, maxTokens: 64 } }), calls: { concurrency: 4, retryBaseDelayMs: 1, retryMaxDelayMs: 2 } });
    const item = normalizeItem({ id: 'x', prompt: 'q', response: 'r', rubric: { criteria: ['a', 'b', 'c', 'd'].map((id) => ({ id, text: `criterion ${id}`, points: 1 })) } });
    const graded = await engine.gradeItem(item);
    expect(graded.status).toBe('ok');
    expect(graded.usage.retries).toBe(4);
    expect(engine['limiter'].currentLimit).toBeLessThan(4);
  });
});
