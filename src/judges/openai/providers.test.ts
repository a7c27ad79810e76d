/**
 * The OpenAI-compatible judge against each server's personality (loopback fakes written from
 * the servers' documentation and source), through the real transports, engine and parser.
 * One describe per problem of issue #14's "Why" (1–7); each fails on the code before the fix.
 */
import { describe, expect } from 'vitest';
import { RubricateError } from '../../errors.js';
import { Grader, type GraderOptions } from '../../pipeline/grader.js';
import type { ResultRecord } from '../../results/results.js';
import { normalizeItem } from '../../rubric/normalize.js';
import type { FakeJudge, FakeJudgeRequest } from '../../testing/fake-judge.js';
import { serverPersonality, type PersonalityOptions, type ServerKind } from '../../testing/fake-openai-servers.js';
import { test as base } from '../../testing/vitest-fixtures.js';
import { createJudge } from '../registry.js';
import type { ModelSpec } from '../../spec/run-spec.js';
import type { Judge } from '../types.js';

const test = base.extend<{
  /** A loopback server with this personality (closed after the test). */
  serve: (kind: ServerKind, options?: PersonalityOptions) => Promise<FakeJudge>;
  /** The judge a spec names, built through the registry and pointed at the fake (closed after the test). */
  judgeFor: (fake: FakeJudge, config: JudgeSettings) => Promise<Judge>;
}>({
  serve: async ({ startJudge }, use) => {
    await use((kind, options = {}) => startJudge(serverPersonality(kind, options)));
  },
  judgeFor: async ({ closeAfter }, use) => {
    await use(async (fake, config) => {
      const { spec, baseUrl = fake.baseUrl, apiKey = 'sk-test-key-0123456789', headers, extraBody, ...openai } = config;
      const judge = (await createJudge({ model: spec, endpoint: { baseUrl, headers, extraBody }, openai }, { apiKey }))!;
      closeAfter({ close: () => judge.close?.() });
      return judge;
    });
  },
});

/** The settings these tests vary: the spec, its endpoint and what OpenAI-compatible judges read. */
type JudgeSettings = { spec: string; baseUrl?: string; apiKey?: string } & Pick<NonNullable<ModelSpec['endpoint']>, 'headers' | 'extraBody'> & NonNullable<ModelSpec['openai']>;

function itemWith(criteriaCount: number, id = 'item-1') {
  return normalizeItem({
    id,
    prompt: 'How should I store insulin?',
    response: 'Keep unopened insulin in the fridge; an opened pen can stay at room temperature for about a month.',
    rubric: { criteria: Array.from({ length: criteriaCount }, (_, index) => ({ id: `c${index + 1}`, text: `Criterion number ${index + 1} about insulin storage`, points: 1 })) },
  });
}

async function grade(judge: Judge, options: Partial<GraderOptions> = {}, item = itemWith(2)): Promise<ResultRecord> {
  return new Grader({ judge, scoring: 'weighted_mean', ...options, calls: { maxAttempts: 2, retryBaseDelayMs: 1, ...options.calls } }).gradeItem(item);
}

/** Grading through the grader's stream, which stops and throws when the engine hits a fatal error. */
async function gradeStream(judge: Judge, options: Partial<GraderOptions> = {}): Promise<unknown> {
  const grader = new Grader({ judge, scoring: 'weighted_mean', ...options, calls: { maxAttempts: 3, retryBaseDelayMs: 1, ...options.calls } });
  const records = (async function* () {
    for (let index = 0; index < 3; index += 1) yield { kind: 'item' as const, item: itemWith(2, `item-${index}`), line: index + 1 };
  })();
  try {
    for await (const _record of grader.gradeStream(records)) void _record;
  } catch (error) {
    return error;
  }
  return undefined;
}

const formatOf = (request: FakeJudgeRequest) => (request.body.response_format as { type?: string } | undefined)?.type ?? 'none';

