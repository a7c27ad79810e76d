/**
 * End to end: `rubricate grade` with anthropic: and gemini: judges against loopback fakes of
 * their APIs. The CLI, grader, engine, cache, reader and HTTP client are the real ones.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import { costOf, defaultPrices } from '../engine/usage.js';
import { startFakeAnthropic, type FakeAnthropicScript } from '../testing/fake-anthropic.js';
import { startFakeGemini, type FakeGeminiScript } from '../testing/fake-gemini.js';
import { test } from '../testing/vitest-fixtures.js';

function readJsonLines(file: string): Array<Record<string, any>> {
  return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/** Two items whose shared context (a long response) is well above the 1024-token cache minimum. */
function writeItems(directory: string): string {
  const file = join(directory, 'items.jsonl');
  const response = 'Give fluids, watch for a stiff neck, and see a doctor if the fever passes 40 C or lasts more than three days. '.repeat(60);
  const items = ['one', 'two'].map((id) => ({
    id,
    prompt: `My child has a fever (${id}). What should I do?`,
    response,
    rubric: {
      criteria: [
        { id: 'fluids', text: 'Advises giving fluids', points: 3 },
        { id: 'doctor', text: 'Says when to see a doctor', points: 5 },
        { id: 'aspirin', text: 'Recommends aspirin for a child', points: -4 },
      ],
    },
  }));
  writeFileSync(file, `${items.map((item) => JSON.stringify(item)).join('\n')}\n`);
  return file;
}

const verdicts: Record<string, boolean> = { fluids: true, doctor: true, aspirin: false };
const byCriterion: FakeAnthropicScript = (request) => ({ input: { explanation: 'Read the response.', criteria_met: verdicts[request.criteria[0].id] } });

function anthropicArgs(baseUrl: string, directory: string, input: string, extra: string[] = []): string[] {
  return [
    'grade', '--input', input, '--out', join(directory, 'results.jsonl'), '--metrics', join(directory, 'metrics.json'),
    '--judge', 'anthropic:claude-sonnet-4-5', '--judge-base-url', baseUrl, '--judge-api-key', 'test-anthropic-key',
    '--cache', join(directory, 'cache.sqlite'), ...extra,
  ];
}

describe('grade with an anthropic: judge', () => {
  test('grades through the forced tool, reads the cached prefix for later criteria, prices reads and writes, and resumes from the cache', async ({ closeAfter, tempDir: directory }) => {
    const anthropic = closeAfter(await startFakeAnthropic(byCriterion));
    const input = writeItems(directory);
    const first = await runCliCaptured(anthropicArgs(anthropic.baseUrl, directory, input, ['--concurrency', '8']));
    expect(first.stderr).toContain('2 items: 2 ok, 0 error');
    expect(first.stderr).toMatch(/cached, \d+ written to the prompt cache\)/);
    expect(first.code).toBe(0);
    const results = readJsonLines(join(directory, 'results.jsonl'));
    expect(results.map((result) => result.status)).toEqual(['ok', 'ok']);
    expect(results[0].criteria.map((criterion: { met: boolean }) => criterion.met)).toEqual([true, true, false]);
    expect(results[0].score).toBe(1);
    expect(anthropic.requests).toHaveLength(6);

    const metrics = JSON.parse(readFileSync(join(directory, 'metrics.json'), 'utf8'));
    const usage = metrics.usage;
    // Per item: the first criterion writes the prefix, the two others read it.
    expect(usage.cache_write_prompt_tokens).toBe(anthropic.totals.cacheWriteTokens);
    expect(usage.cached_prompt_tokens).toBe(anthropic.totals.cacheReadTokens);
    expect(usage.cached_prompt_tokens).toBe(2 * usage.cache_write_prompt_tokens);
    expect(usage.prompt_tokens).toBe(anthropic.totals.inputTokens);
    const price = defaultPrices['claude-sonnet-4-5'];
    const uncached = usage.prompt_tokens - usage.cached_prompt_tokens - usage.cache_write_prompt_tokens;
    const expected = (uncached * 3 + usage.cached_prompt_tokens * 0.3 + usage.cache_write_prompt_tokens * 3.75 + usage.completion_tokens * 15) / 1e6;
    expect(usage.cost_usd).toBeCloseTo(expected, 6);
    expect(costOf({ ...usage, cached_prompt_tokens: 0, cache_write_prompt_tokens: 0 }, price)!).toBeGreaterThan(usage.cost_usd);

    const before = readFileSync(join(directory, 'results.jsonl'), 'utf8');
    const again = await runCliCaptured(anthropicArgs(anthropic.baseUrl, directory, input));
    expect(again.code).toBe(0);
    expect(anthropic.requests).toHaveLength(6);
    const resumed = readFileSync(join(directory, 'results.jsonl'), 'utf8');
    expect(resumed.replace(/"usage":\{[^}]*\}/g, '')).toBe(before.replace(/"usage":\{[^}]*\}/g, ''));
    expect(JSON.parse(readFileSync(join(directory, 'metrics.json'), 'utf8')).usage.cache_hits).toBe(6);
  });

  test('retries a 529 overloaded and a 429 with retry-after, then grades', async ({ closeAfter, tempDir: directory }) => {
    const anthropic = closeAfter(await startFakeAnthropic((request) => {
      if (request.index === 0) return { status: 529, message: 'Overloaded' };
      if (request.index === 1) return { status: 429, message: 'Number of request tokens has exceeded your per-minute rate limit', headers: { 'retry-after': '1', 'anthropic-ratelimit-tokens-remaining': '0' } };
      return byCriterion(request);
    }));
    const input = writeItems(directory);
    const run = await runCliCaptured(anthropicArgs(anthropic.baseUrl, directory, input, ['--concurrency', '1']));
    expect(run.code).toBe(0);
    const results = readJsonLines(join(directory, 'results.jsonl'));
    expect(results.every((result) => result.status === 'ok')).toBe(true);
    const usage = JSON.parse(readFileSync(join(directory, 'metrics.json'), 'utf8')).usage;
    expect(usage.retries).toBe(2);
    expect(usage.calls).toBe(8);
  });

  test('retries a tool input that fails the reply schema, then reports it with the reason', async ({ closeAfter, tempDir: directory }) => {
    const anthropic = closeAfter(await startFakeAnthropic((request) =>
      request.criteria[0].id === 'doctor' ? { input: { explanation: 'Unsure.', criteria_met: 'maybe' } } : byCriterion(request),
    ));
    const input = writeItems(directory);
    const run = await runCliCaptured(anthropicArgs(anthropic.baseUrl, directory, input, ['--max-attempts', '3']));
    expect(run.code).not.toBe(0);
    const results = readJsonLines(join(directory, 'results.jsonl'));
    const doctor = results[0].criteria.find((criterion: { id: string }) => criterion.id === 'doctor');
    expect(results[0].status).toBe('error');
    expect(results[0].score).toBeNull();
    expect(doctor.status).toBe('error');
    expect(doctor.met).toBeNull();
    expect(doctor.error.code).toBe('JUDGE_UNPARSEABLE');
    expect(doctor.error.message).toContain('"criteria_met" for criterion doctor is "maybe"');
    expect(anthropic.requests.filter((request) => request.criteria[0].id === 'doctor')).toHaveLength(6);
  });

  test('refuses probability verdicts before any call, with exit 4', async ({ closeAfter, tempDir: directory }) => {
    const anthropic = closeAfter(await startFakeAnthropic(byCriterion));
    const input = writeItems(directory);
    const run = await runCliCaptured(anthropicArgs(anthropic.baseUrl, directory, input, ['--verdict', 'probability']));
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('returns no token probabilities');
    expect(anthropic.requests).toHaveLength(0);
  });

  test('stops at once on an unknown model (404 not_found_error), exit 4', async ({ closeAfter, tempDir: directory }) => {
    const anthropic = closeAfter(await startFakeAnthropic(byCriterion, { models: ['claude-haiku-4-5'] }));
    const input = writeItems(directory);
    const run = await runCliCaptured(anthropicArgs(anthropic.baseUrl, directory, input, ['--concurrency', '1']));
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('model: claude-sonnet-4-5');
    expect(anthropic.requests.length).toBeLessThanOrEqual(1);
  });
});

