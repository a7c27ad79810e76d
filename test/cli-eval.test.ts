/**
 * `rubricate eval`: the model under test sampled (a loopback OpenAI-compatible server that counts
 * its requests), then its responses graded (another loopback judge). A rerun makes no model call;
 * a run stopped half way (after the model has answered K requests) and rerun makes exactly one
 * model call per (prompt, sample) in all; a refusal, a timeout and an empty answer each leave their
 * item in error, never graded.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import type { FakeJudgeScript } from '../src/testing/fake-judge.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

interface Line {
  id: string;
  status: string;
  response?: string;
  criteria: Array<{ status: string; error?: { code: string } }>;
  sampled?: { model: string; endpoint?: string; sample: number; samples: number; settings: Record<string, unknown>; request_sha256: string; usage?: { output_tokens: number }; sampled_at?: string; error?: { code: string; message: string } };
}

function writePrompts(directory: string, count: number, text = (index: number) => `Question ${index}?`): string {
  const input = join(directory, 'prompts.jsonl');
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({
      id: `q${index}`,
      prompt: [
        { role: 'system', content: 'You are a careful assistant.' },
        { role: 'user', content: text(index) },
      ],
      rubric: { criteria: [{ text: 'Answers the question', points: 2 }, { text: 'Is polite', points: 1 }] },
    }),
  );
  writeFileSync(input, `${lines.join('\n')}\n`);
  return input;
}

const readLines = (file: string): Line[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Line);

/** The model's answer: derived from the question, so a test can tell which prompt it answers. */
const answering: FakeJudgeScript = (request) => ({ content: `Answer to "${request.userText}"`, usage: { prompt_tokens: 20, completion_tokens: 7 } });

