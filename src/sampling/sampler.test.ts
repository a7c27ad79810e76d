/**
 * The model under test through each provider kind's real client, against its loopback fake
 * (OpenAI-compatible: test/cli-eval.test.ts): a response with its provenance, the settings sent,
 * the store answering a second time, and a refusal, an empty answer and a timeout as the item's
 * error, never a response.
 */
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { startFakeAnthropic, type FakeAnthropicScript } from '../testing/fake-anthropic.js';
import { startFakeGemini, type FakeGeminiScript } from '../testing/fake-gemini.js';
import { createJudge } from '../judges/registry.js';
import { normalizeItem } from '../rubric/normalize.js';
import { SqliteReplyStore } from '../store/sqlite.js';
import type { ModelSpec } from '../spec/run-spec.js';
import { Sampler } from './sampler.js';

const item = (question: string) => normalizeItem({ id: question, prompt: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: question }], response: '', rubric: { criteria: [{ text: 'Answers', points: 1 }] } });

interface Provider {
  name: string;
  spec: (baseUrl: string) => ModelSpec;
  apiKey: string;
  /** How the provider says no: Anthropic's refusal stop, Gemini's safety finish. */
  refusal: string;
  start: (answer: (question: string) => 'answer' | 'refuse' | 'empty' | 'hang') => Promise<{ baseUrl: string; calls: () => number; lastBody: () => Record<string, unknown>; close: () => Promise<void> }>;
}

const providers: Provider[] = [
  {
    name: 'anthropic',
    spec: (baseUrl) => ({ model: 'anthropic:claude-sonnet-4-5', endpoint: { baseUrl } }),
    apiKey: 'test-anthropic-key',
    refusal: 'JUDGE_REFUSED',
    start: async (answer) => {
      const script: FakeAnthropicScript = (request) => {
        const kind = answer(request.userText);
        return kind === 'refuse' ? { refusal: true } : kind === 'hang' ? { hang: true } : { text: kind === 'empty' ? '' : `Answer: ${request.userText}` };
      };
      const fake = await startFakeAnthropic(script);
      return { baseUrl: fake.baseUrl, calls: () => fake.requests.length, lastBody: () => fake.requests.at(-1)!.body, close: () => fake.close() };
    },
  },
  {
    name: 'gemini',
    spec: (baseUrl) => ({ model: 'gemini:gemini-2.5-flash', endpoint: { baseUrl } }),
    apiKey: 'test-gemini-key',
    refusal: 'JUDGE_CONTENT_FILTERED',
    start: async (answer) => {
      const script: FakeGeminiScript = (request) => {
        const kind = answer(request.userText);
        return kind === 'refuse' ? { finishReason: 'SAFETY' } : kind === 'hang' ? { hang: true } : { text: kind === 'empty' ? ' ' : `Answer: ${request.userText}` };
      };
      const fake = await startFakeGemini(script);
      return { baseUrl: fake.baseUrl, calls: () => fake.requests.length, lastBody: () => fake.requests.at(-1)!.body, close: () => fake.close() };
    },
  },
];

describe.for(providers)('sampling through $name', { concurrent: true }, (provider) => {
  test('a response with its provenance and settings; the store answers the same sample again', async ({ tempDir, closeAfter }) => {
    const fake = closeAfter(await provider.start(() => 'answer'));
    const spec = provider.spec(fake.baseUrl);
    const model = (await createJudge(spec, { apiKey: provider.apiKey }))!;
    closeAfter({ close: async () => model.close?.() });
    const store = closeAfter(new SqliteReplyStore(join(tempDir, 'cache.sqlite')));
    const sampling = { temperature: 0.6, topP: 0.9, maxTokens: 200 };
    const sampled = await new Sampler({ model, spec, sampling, store }).sampleItem(item('Why is the sky blue?'), 0);
    expect(sampled.response).toBe('Answer: Why is the sky blue?');
    expect(sampled.sampled!.endpoint!.startsWith(fake.baseUrl)).toBe(true);
    expect(sampled.sampled).toMatchObject({ model: spec.model, sample: 0, samples: 1, settings: { temperature: 0.6, top_p: 0.9, max_tokens: 200 } });
    expect(JSON.stringify(fake.lastBody())).toMatch(/"(top_p|topP)":0\.9/);
    const again = new Sampler({ model, spec, sampling, store });
    expect((await again.sampleItem(item('Why is the sky blue?'), 0)).response).toBe(sampled.response);
    expect(fake.calls()).toBe(1);
    expect(again.usage).toMatchObject({ calls: 0, cache_hits: 1 });
  });

  test('a refusal, an empty answer and a timeout are the item\'s error, with no response', async ({ closeAfter }) => {
    const fake = closeAfter(await provider.start((question) => (question === 'refuse' || question === 'empty' || question === 'hang' ? question : 'answer')));
    const spec = provider.spec(fake.baseUrl);
    const model = (await createJudge(spec, { apiKey: provider.apiKey }))!;
    closeAfter({ close: async () => model.close?.() });
    const sampler = new Sampler({ model, spec, sampling: {}, calls: { maxAttempts: 1, timeoutMs: 300 } });
    const codes = [];
    for (const question of ['refuse', 'empty', 'hang']) {
      const sampled = await sampler.sampleItem(item(question), 0);
      expect(sampled.response).toBe('');
      codes.push(sampled.sampled!.error?.code);
    }
    expect(codes).toEqual([provider.refusal, 'RESPONSE_EMPTY', 'JUDGE_TIMEOUT']);
  });
});
