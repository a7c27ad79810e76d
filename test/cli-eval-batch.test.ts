/**
 * `rubricate eval --batch`: the model under test sampled through a provider's Batch API (the
 * loopback OpenAI and Anthropic Batch API fakes, each in front of a chat server that counts the
 * requests it answers), then graded by batch too. Every response says it came by batch; a rerun
 * pays for nothing; a run killed while its sampling batch is in flight attaches to it on the rerun
 * and pays for no response twice; a request the batch answered with an error leaves its item in
 * error, never graded as an empty response. `eval --repeats` judges each sampled response again.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { startFakeAnthropic } from '../src/testing/fake-anthropic.js';
import { startFakeAnthropicBatch } from '../src/testing/fake-anthropic-batch.js';
import type { FakeJudge, FakeJudgeScript } from '../src/testing/fake-judge.js';
import { startFakeOpenAIBatch, type FakeBatchOptions } from '../src/testing/fake-openai-batch.js';
import { test, type RubricateFixtures } from '../src/testing/vitest-fixtures.js';
import { killWhilePolling, ledgerRows } from './batch-helpers.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

interface Line {
  id: string;
  status: string;
  response?: string;
  criteria: Array<{ status: string; error?: { code: string } }>;
  sampled?: { model: string; endpoint?: string; batch?: true; settings: Record<string, unknown>; request_sha256: string; usage?: { input_tokens: number; output_tokens: number }; sampled_at?: string; error?: { code: string; message: string } };
}

function writePrompts(directory: string, count: number): string {
  const input = join(directory, 'prompts.jsonl');
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({ id: `q${index}`, prompt: [{ role: 'user', content: `Question ${index}?` }], rubric: { criteria: [{ text: 'Answers the question', points: 2 }, { text: 'Is polite', points: 1 }] } }),
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

/** The model under test and the judge, each behind an OpenAI Batch API fake of its own (the model's counts its requests). */
async function startBatchFakes(fixtures: Pick<RubricateFixtures, 'startJudge' | 'fakeJudge' | 'closeAfter'>, modelOptions: Omit<FakeBatchOptions, 'backendBaseUrl'> = {}) {
  const model = await fixtures.startJudge(answering);
  const modelBatch = fixtures.closeAfter(await startFakeOpenAIBatch({ backendBaseUrl: model.baseUrl, ...modelOptions }));
  const judgeBatch = fixtures.closeAfter(await startFakeOpenAIBatch({ backendBaseUrl: fixtures.fakeJudge.baseUrl }));
  return { model, modelBatch, judgeBatch };
}

function evalArgs(input: string, modelUrl: string, judgeUrl: string, cache: string, out: string, extra: string[] = []): string[] {
  return [
    'eval', '--input', input, '--model', 'openai:model-under-test', '--model-base-url', modelUrl, '--model-api-key', 'sk-test-model', '--model-temperature', '0.7',
    '--judge', 'openai:fake-judge', '--judge-base-url', judgeUrl, '--judge-api-key', 'sk-test-judge', '--cache', cache, '--out', out, '--batch', '--batch-poll', '0.05', '--quiet', ...extra,
  ];
}

/** No empty response ever reached the judge. */
function judgeSawNoEmptyResponse(judge: FakeJudge): void {
  expect(judge.requests.length).toBeGreaterThan(0);
  for (const request of judge.requests) expect(request.response ?? '').not.toBe('');
}