describe('grade with a gemini: judge', () => {
  const byCriterionGemini: FakeGeminiScript = (request) => ({ json: { explanation: 'Read the response.', criteria_met: verdicts[request.criteria[0].id] } });

  function geminiArgs(baseUrl: string, directory: string, input: string, extra: string[] = []): string[] {
    return [
      'grade', '--input', input, '--out', join(directory, 'results.jsonl'), '--metrics', join(directory, 'metrics.json'),
      '--judge', 'gemini:gemini-2.5-flash', '--judge-base-url', baseUrl, '--judge-api-key', 'test-gemini-key',
      '--cache', join(directory, 'cache.sqlite'), '--concurrency', '1', ...extra,
    ];
  }

  test('grades with responseSchema, counts implicitly cached tokens in usage and cost, and resumes from the cache', async ({ closeAfter, tempDir: directory }) => {
    const gemini = closeAfter(await startFakeGemini(byCriterionGemini));
    const input = writeItems(directory);
    const run = await runCliCaptured(geminiArgs(gemini.baseUrl, directory, input));
    expect(run.code).toBe(0);
    const results = readJsonLines(join(directory, 'results.jsonl'));
    expect(results.map((result) => result.score)).toEqual([1, 1]);
    const usage = JSON.parse(readFileSync(join(directory, 'metrics.json'), 'utf8')).usage;
    expect(usage.cached_prompt_tokens).toBeGreaterThan(0);
    const price = defaultPrices['gemini-2.5-flash'];
    const expected = ((usage.prompt_tokens - usage.cached_prompt_tokens) * price.input + usage.cached_prompt_tokens * price.cached_input! + usage.completion_tokens * price.output) / 1e6;
    expect(usage.cost_usd).toBeCloseTo(expected, 6);
    expect(gemini.requests).toHaveLength(6);
    const again = await runCliCaptured(geminiArgs(gemini.baseUrl, directory, input));
    expect(again.code).toBe(0);
    expect(gemini.requests).toHaveLength(6);
  });

  test('reports a safety block as filtered content, never as a verdict', async ({ closeAfter, tempDir: directory }) => {
    const gemini = closeAfter(await startFakeGemini((request) => (request.criteria[0].id === 'aspirin' ? { finishReason: 'SAFETY' } : byCriterionGemini(request))));
    const input = writeItems(directory);
    const run = await runCliCaptured(geminiArgs(gemini.baseUrl, directory, input, ['--max-attempts', '2']));
    expect(run.code).not.toBe(0);
    const results = readJsonLines(join(directory, 'results.jsonl'));
    const aspirin = results[0].criteria.find((criterion: { id: string }) => criterion.id === 'aspirin');
    expect(aspirin.status).toBe('error');
    expect(aspirin.met).toBeNull();
    expect(aspirin.error.code).toBe('JUDGE_CONTENT_FILTERED');
    expect(aspirin.error.message).toContain('SAFETY');
    expect(results[0].score).toBeNull();
    // Not retried: the same prompt is filtered the same way.
    expect(gemini.requests.filter((request) => request.criteria[0].id === 'aspirin')).toHaveLength(2);
  });
});
