import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { startFakeAnthropic, type FakeAnthropicRequest } from '../src/testing/fake-anthropic.js';
import { startFakeAnthropicBatch, type FakeAnthropicBatchOptions } from '../src/testing/fake-anthropic-batch.js';
import { sharedData } from '../src/testing/shared-data.js';
import { test, type RubricateFixtures } from '../src/testing/vitest-fixtures.js';
import { expectedVerdict, healthbenchBatchInput, killWhilePolling, ledgerRows, readResults, smallInput, withoutUsage } from './batch-helpers.js';
import { runCliInProcess, startCli } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

/** Scripted verdicts through the forced tool: a pure function of criterion and response. */
function script(request: FakeAnthropicRequest) {
  const criterion = request.criteria[0]?.text ?? '';
  return { input: { explanation: 'Checked against the response.', criteria_met: expectedVerdict(criterion, request.response ?? '') } };
}

/** The Messages API and the Message Batches API in front of it, both closed after the test. */
async function startFakes(closeAfter: RubricateFixtures['closeAfter'], options: Omit<FakeAnthropicBatchOptions, 'backendBaseUrl'> = {}) {
  // Prompt caching off: Anthropic applies it to batches only as best effort, so cached reads (and the cost) of the two runs need not match.
  const messages = closeAfter(await startFakeAnthropic(script, { minimumCacheTokens: Number.MAX_SAFE_INTEGER }));
  const fake = closeAfter(await startFakeAnthropicBatch({ backendBaseUrl: messages.baseUrl, ...options }));
  return { messages, fake };
}

const model = 'claude-sonnet-4-5';

function gradeArgs(input: string[], baseUrl: string, cache: string, out: string, extra: string[] = []): string[] {
  return ['grade', ...input, '--judge', `anthropic:${model}`, '--judge-base-url', baseUrl, '--judge-api-key', 'test-anthropic-key', '--cache', cache, '--out', out, '--metrics', `${out}.metrics.json`, ...extra];
}

interface MetricsUsage {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_prompt_tokens: number;
  cache_hits: number;
  cost_usd: number;
  batch?: { calls: number; prompt_tokens: number; completion_tokens: number };
}

const usageOf = (out: string): MetricsUsage => (JSON.parse(readFileSync(`${out}.metrics.json`, 'utf8')) as { usage: MetricsUsage }).usage;