describe.each(['http', 'sdk'] as const)('Why 1: OpenAI reasoning models, over the %s transport', (transport) => {
  test('o3 by name: sends max_completion_tokens and no temperature from the first call', async ({ serve, judgeFor }) => {
    const fake = await serve('openai-reasoning', { models: ['o3'] });
    const result = await grade(await judgeFor(fake, { spec: 'openai:o3', transport }));
    expect(result.status).toBe('ok');
    expect(fake.requests).toHaveLength(2);
    for (const request of fake.requests) {
      expect(request.body.max_completion_tokens).toBeGreaterThanOrEqual(1024);
      expect(request.body).not.toHaveProperty('max_tokens');
      expect(request.body).not.toHaveProperty('temperature');
      expect(formatOf(request)).toBe('json_schema');
    }
  });

  test('an unrecognised name learns each rejected parameter once and keeps JSON schema (no step-down)', async ({ serve, judgeFor }) => {
    const fake = await serve('openai-reasoning', { models: ['company-reasoner'] });
    const judge = await judgeFor(fake, { spec: 'openai:company-reasoner', transport });
    const first = await grade(judge);
    const second = await grade(judge, {}, itemWith(3, 'item-2'));
    expect([first.status, second.status]).toEqual(['ok', 'ok']);
    // max_tokens and temperature are each refused once; every call keeps the JSON schema.
    const refused = fake.requests.filter((request) => request.body.max_tokens !== undefined || request.body.temperature !== undefined);
    expect(refused.length).toBeLessThanOrEqual(4);
    expect(fake.requests.map(formatOf).every((format) => format === 'json_schema')).toBe(true);
    const afterLearning = fake.requests.slice(-3);
    for (const request of afterLearning) {
      expect(request.body.max_completion_tokens).toBeDefined();
      expect(request.body).not.toHaveProperty('temperature');
    }
    expect(second.criteria.every((criterion) => criterion.status === 'ok')).toBe(true);
  });

  test('probability verdicts stop the run at once with exit 4 and the server message', async ({ serve, judgeFor }) => {
    const fake = await serve('openai-reasoning', { models: ['o4-mini'] });
    const error = await gradeStream(await judgeFor(fake, { spec: 'openai:o4-mini', transport }), { plan: { verdict: 'probability' } });
    expect(RubricateError.isInstance(error)).toBe(true);
    expect((error as RubricateError).code).toBe('JUDGE_UNSUPPORTED');
    expect((error as RubricateError).exitCode).toBe(4);
    expect((error as RubricateError).message).toMatch(/'logprobs' is not supported with this model/);
    // Stopped: not one call per criterion per attempt.
    expect(fake.requests.length).toBeLessThanOrEqual(4);
  });

  test('an unknown model stops the run with exit 4 and the server message', async ({ serve, judgeFor }) => {
    const fake = await serve('openai', { models: ['gpt-4.1'] });
    const error = await gradeStream(await judgeFor(fake, { spec: 'openai:gpt-4.2-typo', transport }));
    expect((error as RubricateError).code).toBe('JUDGE_NOT_FOUND');
    expect((error as RubricateError).exitCode).toBe(4);
    expect((error as RubricateError).message).toMatch(/gpt-4\.2-typo` does not exist/);
    expect(fake.requests.length).toBeLessThanOrEqual(2);
  });

  test('hidden reasoning that uses up the budget gets a larger one, up to the model limit, then is reported', async ({ serve, judgeFor }) => {
    const fake = await serve('openai-reasoning', { models: ['o3'], hiddenReasoningTokens: 9000 });
    const result = await grade(await judgeFor(fake, { spec: 'openai:o3', transport }), {}, itemWith(1));
    expect(result.criteria[0].status).toBe('ok');
    const budgets = fake.requests.map((request) => request.body.max_completion_tokens as number);
    expect(budgets[0]).toBeLessThan(9000);
    expect(budgets.at(-1)).toBeGreaterThan(9000);
    expect(result.usage?.completion_tokens).toBeGreaterThan(9000);

    const endless = await serve('openai-reasoning', { models: ['o3'], hiddenReasoningTokens: 10_000_000 });
    const cut = await grade(await judgeFor(endless, { spec: 'openai:o3', transport }), {}, itemWith(1));
    expect(cut.criteria[0].error?.code).toBe('JUDGE_OUTPUT_LIMIT');
    expect(Math.max(...endless.requests.map((request) => request.body.max_completion_tokens as number))).toBe(100_000);
  });
});

describe('Why 1: step-down happens only for complaints about the output format', () => {
  test('still steps down when the server refuses json_schema, and only then', async ({ judgeFor, startJudge }) => {
    let calls = 0;
    const fake = await startJudge((request) => {
      calls += 1;
      if (formatOf(request) === 'json_schema') return { status: 400, body: { error: { message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", type: 'invalid_request_error', param: 'response_format', code: null } } };
      return { content: { explanation: 'ok', criteria_met: true } };
    });
    const result = await grade(await judgeFor(fake, { spec: 'openai:gpt-4-0613' }), {}, itemWith(1));
    expect(result.status).toBe('ok');
    expect(fake.requests.map(formatOf)).toEqual(['json_schema', 'json_object']);
    expect(calls).toBe(2);
  });
});

describe.each(['http', 'sdk'] as const)('Why 2: Gemini array error bodies, over the %s transport', (transport) => {
  test('reads the message, and a schema complaint steps down to JSON mode', async ({ serve, judgeFor }) => {
    const fake = await serve('gemini-compat', { rejectStrictSchema: true });
    const result = await grade(await judgeFor(fake, { spec: 'openai:gemini-2.5-flash', transport, profile: 'generic' }), {}, itemWith(1));
    expect(result.status).toBe('ok');
    expect(fake.requests.map(formatOf)).toEqual(['json_schema', 'json_object']);
  });

  test('an unknown field from --judge-extra-body stops the run with the server message', async ({ serve, judgeFor }) => {
    const fake = await serve('gemini-compat');
    const error = await gradeStream(await judgeFor(fake, { spec: 'openai:gemini-2.5-flash', transport, extraBody: { chat_template_kwargs: { enable_thinking: false } } }));
    expect((error as RubricateError).code).toBe('JUDGE_UNSUPPORTED');
    expect((error as RubricateError).message).toMatch(/Unknown name "chat_template_kwargs": Cannot find field/);
  });

  test('a 404 array body is read and stops the run', async ({ serve, judgeFor }) => {
    const fake = await serve('gemini-compat', { models: ['gemini-2.5-flash'] });
    const error = await gradeStream(await judgeFor(fake, { spec: 'openai:gemini-9-ultra', transport }));
    expect((error as RubricateError).code).toBe('JUDGE_NOT_FOUND');
    expect((error as RubricateError).message).toMatch(/models\/gemini-9-ultra is not found/);
  });

  test('logprobs refused by Gemini: probability verdicts stop the run with its message', async ({ serve, judgeFor }) => {
    const fake = await serve('gemini-compat');
    const error = await gradeStream(await judgeFor(fake, { spec: 'openai:gemini-2.5-flash', transport, profile: 'generic' }), { plan: { verdict: 'probability' } });
    expect((error as RubricateError).code).toBe('JUDGE_UNSUPPORTED');
    expect((error as RubricateError).message).toMatch(/Logprobs is not enabled for models\/gemini-2\.5-flash/);
  });
});

describe('Why 3: probability verdicts read the final answer only', () => {
  const cases: Array<[string, ServerKind, PersonalityOptions]> = [
    ['vLLM reasoning tokens in logprobs, quoting the opposite verdict', 'vllm', { thinking: 'field', thinkingQuotesOpposite: true }],
    ['a <think> block in content quoting the opposite verdict', 'llamacpp', { thinking: 'inline', thinkingQuotesOpposite: true }],
    ['a template-opened think block (only </think>)', 'vllm', { thinking: 'template-opened', thinkingQuotesOpposite: true }],
    ['a tokenizer that merges ":true into one token', 'vllm', { vocabulary: 'colon-merged' }],
    ['a tokenizer that merges true} into one token', 'llamacpp', { vocabulary: 'brace-merged' }],
    ['merged tokens and reasoning together', 'vllm', { vocabulary: 'colon-merged', thinking: 'field', thinkingQuotesOpposite: true }],
  ];
  test.for(cases)('%s', async ([, kind, options], { serve, judgeFor }) => {
    const fake = await serve(kind, { ...options, met: false, pTrue: 0.05 });
    const result = await grade(await judgeFor(fake, { spec: 'openai:Qwen3-8B' }), { plan: { verdict: 'probability' } }, itemWith(1));
    const criterion = result.criteria[0];
    expect(criterion.status).toBe('ok');
    expect(criterion.met).toBe(false);
    expect(criterion.probability).toBeCloseTo(0.05, 6);
    expect(fake.requests[0].body).toMatchObject({ logprobs: true, top_logprobs: 20 });
  });

  test('Anthropic-compat ignores logprobs: the run stops at once instead of failing every criterion', async ({ serve, judgeFor }) => {
    const fake = await serve('anthropic-compat');
    const error = await gradeStream(await judgeFor(fake, { spec: 'openai:claude-sonnet-4-5', profile: 'generic' }), { plan: { verdict: 'probability' } });
    expect((error as RubricateError).code).toBe('JUDGE_UNSUPPORTED');
    expect(fake.requests.length).toBeLessThanOrEqual(3);
  });
});

describe('Why 4: output budgets fit the model', () => {
  test('gpt-4o, 30 criteria in one call: the budget is derived from the reply schema and under the 16 384 limit', async ({ serve, judgeFor }) => {
    const fake = await serve('openai', { models: ['gpt-4o'], maxOutputTokens: 16_384, contextWindow: 128_000 });
    const result = await grade(await judgeFor(fake, { spec: 'openai:gpt-4o' }), { plan: { criteriaPerCall: 'all' } }, itemWith(30));
    expect(result.status).toBe('ok');
    expect(fake.requests).toHaveLength(1);
    const budget = (fake.requests[0].body.max_completion_tokens ?? fake.requests[0].body.max_tokens) as number;
    expect(budget).toBeLessThanOrEqual(16_384);
    expect(budget).toBeGreaterThan(30 * 100);
  });

  test('an unknown model whose limit the server states: the run learns it and splits the batch', async ({ serve, judgeFor }) => {
    const fake = await serve('openai', { maxOutputTokens: 4096 });
    const judge = await judgeFor(fake, { spec: 'openai:small-model', profile: 'openai' });
    const first = await grade(judge, { plan: { criteriaPerCall: 'all' } }, itemWith(30));
    expect(first.status).toBe('ok');
    expect(first.criteria.every((criterion) => criterion.met === true)).toBe(true);
    // "This model supports at most 4096 completion tokens": learned, and the call resent within it.
    expect(fake.requests.map((request) => request.body.max_completion_tokens as number)[1]).toBe(4096);
    expect(judge.capabilities.limits?.maxOutputTokens).toBe(4096);
    // The next item is planned in groups that fit, with no rejected call.
    const before = fake.requests.length;
    const second = await grade(judge, { plan: { criteriaPerCall: 'all' } }, itemWith(30, 'item-2'));
    expect(second.status).toBe('ok');
    const sent = fake.requests.slice(before).map((request) => request.body.max_completion_tokens as number);
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.every((budget) => budget <= 4096)).toBe(true);
  });

  test('vLLM with a small max_model_len: the output-budget overflow is not called "prompt too long" and the batch is split', async ({ serve, judgeFor }) => {
    const fake = await serve('vllm', { contextWindow: 3000 });
    const judge = await judgeFor(fake, { spec: 'openai:Qwen3-8B' });
    const result = await grade(judge, { plan: { criteriaPerCall: 'all' } }, itemWith(30));
    expect(result.status).toBe('ok');
    expect(result.criteria).toHaveLength(30);
    expect(judge.capabilities.limits?.contextWindow).toBe(3000);
    for (const request of fake.requests.slice(1)) expect(request.body.max_tokens as number).toBeLessThan(3000);
  });

  test('llama.cpp "exceeds the available context size" is a context overflow that splits a batch', async ({ serve, judgeFor }) => {
    const fake = await serve('llamacpp', { contextWindow: 700 });
    const result = await grade(await judgeFor(fake, { spec: 'openai:local' }), { plan: { criteriaPerCall: 'all' } }, itemWith(40));
    // The shared prompt fits; forty criterion blocks do not: halves are sent until each fits.
    expect(result.status).toBe('ok');
    expect(fake.requests.length).toBeGreaterThan(2);
  });
});

describe('Why 5: thinking can be turned off, and every reply shape is read', () => {
  test('the extra body reaches the server, turns thinking off, and is in provenance', async ({ serve, judgeFor }) => {
    const fake = await serve('vllm', { thinking: 'field-only' });
    const judge = await judgeFor(fake, { spec: 'openai:Qwen3-8B', extraBody: { chat_template_kwargs: { enable_thinking: false } }, headers: { 'x-api-key': 'tenant-secret-123', 'x-trace': 'run-7' } });
    const result = await grade(judge, {}, itemWith(1));
    expect(result.status).toBe('ok');
    expect(fake.requests[0].body.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(fake.requests[0].headers['x-trace']).toBe('run-7');
    expect(fake.requests[0].headers['x-api-key']).toBe('tenant-secret-123');
    expect(result.judge?.settings).toMatchObject({ extra_body: { chat_template_kwargs: { enable_thinking: false } }, headers: { 'x-api-key': '[REDACTED]', 'x-trace': 'run-7' } });
    expect(JSON.stringify(result)).not.toContain('tenant-secret-123');
  });

  const shapes: Array<[string, ServerKind, PersonalityOptions]> = [
    ['thinking opened by the chat template (only </think>)', 'vllm', { thinking: 'template-opened', thinkingQuotesOpposite: true }],
    ['the answer only in `reasoning` with empty content', 'vllm', { thinking: 'field-only', thinkingQuotesOpposite: true }],
    ['reasoning_content next to the answer (SGLang)', 'sglang', { thinking: 'field' }],
    ['`reasoning` next to the answer (Ollama)', 'ollama', { thinking: 'field' }],
    ['content as an array of parts', 'vllm', { contentParts: true }],
    ['a fenced answer from the Anthropic layer', 'anthropic-compat', {}],
  ];
  test.for(shapes)('%s', async ([, kind, options], { serve, judgeFor }) => {
    const fake = await serve(kind, { ...options, met: false });
    const result = await grade(await judgeFor(fake, { spec: 'openai:some-model' }), {}, itemWith(1));
    expect(result.criteria[0].status).toBe('ok');
    expect(result.criteria[0].met).toBe(false);
    expect(fake.requests).toHaveLength(1);
  });

  test('content_filter is reported as filtered, not as an empty reply, and not retried', async ({ serve, judgeFor }) => {
    const fake = await serve('openai', { contentFilter: true });
    const result = await grade(await judgeFor(fake, { spec: 'openai:gpt-4o' }), { calls: { maxAttempts: 3 } }, itemWith(1));
    expect(result.criteria[0].error?.code).toBe('JUDGE_CONTENT_FILTERED');
    expect(result.criteria[0].error?.message).not.toMatch(/empty reply/);
    expect(fake.requests).toHaveLength(1);
  });

  test('--reasoning-effort is sent as reasoning_effort', async ({ serve, judgeFor }) => {
    const fake = await serve('openai-reasoning', { models: ['gpt-5-mini'] });
    const result = await grade(await judgeFor(fake, { spec: 'openai:gpt-5-mini', reasoningEffort: 'low' }), {}, itemWith(1));
    expect(result.status).toBe('ok');
    expect(fake.requests[0].body.reasoning_effort).toBe('low');
    expect(result.judge?.settings).toMatchObject({ profile: 'openai-reasoning', reasoning_effort: 'low' });
  });
});

describe.each(['http', 'sdk'] as const)('Why 6: Azure OpenAI, over the %s transport', (transport) => {
  const azure = { deployment: 'judge-4o', apiKey: 'azure-key-0123456789' };

  test('classic deployment URL from the resource URL: deployment path, api-version, api-key header', async ({ serve, judgeFor }) => {
    const fake = await serve('azure', { azure });
    const resource = fake.baseUrl.replace(/\/v1$/, '');
    const judge = await judgeFor(fake, { spec: 'azure:judge-4o', baseUrl: resource, apiKey: azure.apiKey, transport, azureApiVersion: '2024-10-21' });
    const result = await grade(judge, {}, itemWith(1));
    expect(result.status).toBe('ok');
    const sent = fake.requests[0];
    expect(sent.path).toBe('/openai/deployments/judge-4o/chat/completions?api-version=2024-10-21');
    expect(sent.headers['api-key']).toBe(azure.apiKey);
    expect(sent.headers.authorization).toBeUndefined();
    expect(result.judge?.id).toBe('azure:judge-4o');
  });

  test('a deployments URL that already carries api-version keeps it', async ({ serve, judgeFor }) => {
    const fake = await serve('azure', { azure });
    const base = `${fake.baseUrl.replace(/\/v1$/, '')}/openai/deployments/judge-4o?api-version=2025-01-01-preview`;
    const result = await grade(await judgeFor(fake, { spec: 'azure:judge-4o', baseUrl: base, apiKey: azure.apiKey, transport }), {}, itemWith(1));
    expect(result.status).toBe('ok');
    expect(fake.requests[0].path).toBe('/openai/deployments/judge-4o/chat/completions?api-version=2025-01-01-preview');
  });

  test('the v1 endpoint form, deployment as model', async ({ serve, judgeFor }) => {
    const fake = await serve('azure', { azure });
    const base = `${fake.baseUrl.replace(/\/v1$/, '')}/openai/v1`;
    const result = await grade(await judgeFor(fake, { spec: 'azure:judge-4o', baseUrl: base, apiKey: azure.apiKey, transport }), {}, itemWith(1));
    expect(result.status).toBe('ok');
    expect(fake.requests[0].path).toBe('/openai/v1/chat/completions');
    expect(fake.requests[0].body.model).toBe('judge-4o');
  });

  test('a reasoning deployment under a custom name is handled with --judge-profile openai-reasoning', async ({ serve, judgeFor }) => {
    const fake = await serve('azure', { azure: { ...azure, reasoning: true } });
    const resource = fake.baseUrl.replace(/\/v1$/, '');
    const result = await grade(await judgeFor(fake, { spec: 'azure:judge-4o', baseUrl: resource, apiKey: azure.apiKey, transport, profile: 'openai-reasoning' }), {}, itemWith(1));
    expect(result.status).toBe('ok');
    expect(fake.requests).toHaveLength(1);
  });
});

describe('Why 7: sampling parameters are validated before any call', () => {
  test('refuses a fractional seed and a temperature above 2 in the library', async ({ serve, judgeFor }) => {
    const fake = await serve('openai');
    const judge = await judgeFor(fake, { spec: 'openai:gpt-4o' });
    expect(() => new Grader({ judge, plan: { sampling: { seed: 1.5 } } })).toThrow(/seed must be an integer/);
    expect(() => new Grader({ judge, plan: { sampling: { temperature: 2.5 } } })).toThrow(/temperature must be between 0 and 2/);
    expect(fake.requests).toHaveLength(0);
  });
});
