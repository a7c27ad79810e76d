import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { binaryVerdict, startFakeJudge, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { startFakeOpenAIBatch, type FakeBatchOptions } from '../src/testing/fake-openai-batch.js';
import { sharedData } from '../src/testing/shared-data.js';
import { test, type RubricateFixtures } from '../src/testing/vitest-fixtures.js';
import { expectedVerdict, healthbenchBatchInput, killWhilePolling, ledgerRows, readResults, smallInput, withoutUsage } from './batch-helpers.js';
import { runCliInProcess, startCli } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

/** Scripted verdicts: a pure function of criterion and response, with fixed token counts. */
function script(request: FakeJudgeRequest) {
  return { content: binaryVerdict(expectedVerdict(request.criteria[0]?.text ?? '', request.response ?? '')), usage: { prompt_tokens: 400, completion_tokens: 30 } };
}

/** The synchronous judge and the Batch API in front of it, both closed after the test. */
async function startFakes(closeAfter: RubricateFixtures['closeAfter'], options: Omit<FakeBatchOptions, 'backendBaseUrl'> = {}) {
  const judge = closeAfter(await startFakeJudge(script));
  const fake = closeAfter(await startFakeOpenAIBatch({ backendBaseUrl: judge.baseUrl, ...options }));
  return { judge, fake };
}

function gradeArgs(input: string[], baseUrl: string, cache: string, out: string, extra: string[] = []): string[] {
  return ['grade', ...input, '--judge', 'openai:gpt-4.1', '--judge-base-url', baseUrl, '--judge-api-key', 'sk-test-batch', '--cache', cache, '--out', out, '--metrics', `${out}.metrics.json`, ...extra];
}

function metricsOf(out: string): { usage: { calls: number; cost_usd: number; cache_hits: number; batch?: { calls: number } } } {
  return JSON.parse(readFileSync(`${out}.metrics.json`, 'utf8'));
}

// Each test has fakes and folders of its own, and the small ones mostly wait (a batch goes after a
// second of quiet): they run side by side with the HealthBench one.
describe('rubricate grade --batch (OpenAI Batch API, loopback fake)', { concurrent: true }, () => {
  const healthbench = sharedData('healthbench/oss_eval_first100.jsonl');

  test.skipIf(!healthbench.available)('HealthBench 100: same results as a synchronous run at half the cost, and survives kill -9 while polling with zero resubmitted requests', async ({ tempDir: directory, closeAfter }) => {
    const { input, criteria } = healthbenchBatchInput(healthbench.path, directory);
    const { judge, fake } = await startFakes(closeAfter, { retrievesPerStage: 2 });

    // Synchronous reference run (through the same server, so provenance is the same).
    const syncOut = join(directory, 'sync.jsonl');
    const sync = await runCliInProcess(gradeArgs(input, fake.baseUrl, join(directory, 'sync-cache.sqlite'), syncOut));
    expect(sync.code, sync.stderr).toBe(0);
    expect(judge.requests).toHaveLength(criteria);

    // Batch run, killed -9 once the fake has received its batch create, then rerun with the same command.
    const batchOut = join(directory, 'batch.jsonl');
    const args = gradeArgs(input, fake.baseUrl, join(directory, 'batch-cache.sqlite'), batchOut, ['--batch', '--batch-poll', '0.05', '--quiet']);
    const batchesBeforeKill = await killWhilePolling(args, fake, criteria);

    const second = await runCliInProcess(args);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(/submitted/);
    // Zero resubmitted requests: every request line the fake ever received, once.
    expect(fake.receivedRequests).toBe(criteria);
    expect(fake.createdBatches).toBe(batchesBeforeKill);

    const syncResults = readResults(syncOut);
    const batchResults = readResults(batchOut);
    expect(batchResults).toHaveLength(100);
    expect(batchResults.map(withoutUsage)).toEqual(syncResults.map(withoutUsage));
    for (const result of batchResults) for (const criterion of result.criteria) expect(criterion.met).toBe(expectedVerdict(criterion.text, String(result.response)));

    const syncCost = metricsOf(syncOut).usage.cost_usd;
    const batchMetrics = metricsOf(batchOut).usage;
    expect(syncCost).toBeGreaterThan(0);
    // The rerun got every answer: by batch, or from the cache where the killed run had already read a finished batch.
    expect((batchMetrics.batch?.calls ?? 0) + batchMetrics.cache_hits).toBe(criteria);
    // What the batches cost over both runs, from the ledger (`rubricate batches`).
    const ledger = await ledgerRows(join(directory, 'batch-cache.sqlite'));
    expect(ledger.reduce((sum, row) => sum + row.answered, 0)).toBe(criteria);
    const batchCost = ledger.reduce((sum, row) => sum + row.cost_usd, 0);
    expect(batchCost / syncCost).toBeCloseTo(0.5, 6);
    console.log(`batch/sync cost: ${batchCost.toFixed(6)} / ${syncCost} = ${batchCost / syncCost}; requests ${criteria} in ${ledger.length} batch(es); resubmitted ${fake.receivedRequests - criteria}`);

    // The verdicts obtained by batch are cache hits for a synchronous run on the same cache.
    const before = judge.requests.length;
    const again = await runCliInProcess(gradeArgs(input, fake.baseUrl, join(directory, 'batch-cache.sqlite'), join(directory, 'again.jsonl')));
    expect(again.code, again.stderr).toBe(0);
    expect(judge.requests.length).toBe(before);
  }, hangGuard(400_000));

  test('retries the requests of an expired batch in a new batch, and reports per-request errors (or answers them synchronously with --batch-fallback sync)', async ({ tempDir: directory, closeAfter }) => {
    const input = ['--input', smallInput(directory), '--scoring', 'weighted_mean'];
    const { judge, fake } = await startFakes(closeAfter, {
      expireAfter: (batchIndex) => (batchIndex === 0 ? 2 : undefined),
      lineError: (_customId, body) => (JSON.stringify(body).includes('Criterion B2') ? { status: 400, body: { error: { message: 'Invalid prompt: flagged', type: 'invalid_request_error', param: null, code: 'invalid_prompt' } } } : undefined),
    });
    const out = join(directory, 'results.jsonl');
    const result = await runCliInProcess(gradeArgs(input, fake.baseUrl, join(directory, 'cache.sqlite'), out, ['--batch', '--batch-poll', '0.02']));
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(/expired, 2 answered, 4 failed/);
    // Batch 1 answered 2 and expired; its 4 others went in batch 2, where one was refused.
    expect(fake.createdBatches).toBe(2);
    expect(fake.receivedRequests).toBe(6 + 4);
    const results = readResults(out);
    const refused = results[2].criteria.find((criterion) => criterion.text === 'Criterion B2');
    expect(refused?.error?.code).toBe('JUDGE_REQUEST_REJECTED');
    expect(refused?.met ?? null).toBeNull();
    expect(results.slice(0, 2).every((line) => line.status === 'ok')).toBe(true);

    const fallbackOut = join(directory, 'fallback.jsonl');
    const requestsBefore = judge.requests.length;
    const fallback = await runCliInProcess(gradeArgs(input, fake.baseUrl, join(directory, 'cache.sqlite'), fallbackOut, ['--batch', '--batch-poll', '0.02', '--batch-fallback', 'sync']));
    expect(fallback.code, fallback.stderr).toBe(0);
    // Only the refused request was asked again (the rest are cache hits), this time synchronously.
    expect(judge.requests.length - requestsBefore).toBe(1);
    expect(readResults(fallbackOut).every((line) => line.status === 'ok')).toBe(true);

    // `rubricate batches` lists the batches of the cache with status, counts and cost at batch prices.
    const rows = await ledgerRows(join(directory, 'cache.sqlite'));
    expect(rows.map((row) => [row.status, row.requests, row.answered, row.failed])).toEqual([
      ['expired', 6, 2, 4],
      ['completed', 4, 3, 1],
      // The fallback run: the refused request went in a batch again, then synchronously.
      ['completed', 1, 0, 1],
    ]);
    // 400 prompt and 30 output tokens per answer at gpt-4.1's $2/$8 per 1M, halved.
    expect(rows[0].cost_usd).toBeCloseTo((2 * (400 * 2 + 30 * 8)) / 1e6 / 2, 9);
  }, hangGuard(240_000));

  test('batches --cancel cancels a batch in flight; --refresh shows it cancelled', async ({ tempDir: directory, closeAfter }) => {
    const { fake } = await startFakes(closeAfter, { retrievesPerStage: 1_000_000 });
    const cache = join(directory, 'cache.sqlite');
    const run = startCli(gradeArgs(['--input', smallInput(directory), '--scoring', 'weighted_mean'], fake.baseUrl, cache, join(directory, 'out.jsonl'), ['--batch', '--batch-poll', '0.05']));
    const batchId = await new Promise<string>((resolve) => fake.events.once('create', (id: string) => resolve(id)));
    // The batch id is in the ledger once the process has seen the create answer: wait for its first poll.
    await new Promise<void>((resolve) => fake.events.once('retrieve', () => resolve()));
    run.child.kill('SIGKILL');
    await run.done;
    const apiFlags = ['--judge-base-url', fake.baseUrl, '--judge-api-key', 'sk-test-batch'];
    const cancelled = await runCliInProcess(['batches', '--cache', cache, '--cancel', batchId, ...apiFlags]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stderr).toContain(`batch ${batchId}: cancelling`);
    const refreshed = await runCliInProcess(['batches', '--cache', cache, '--refresh', '--json', ...apiFlags]);
    const row = refreshed.stdout.trim().split('\n').map((line) => JSON.parse(line) as { batch_id: string; status: string }).find((candidate) => candidate.batch_id === batchId);
    expect(row?.status).toBe('cancelled');
  }, hangGuard(60_000));

  test('an unreadable reply inside a batch is retried and never scored', async ({ tempDir: directory, closeAfter }) => {
    const { judge, fake } = await startFakes(closeAfter);
    let broken = 0;
    judge.setScript((request) => {
      if (request.criteria[0]?.text === 'Criterion A1' && broken < 10) {
        broken += 1;
        return { content: 'I think it is fine.' };
      }
      return script(request);
    });
    const out = join(directory, 'results.jsonl');
    const result = await runCliInProcess(gradeArgs(['--input', smallInput(directory), '--scoring', 'weighted_mean'], fake.baseUrl, join(directory, 'cache.sqlite'), out, ['--batch', '--batch-poll', '0.02', '--max-attempts', '2']));
    expect(result.code).toBe(3);
    const failed = readResults(out)[1].criteria.find((criterion) => criterion.text === 'Criterion A1');
    expect(failed?.error?.code).toBe('JUDGE_UNPARSEABLE');
    expect(failed?.met ?? null).toBeNull();
    expect(broken).toBe(2);
    expect(fake.createdBatches).toBe(2);
  }, hangGuard(60_000));

  test('compare --batch: the same outcomes as a synchronous compare, every call answered by batch, then cache hits', async ({ tempDir: directory, closeAfter }) => {
    const { judge, fake } = await startFakes(closeAfter);
    // Pairwise verdicts: a pure function of the user text (which holds both responses in the asked order).
    judge.setScript((request) => ({ content: { explanation: 'Compared.', winner: createHash('sha256').update(request.userText).digest()[0] % 2 === 0 ? '1' : '2' }, usage: { prompt_tokens: 300, completion_tokens: 20 } }));
    const pairs = join(directory, 'pairs.jsonl');
    writeFileSync(pairs, Array.from({ length: 4 }, (_, index) => JSON.stringify({ id: `pair-${index}`, prompt: `Question ${index}`, response_a: `Short answer ${index}`, response_b: `Longer answer ${index}, with a reason.` })).join('\n'));
    const compareArgs = (cache: string, out: string, extra: string[] = []) => ['compare', '--input', pairs, '--judge', 'openai:gpt-4.1', '--judge-base-url', fake.baseUrl, '--judge-api-key', 'sk-test-batch', '--cache', cache, '--out', out, '--quiet', ...extra];
    const syncOut = join(directory, 'sync.jsonl');
    const sync = await runCliInProcess(compareArgs(join(directory, 'sync.sqlite'), syncOut));
    expect(sync.code, sync.stderr).toBe(0);
    const syncCalls = judge.requests.length;
    expect(syncCalls).toBe(8);
    const batchOut = join(directory, 'batch.jsonl');
    const batchCache = join(directory, 'batch.sqlite');
    const batched = await runCliInProcess(compareArgs(batchCache, batchOut, ['--batch', '--batch-poll', '0.02']));
    expect(batched.code, batched.stderr).toBe(0);
    expect(fake.receivedRequests).toBe(8);
    type PairLine = { usage?: { batch?: { calls: number } } } & Record<string, unknown>;
    const strip = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((line) => {
      const { usage: _usage, ...rest } = JSON.parse(line) as PairLine;
      return rest;
    });
    expect(strip(batchOut)).toEqual(strip(syncOut));
    const batchCalls = readFileSync(batchOut, 'utf8').trim().split('\n').reduce((total, line) => total + ((JSON.parse(line) as PairLine).usage?.batch?.calls ?? 0), 0);
    expect(batchCalls).toBe(8);
    // A synchronous compare on the batch's cache sends nothing.
    const again = await runCliInProcess(compareArgs(batchCache, join(directory, 'again.jsonl')));
    expect(again.code, again.stderr).toBe(0);
    expect(judge.requests.length).toBe(syncCalls + 8);
  }, hangGuard(240_000));
});