// Each test has fakes and folders of its own, and the small ones mostly wait (a batch goes after a
// second of quiet): they run side by side with the HealthBench one.
describe('rubricate grade --batch with an anthropic: judge (Message Batches, loopback fake)', { concurrent: true }, () => {
  const healthbench = sharedData('healthbench/oss_eval_first100.jsonl');

  test.skipIf(!healthbench.available)('HealthBench 100: same results as a synchronous run at half the cost, survives kill -9 while polling with zero resubmitted requests, and shares the cache both ways', async ({ tempDir: directory, closeAfter }) => {
    const { input, criteria } = healthbenchBatchInput(healthbench.path, directory);
    const { messages, fake } = await startFakes(closeAfter, { retrievesInProgress: 3 });

    // Synchronous reference run through the same base URL (same provenance, same cache keys).
    const syncOut = join(directory, 'sync.jsonl');
    const sync = await runCliInProcess(gradeArgs(input, fake.baseUrl, join(directory, 'sync-cache.sqlite'), syncOut));
    expect(sync.code, sync.stderr).toBe(0);
    expect(messages.requests).toHaveLength(criteria);

    // Batch run, killed -9 once the batch is created, then the same command again.
    const batchCache = join(directory, 'batch-cache.sqlite');
    const batchOut = join(directory, 'batch.jsonl');
    const args = gradeArgs(input, fake.baseUrl, batchCache, batchOut, ['--batch', '--batch-poll', '0.05', '--quiet']);
    const batchesBeforeKill = await killWhilePolling(args, fake, criteria);

    const second = await runCliInProcess(args);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(/submitted/);
    expect(fake.receivedRequests).toBe(criteria);
    expect(fake.createdBatches).toBe(batchesBeforeKill);

    const syncResults = readResults(syncOut);
    const batchResults = readResults(batchOut);
    expect(batchResults).toHaveLength(100);
    expect(batchResults.map(withoutUsage)).toEqual(syncResults.map(withoutUsage));
    for (const result of batchResults) for (const criterion of result.criteria) expect(criterion.met).toBe(expectedVerdict(criterion.text, String(result.response)));

    // The rerun got every answer: by batch, or from the cache where the killed run had already read a finished batch.
    const syncUsage = usageOf(syncOut);
    const batchUsage = usageOf(batchOut);
    expect((batchUsage.batch?.calls ?? 0) + batchUsage.cache_hits).toBe(criteria);
    // What the batches cost over both runs, from the ledger (`rubricate batches`), against the synchronous run.
    const ledger = await ledgerRows(batchCache);
    const total = ledger.reduce((sum, row) => ({ answered: sum.answered + row.answered, prompt: sum.prompt + row.prompt_tokens, completion: sum.completion + row.completion_tokens, cost: sum.cost + row.cost_usd }), { answered: 0, prompt: 0, completion: 0, cost: 0 });
    expect(total.answered).toBe(criteria);
    expect(total.prompt).toBe(syncUsage.prompt_tokens);
    expect(total.completion).toBe(syncUsage.completion_tokens);
    expect(syncUsage.cost_usd).toBeGreaterThan(0);
    console.log(`anthropic batch/sync cost: ${total.cost.toFixed(6)} / ${syncUsage.cost_usd} = ${total.cost / syncUsage.cost_usd}; requests ${criteria} in ${ledger.length} batch(es); resubmitted ${fake.receivedRequests - criteria}`);
    expect(total.cost / syncUsage.cost_usd).toBeCloseTo(0.5, 6);

    // Batch verdicts are cache hits for a synchronous run on the same cache...
    const before = messages.requests.length;
    const again = await runCliInProcess(gradeArgs(input, fake.baseUrl, batchCache, join(directory, 'again.jsonl')));
    expect(again.code, again.stderr).toBe(0);
    expect(messages.requests.length).toBe(before);
    expect(usageOf(join(directory, 'again.jsonl')).cache_hits).toBe(criteria);
    // ...and synchronous verdicts are cache hits for a batch run: nothing is submitted.
    const batchAfterSync = await runCliInProcess(gradeArgs(input, fake.baseUrl, join(directory, 'sync-cache.sqlite'), join(directory, 'batch-after-sync.jsonl'), ['--batch', '--batch-poll', '0.05']));
    expect(batchAfterSync.code, batchAfterSync.stderr).toBe(0);
    expect(fake.createdBatches).toBe(batchesBeforeKill);
    expect(usageOf(join(directory, 'batch-after-sync.jsonl')).cache_hits).toBe(criteria);
  }, hangGuard(400_000));

  test('errored requests are reported with their reason, expired ones go in a new batch, and --batch-fallback sync answers errored ones synchronously', async ({ tempDir: directory, closeAfter }) => {
    const input = ['--input', smallInput(directory), '--scoring', 'weighted_mean'];
    const { messages, fake } = await startFakes(closeAfter, {
      expireAfter: (batchIndex) => (batchIndex === 0 ? 2 : undefined),
      requestError: (_customId, params) => (JSON.stringify(params).includes('Criterion B2') ? { type: 'invalid_request_error', message: 'messages.0.content.0.text: prompt flagged' } : undefined),
    });
    const cache = join(directory, 'cache.sqlite');
    const out = join(directory, 'results.jsonl');
    const result = await runCliInProcess(gradeArgs(input, fake.baseUrl, cache, out, ['--batch', '--batch-poll', '0.02']));
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toMatch(/ended, 2 answered, 4 failed/);
    expect(fake.createdBatches).toBe(2);
    expect(fake.receivedRequests).toBe(6 + 4);
    const results = readResults(out);
    const refused = results[2].criteria.find((criterion) => criterion.text === 'Criterion B2');
    expect(refused?.error?.code).toBe('JUDGE_REQUEST_REJECTED');
    expect(refused?.error?.message).toMatch(/invalid_request_error: messages\.0\.content\.0\.text: prompt flagged/);
    expect(refused?.met ?? null).toBeNull();
    expect(results.slice(0, 2).every((line) => line.status === 'ok')).toBe(true);

    const fallbackOut = join(directory, 'fallback.jsonl');
    const before = messages.requests.length;
    const fallback = await runCliInProcess(gradeArgs(input, fake.baseUrl, cache, fallbackOut, ['--batch', '--batch-poll', '0.02', '--batch-fallback', 'sync']));
    expect(fallback.code, fallback.stderr).toBe(0);
    // The refused request went in a batch again (errored again), then synchronously: one Messages call.
    expect(messages.requests.length - before).toBe(1);
    expect(readResults(fallbackOut).every((line) => line.status === 'ok')).toBe(true);

    const rows = await ledgerRows(cache);
    expect(rows.map((row) => [row.provider, row.status, row.requests, row.answered, row.failed])).toEqual([
      ['anthropic', 'ended', 6, 2, 4],
      ['anthropic', 'ended', 4, 3, 1],
      ['anthropic', 'ended', 1, 0, 1],
    ]);
    expect(rows[0].cost_usd).toBeGreaterThan(0);
  }, hangGuard(240_000));

  test('batches --cancel cancels an Anthropic batch in flight (canceling), and --refresh shows it ended', async ({ tempDir: directory, closeAfter }) => {
    const { fake } = await startFakes(closeAfter, { retrievesInProgress: 1_000_000 });
    const cache = join(directory, 'cache.sqlite');
    const run = startCli(gradeArgs(['--input', smallInput(directory), '--scoring', 'weighted_mean'], fake.baseUrl, cache, join(directory, 'out.jsonl'), ['--batch', '--batch-poll', '0.05']));
    const batchId = await new Promise<string>((resolve) => fake.events.once('create', (id: string) => resolve(id)));
    await new Promise<void>((resolve) => fake.events.once('retrieve', () => resolve()));
    run.child.kill('SIGKILL');
    await run.done;
    const apiFlags = ['--judge-base-url', fake.baseUrl, '--judge-api-key', 'test-anthropic-key'];
    const cancelled = await runCliInProcess(['batches', '--cache', cache, '--cancel', batchId, ...apiFlags]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stderr).toContain(`batch ${batchId}: canceling`);
    const refreshed = await runCliInProcess(['batches', '--cache', cache, '--refresh', '--json', ...apiFlags]);
    const row = refreshed.stdout.trim().split('\n').map((line) => JSON.parse(line) as { batch_id: string; status: string }).find((candidate) => candidate.batch_id === batchId);
    expect(row?.status).toBe('ended');
    // A cancel of an ended batch gets Anthropic's 400, reported with its message.
    const again = await runCliInProcess(['batches', '--cache', cache, '--cancel', batchId, ...apiFlags]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/has already ended \(ended\): there is nothing to cancel/);
  }, hangGuard(240_000));
});