describe('rubricate eval --batch', { concurrent: true }, () => {
  test('samples through the Batch API, grades by batch, records it on every response; a rerun and a synchronous run pay for nothing', async ({ tempDir, startJudge, fakeJudge, closeAfter }) => {
    const { model, modelBatch, judgeBatch } = await startBatchFakes({ startJudge, fakeJudge, closeAfter });
    const input = writePrompts(tempDir, 3);
    const cache = join(tempDir, 'cache.sqlite');
    const out = join(tempDir, 'results.jsonl');
    const first = await runCliInProcess(evalArgs(input, modelBatch.baseUrl, judgeBatch.baseUrl, cache, out, ['--samples-per-prompt', '2', '--metrics', `${out}.metrics.json`]));
    expect(first.code, first.stderr).toBe(0);
    // 3 prompts × 2 samples, each sent once, in batches; the chat server behind the fake answered each once.
    expect(modelBatch.receivedRequests).toBe(6);
    expect(model.served).toBe(6);
    expect(model.requests[0].body).toMatchObject({ model: 'model-under-test', temperature: 0.7 });
    // The judge went by batch too: every call the command makes.
    expect(judgeBatch.receivedRequests).toBeGreaterThan(0);
    const lines = readLines(out);
    expect(lines.map((line) => line.id)).toEqual(['q0#1', 'q0#2', 'q1#1', 'q1#2', 'q2#1', 'q2#2']);
    for (const line of lines) {
      expect(line.status).toBe('ok');
      expect(line.response).toBe(`Answer to "Question ${line.id.slice(1, 2)}?"`);
      expect(line.sampled).toMatchObject({ model: 'openai:model-under-test', endpoint: modelBatch.baseUrl, batch: true, settings: { temperature: 0.7 }, usage: { input_tokens: 20, output_tokens: 7 } });
      expect(line.sampled!.request_sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(Number.isNaN(Date.parse(line.sampled!.sampled_at!))).toBe(false);
      // The endpoint carries no credentials.
      expect(JSON.stringify(line.sampled)).not.toContain('sk-test');
    }
    // The ledger keeps the model under test's batches apart from the judge's.
    const rows = await ledgerRows(cache);
    expect(rows.filter((row) => row.role === 'model').reduce((sum, row) => sum + row.answered, 0)).toBe(6);
    expect(rows.some((row) => row.role === 'judge')).toBe(true);
    // The model's calls are billed at the batch price (usage.batch), as the judge's are.
    const metrics = JSON.parse(readFileSync(`${out}.metrics.json`, 'utf8')) as { sampling: { usage: { calls: number; batch?: { calls: number } } } };
    expect(metrics.sampling.usage.batch?.calls).toBe(6);

    // The same command again: every response from the cache, still marked as got by batch.
    const again = await runCliInProcess([...evalArgs(input, modelBatch.baseUrl, judgeBatch.baseUrl, cache, join(tempDir, 'again.jsonl'), ['--samples-per-prompt', '2'])]);
    expect(again.code, again.stderr).toBe(0);
    expect(modelBatch.receivedRequests).toBe(6);
    expect(readLines(join(tempDir, 'again.jsonl')).map((line) => line.sampled?.batch)).toEqual(lines.map(() => true));
    // A synchronous run on the same cache: the batch answers are its cache hits (the same request bodies and keys).
    const sync = await runCliInProcess(['eval', '--input', input, '--model', 'openai:model-under-test', '--model-base-url', modelBatch.baseUrl, '--model-api-key', 'sk-test-model', '--model-temperature', '0.7', '--samples-per-prompt', '2', '--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--cache', cache, '--out', join(tempDir, 'sync.jsonl'), '--quiet']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(model.served).toBe(6);
  });

  test('killed -9 while its sampling batch is in flight, the rerun attaches to it: one model request per (prompt, sample) in all', async ({ tempDir, startJudge, fakeJudge, closeAfter }) => {
    const { model, modelBatch, judgeBatch } = await startBatchFakes({ startJudge, fakeJudge, closeAfter }, { retrievesPerStage: 2 });
    const input = writePrompts(tempDir, 4);
    const out = join(tempDir, 'results.jsonl');
    const args = evalArgs(input, modelBatch.baseUrl, judgeBatch.baseUrl, join(tempDir, 'cache.sqlite'), out, ['--samples-per-prompt', '2']);
    const batchesBeforeKill = await killWhilePolling(args, modelBatch, 8);

    const resumed = await runCliInProcess(args);
    expect(resumed.code, resumed.stderr).toBe(0);
    // No request was sent twice: every one the fake ever received, once, in the batches made before the kill.
    expect(modelBatch.receivedRequests).toBe(8);
    expect(modelBatch.createdBatches).toBe(batchesBeforeKill);
    expect(model.served).toBe(8);
    const lines = readLines(out);
    expect(lines.map((line) => [line.status, line.sampled?.batch])).toEqual(lines.map(() => ['ok', true]));
    expect(lines).toHaveLength(8);
  }, hangGuard(120_000));

  test('a request the batch answered with an error leaves its item in error with the reason, never graded', async ({ tempDir, startJudge, fakeJudge, closeAfter }) => {
    const { modelBatch, judgeBatch } = await startBatchFakes(
      { startJudge, fakeJudge, closeAfter },
      { lineError: (_customId, body) => (JSON.stringify(body).includes('Question 1?') ? { status: 400, body: { error: { message: 'Invalid prompt: flagged', type: 'invalid_request_error', param: null, code: 'invalid_prompt' } } } : undefined) },
    );
    const input = writePrompts(tempDir, 3);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(evalArgs(input, modelBatch.baseUrl, judgeBatch.baseUrl, join(tempDir, 'cache.sqlite'), out));
    expect(result.code, result.stderr).toBe(3);
    const lines = readLines(out);
    expect(lines.map((line) => [line.id, line.status, line.sampled?.error?.code])).toEqual([
      ['q0', 'ok', undefined],
      ['q1', 'error', 'JUDGE_REQUEST_REJECTED'],
      ['q2', 'ok', undefined],
    ]);
    const failed = lines[1];
    expect(failed.sampled!.error!.message).toMatch(/^sampling the model under test failed: .*Invalid prompt: flagged/);
    expect(failed.response).toBe('');
    expect(failed.criteria.map((criterion) => [criterion.status, criterion.error?.code])).toEqual(failed.criteria.map(() => ['error', 'JUDGE_REQUEST_REJECTED']));
    judgeSawNoEmptyResponse(fakeJudge);
    expect(new Set(fakeJudge.requests.map((request) => request.response))).toEqual(new Set(['Answer to "Question 0?"', 'Answer to "Question 2?"']));
  });

  test('the requests an expired batch left unanswered go in a new batch; the answered ones are never asked again', async ({ tempDir, startJudge, fakeJudge, closeAfter }) => {
    const { model, modelBatch, judgeBatch } = await startBatchFakes({ startJudge, fakeJudge, closeAfter }, { expireAfter: (batchIndex) => (batchIndex === 0 ? 1 : undefined) });
    const input = writePrompts(tempDir, 3);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess([...evalArgs(input, modelBatch.baseUrl, judgeBatch.baseUrl, join(tempDir, 'cache.sqlite'), out), '--max-attempts', '2']);
    expect(result.code, result.stderr).toBe(0);
    // Batch 1 answered one request and expired; its two others went in batch 2.
    expect(modelBatch.createdBatches).toBe(2);
    expect(modelBatch.receivedRequests).toBe(3 + 2);
    expect(model.served).toBe(3);
    expect(readLines(out).map((line) => [line.status, line.response])).toEqual([0, 1, 2].map((index) => ['ok', `Answer to "Question ${index}?"`]));
  });

  test('Anthropic Message Batches sample the model under test too', async ({ tempDir, fakeJudge, closeAfter }) => {
    const anthropic = closeAfter(await startFakeAnthropic((request) => ({ text: `Answer to "${request.userText}"` })));
    const modelBatch = closeAfter(await startFakeAnthropicBatch({ backendBaseUrl: anthropic.baseUrl }));
    const judgeBatch = closeAfter(await startFakeOpenAIBatch({ backendBaseUrl: fakeJudge.baseUrl }));
    const input = writePrompts(tempDir, 2);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess([
      'eval', '--input', input, '--model', 'anthropic:claude-under-test', '--model-base-url', modelBatch.baseUrl, '--model-api-key', 'test-anthropic-key', '--model-max-tokens', '200',
      '--judge', 'openai:fake-judge', '--judge-base-url', judgeBatch.baseUrl, '--judge-api-key', 'sk-test-judge', '--cache', join(tempDir, 'cache.sqlite'), '--out', out, '--batch', '--batch-poll', '0.05', '--quiet',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(modelBatch.receivedRequests).toBe(2);
    const lines = readLines(out);
    expect(lines.map((line) => [line.status, line.response])).toEqual([
      ['ok', 'Answer to "Question 0?"'],
      ['ok', 'Answer to "Question 1?"'],
    ]);
    for (const line of lines) expect(line.sampled).toMatchObject({ model: 'anthropic:claude-under-test', batch: true });
    // The Messages bodies were the synchronous model's own: the conversation, and no verdict tool forced.
    expect(anthropic.requests.map((request) => request.toolName)).toEqual([undefined, undefined]);
  });

  test('refused by name for a model without a Batch API; --dry-run prices sampling at batch prices too', async ({ tempDir }) => {
    const input = writePrompts(tempDir, 2);
    const refused = await runCliInProcess(['eval', '--input', input, '--model', 'scripted', '--judge', 'openai:fake-judge', '--judge-base-url', 'http://127.0.0.1:9/v1', '--judge-api-key', 'sk-test', '--batch', '--no-cache', '--out', join(tempDir, 'refused.jsonl')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--model must be openai:MODEL, azure:DEPLOYMENT or anthropic:MODEL, not scripted');

    const prices = join(tempDir, 'prices.json');
    writeFileSync(prices, JSON.stringify({ 'model-under-test': { input: 1, output: 4 }, 'fake-judge': { input: 2, output: 8 } }));
    const dry = await runCliInProcess([...evalArgs(input, 'http://127.0.0.1:9/v1', 'http://127.0.0.1:9/v1', join(tempDir, 'cache.sqlite'), join(tempDir, 'dry.jsonl')), '--prices', prices, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    const estimate = JSON.parse(dry.stdout) as { mode?: string; sampling: { model_calls: number; cost_usd: { synchronous: number; batch: number } } };
    expect(estimate.mode).toBe('batch');
    expect(estimate.sampling.model_calls).toBe(2);
    expect(estimate.sampling.cost_usd.batch).toBeCloseTo(estimate.sampling.cost_usd.synchronous / 2, 9);
  });
});

describe('rubricate eval --repeats', () => {
  test('judges each sampled response n times, the model sampled once, and reports the stability', async ({ tempDir, startJudge, fakeJudge }) => {
    const model = await startJudge(answering);
    const input = writePrompts(tempDir, 3);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(['eval', '--input', input, '--model', 'openai:m', '--model-base-url', model.baseUrl, '--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--no-cache', '--repeats', '2', '--out', out, '--metrics', `${out}.metrics.json`, '--quiet']);
    expect(result.code, result.stderr).toBe(0);
    expect(model.served).toBe(3);
    // 3 responses × 2 criteria, each judged twice.
    expect(fakeJudge.served).toBe(12);
    const lines = readLines(out) as Array<Line & { repeat_scores?: unknown[] }>;
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line.repeat_scores).toHaveLength(2);
      expect(line.sampled?.model).toBe('openai:m');
    }
    const metrics = JSON.parse(readFileSync(`${out}.metrics.json`, 'utf8')) as { stability?: { repeats: number } };
    expect(metrics.stability?.repeats).toBe(2);
  });
});