describe('rubricate eval', { concurrent: true }, () => {
  test('grades the sampled responses, each line with its response and provenance; a rerun makes no model call', async ({ tempDir, startJudge, fakeJudge }) => {
    const model = await startJudge(answering);
    const input = writePrompts(tempDir, 3);
    const cache = join(tempDir, 'cache.sqlite');
    const args = (out: string) => ['eval', '--input', input, '--model', 'openai:model-under-test', '--model-base-url', model.baseUrl, '--model-temperature', '0.7', '--samples-per-prompt', '2', '--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--cache', cache, '--out', join(tempDir, out), '--quiet'];
    const first = await runCliInProcess(args('first.jsonl'));
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(model.served).toBe(6);
    // Each item's conversation is sent as the model's messages, with the settings given.
    expect(model.requests[0].messages).toEqual([
      { role: 'system', content: 'You are a careful assistant.' },
      { role: 'user', content: 'Question 0?' },
    ]);
    expect(model.requests[0].body).toMatchObject({ model: 'model-under-test', temperature: 0.7 });
    const lines = readLines(join(tempDir, 'first.jsonl'));
    expect(lines.map((line) => line.id)).toEqual(['q0#1', 'q0#2', 'q1#1', 'q1#2', 'q2#1', 'q2#2']);
    for (const line of lines) {
      const question = `Question ${line.id.slice(1, 2)}?`;
      expect(line.status).toBe('ok');
      expect(line.response).toBe(`Answer to "${question}"`);
      expect(line.sampled).toMatchObject({ model: 'openai:model-under-test', endpoint: model.baseUrl, samples: 2, settings: { temperature: 0.7 }, usage: { output_tokens: 7 } });
      expect(line.sampled!.request_sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(Number.isNaN(Date.parse(line.sampled!.sampled_at!))).toBe(false);
    }
    // The judge read the sampled responses.
    expect(new Set(fakeJudge.requests.map((request) => request.response))).toEqual(new Set([0, 1, 2].map((index) => `Answer to "Question ${index}?"`)));
    // Two samples of one prompt are two calls with keys of their own.
    expect(new Set(lines.map((line) => line.sampled!.request_sha256)).size).toBe(6);

    // The self-preference guard knows the model under test: a judge of the same model is flagged on every line.
    const same = await runCliInProcess(['eval', '--input', input, '--model', 'openai:fake-judge', '--model-base-url', model.baseUrl, '--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--no-cache', '--limit', '1', '--out', join(tempDir, 'same.jsonl'), '--quiet']);
    expect(same.code).toBe(0);
    expect(readLines(join(tempDir, 'same.jsonl')).map((line) => (line as Line & { self_preference?: { relation: string } }).self_preference?.relation)).toEqual(['same-model']);
    const servedBefore = model.served;

    const second = await runCliInProcess(args('second.jsonl'));
    expect(second.code).toBe(0);
    expect(model.served).toBe(servedBefore);
    // The same lines, responses and their provenance included; only the judge's usage says what this run spent (cache hits).
    const withoutUsage = (file: string) => readLines(join(tempDir, file)).map(({ usage: _usage, ...line }: Line & { usage?: unknown }) => line);
    expect(withoutUsage('second.jsonl')).toEqual(withoutUsage('first.jsonl'));
  });

  test('a run stopped after the model answered some prompts, then rerun, calls the model once per (prompt, sample) in all', async ({ tempDir, startJudge, fakeJudge }) => {
    const stop = new AbortController();
    const stopAt = 5;
    const model = await startJudge((request) => {
      // The stop comes while this call is in flight: it lands, is stored, and no new call starts.
      if (request.index === stopAt) stop.abort();
      return answering(request);
    });
    const input = writePrompts(tempDir, 12);
    const out = join(tempDir, 'results.jsonl');
    // The calls in flight at the stop land and are stored: their drain is given as long as the load may need
    // (a drain cut short by a loaded machine would cancel one, and the rerun would rightly ask it again).
    const drain = String(Math.ceil(hangGuard(30_000) / 1_000));
    const args = ['eval', '--input', input, '--model', 'openai:m', '--model-base-url', model.baseUrl, '--samples-per-prompt', '2', '--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--cache', join(tempDir, 'cache.sqlite'), '--out', out, '--concurrency', '2', '--drain-timeout', drain, '--quiet'];
    const stopped = await runCliInProcess(args, stop.signal);
    expect(stopped.code).toBe(130);
    const calledBefore = model.served;
    expect(calledBefore).toBeGreaterThan(stopAt);
    expect(calledBefore).toBeLessThan(24);

    const resumed = await runCliInProcess([...args, '--force']);
    expect(resumed.code).toBe(0);
    expect(model.served).toBe(24);
    const asked = model.requests.map((request) => `${request.userText}`);
    // Every (prompt, sample) was asked exactly once across both runs: 12 prompts, each twice (its two samples).
    for (let index = 0; index < 12; index += 1) expect(asked.filter((text) => text === `Question ${index}?`)).toHaveLength(2);
    expect(readLines(out).map((line) => line.status)).toEqual(Array.from({ length: 24 }, () => 'ok'));
  });

  test('a refusal, a timeout and an empty answer each leave their item in error, never graded as an empty response', async ({ tempDir, startJudge, fakeJudge }) => {
    const model = await startJudge((request) => {
      if (request.userText === 'refuse') return { content: '', refusal: 'I cannot help with that.' };
      if (request.userText === 'hang') return { hang: true };
      if (request.userText === 'empty') return { content: '  ' };
      return answering(request);
    });
    const input = writePrompts(tempDir, 4, (index) => ['refuse', 'hang', 'empty', 'fine'][index]);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(['eval', '--input', input, '--model', 'openai:m', '--model-base-url', model.baseUrl, '--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--no-cache', '--max-attempts', '2', '--timeout', '0.5', '--out', out, '--quiet']);
    expect(result.code).toBe(3);
    const lines = readLines(out);
    expect(lines.map((line) => [line.id, line.status, line.sampled?.error?.code])).toEqual([
      ['q0', 'error', 'JUDGE_REFUSED'],
      ['q1', 'error', 'JUDGE_TIMEOUT'],
      ['q2', 'error', 'RESPONSE_EMPTY'],
      ['q3', 'ok', undefined],
    ]);
    for (const line of lines.slice(0, 3)) {
      expect(line.sampled!.error!.message).toMatch(/^sampling the model under test failed: /);
      expect(line.response).toBe('');
      // No criterion was graded: each carries the sampling error.
      expect(line.criteria.map((criterion) => [criterion.status, criterion.error?.code])).toEqual(line.criteria.map(() => ['error', line.sampled!.error!.code]));
    }
    // The judge saw only the one response there was.
    expect(new Set(fakeJudge.requests.map((request) => request.response))).toEqual(new Set(['Answer to "fine"']));
  });

  test('--dry-run prices the model under test and the judge apart, and sends nothing', async ({ tempDir, startJudge, fakeJudge }) => {
    const model = await startJudge(answering);
    const input = writePrompts(tempDir, 3);
    const prices = join(tempDir, 'prices.json');
    writeFileSync(prices, JSON.stringify({ 'model-under-test': { input: 1, output: 4 }, 'fake-judge': { input: 2, output: 8 } }));
    const result = await runCliInProcess(['eval', '--input', input, '--model', 'openai:model-under-test', '--model-base-url', model.baseUrl, '--model-max-tokens', '100', '--samples-per-prompt', '2', '--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--prices', prices, '--no-cache', '--dry-run', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code).toBe(0);
    expect(model.served + fakeJudge.served).toBe(0);
    const estimate = JSON.parse(result.stdout) as { judge_calls: number; cost_usd: { synchronous: number }; input_tokens: number; expected_output_tokens: number; sampling: { model_calls: number; input_tokens: number; expected_output_tokens: number; cost_usd: { synchronous: number } } };
    // 3 prompts × 2 samples; each sampled response then graded on its 2 criteria.
    expect(estimate.sampling.model_calls).toBe(6);
    expect(estimate.judge_calls).toBe(12);
    expect(estimate.sampling.expected_output_tokens).toBe(600);
    expect(estimate.sampling.cost_usd.synchronous).toBeCloseTo((estimate.sampling.input_tokens * 1 + 600 * 4) / 1e6, 6);
    expect(estimate.cost_usd.synchronous).toBeCloseTo((estimate.input_tokens * 2 + estimate.expected_output_tokens * 8) / 1e6, 6);
    expect(result.stderr).toContain('dry run: model under test openai:model-under-test: 6 call(s)');
  });

  test('two models: one run each, then their paired comparison by item', async ({ tempDir, startJudge }) => {
    // model-b answers politely, model-a does not; the judge meets "Is polite" only for polite answers.
    const model = await startJudge((request) => ({ content: request.body.model === 'model-b' ? `Gladly: answer to ${request.userText}` : `Answer to ${request.userText}` }));
    const judge = await startJudge((request) => ({ content: { explanation: 'x', criteria_met: request.criteria[0].text !== 'Is polite' || (request.response ?? '').startsWith('Gladly') } }));
    const input = writePrompts(tempDir, 4);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(['eval', '--input', input, '--model', 'openai:model-a', '--model', 'openai:model-b', '--model-base-url', model.baseUrl, '--judge', 'openai:fake-judge', '--judge-base-url', judge.baseUrl, '--no-cache', '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    const [first, second] = ['openai-model-a', 'openai-model-b'].map((slug) => readLines(join(tempDir, `results.${slug}.jsonl`)));
    expect(first.map((line) => line.sampled!.model)).toEqual(['openai:model-a', 'openai:model-a', 'openai:model-a', 'openai:model-a']);
    expect(second.every((line) => line.response!.startsWith('Gladly'))).toBe(true);
    const [comparison] = JSON.parse(readFileSync(join(tempDir, 'results.comparison.json'), 'utf8')) as Array<{ model: string; baseline: string; matched: number; overall: { difference: number; n: number } }>;
    // Each item scores 2/3 for model-a and 3/3 for model-b.
    expect(comparison).toMatchObject({ model: 'openai:model-b', baseline: 'openai:model-a', matched: 4, overall: { n: 4 } });
    expect(comparison.overall.difference).toBeCloseTo(1 / 3, 9);
    expect(result.stderr).toContain('openai:model-b − openai:model-a: +0.3333');
  });

  test('--model scripted: made-up responses, labelled on every line; a setting the model does not read is refused by name', async ({ tempDir }) => {
    const input = writePrompts(tempDir, 2);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(['eval', '--input', input, '--model', 'scripted', '--judge', 'scripted', '--no-cache', '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('--model scripted: the responses are made up');
    for (const line of readLines(out)) {
      expect(line.sampled).toMatchObject({ model: 'scripted', scripted: true });
      expect(line.response).toMatch(/^\[scripted response: no model was asked\] /);
    }
    const refused = await runCliInProcess(['eval', '--input', input, '--model', 'scripted', '--model-base-url', 'http://127.0.0.1:9/v1', '--judge', 'scripted', '--no-cache', '--out', join(tempDir, 'refused.jsonl')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--model-base-url does not apply to scripted: the model under test');
  });
});
