import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { startFakeAnthropic } from '../src/testing/fake-anthropic.js';
import { startFakeAnthropicBatch } from '../src/testing/fake-anthropic-batch.js';
import { startFakeJudge, type FakeJudge } from '../src/testing/fake-judge.js';
import { startFakeOpenAIBatch, type FakeOpenAIBatch } from '../src/testing/fake-openai-batch.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { killWhilePolling, ledgerRows, withoutUsage } from './batch-helpers.js';
import { generationScript, scriptedCriteria, writePrompts } from './generation-script.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

interface GenerationUsage {
  calls: number;
  cache_hits: number;
  cost_usd: number | null;
  batch?: { calls: number };
}

const summaryOf = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as { usage: { generator: GenerationUsage; judge?: GenerationUsage } } & Record<string, unknown>;
const prompts = 40;

/** A synchronous run, then the same command with --batch on a cache of its own; both must succeed. */
async function syncThenBatch(directory: string, { backend, batchApi }: { backend: FakeJudge; batchApi: FakeOpenAIBatch }, argsFor: (cache: string, out: string, extra?: string[]) => string[]) {
  const syncOut = join(directory, 'sync.jsonl');
  const sync = await runCliInProcess(argsFor(join(directory, 'sync.sqlite'), syncOut));
  expect(sync.code, sync.stderr).toBe(0);
  const syncRequests = backend.requests.length;
  const batchOut = join(directory, 'batch.jsonl');
  const batchCache = join(directory, 'batch.sqlite');
  const batched = await runCliInProcess(argsFor(batchCache, batchOut, ['--batch', '--batch-poll', '0.02']));
  expect(batched.code, batched.stderr).toBe(0);
  // Every call went by batch, and the batches asked for exactly what the synchronous run did.
  expect(batchApi.receivedRequests).toBe(syncRequests);
  expect(readFileSync(batchOut, 'utf8')).toBe(readFileSync(syncOut, 'utf8'));
  const syncSummary = summaryOf(`${syncOut}.summary.json`);
  const batchSummary = summaryOf(`${batchOut}.summary.json`);
  expect(withoutUsage(batchSummary)).toEqual(withoutUsage(syncSummary));
  return { syncSummary, batchSummary, batchCache };
}

// Each test has fakes and folders of its own and spends much of its time waiting (a batch goes
// after a second of quiet): the tests run side by side.
describe('rubricate generate --batch (OpenAI Batch API, loopback fake)', { concurrent: true }, () => {
  test('prompts: the same rubrics as a synchronous run at half the cost; survives kill -9 while polling with zero resubmitted requests; batch answers are cache hits for a synchronous run', async ({ tempDir: directory, closeAfter }) => {
    const input = join(directory, 'prompts.jsonl');
    writePrompts(input, prompts);
    const backend = closeAfter(await startFakeJudge(generationScript()));
    const batchApi = closeAfter(await startFakeOpenAIBatch({ backendBaseUrl: backend.baseUrl, retrievesPerStage: 2 }));
    const generateArgs = (cache: string, out: string, extra: string[] = []) => [
      'generate', '--input', input, '--generator', 'openai:gpt-4.1', '--generator-base-url', batchApi.baseUrl, '--generator-api-key', 'sk-test-batch',
      '--cache', cache, '--out', out, '--summary', `${out}.summary.json`, ...extra,
    ];

    const syncOut = join(directory, 'sync.jsonl');
    const sync = await runCliInProcess(generateArgs(join(directory, 'sync.sqlite'), syncOut));
    expect(sync.code, sync.stderr).toBe(0);
    expect(backend.requests).toHaveLength(prompts);

    const batchCache = join(directory, 'batch.sqlite');
    const batchOut = join(directory, 'batch.jsonl');
    const args = generateArgs(batchCache, batchOut, ['--batch', '--batch-poll', '0.05', '--quiet']);
    const batchesBeforeKill = await killWhilePolling(args, batchApi, prompts);
    const second = await runCliInProcess(args);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(/submitted/);
    // Zero resubmitted requests: every request line the fake ever received, once.
    expect(batchApi.receivedRequests).toBe(prompts);
    expect(batchApi.createdBatches).toBe(batchesBeforeKill);

    // The same rubrics, byte for byte (provenance included), in input order.
    expect(readFileSync(batchOut, 'utf8')).toBe(readFileSync(syncOut, 'utf8'));
    const rerun = summaryOf(`${batchOut}.summary.json`).usage.generator;
    expect((rerun.batch?.calls ?? 0) + rerun.cache_hits).toBe(prompts);

    const syncCost = summaryOf(`${syncOut}.summary.json`).usage.generator.cost_usd!;
    expect(syncCost).toBeGreaterThan(0);
    const ledger = await ledgerRows(batchCache);
    expect(ledger.every((row) => row.role === 'generator')).toBe(true);
    expect(ledger.reduce((sum, row) => sum + row.answered, 0)).toBe(prompts);
    const batchCost = ledger.reduce((sum, row) => sum + row.cost_usd, 0);
    console.log(`generate --batch/sync cost: ${batchCost.toFixed(6)} / ${syncCost} = ${batchCost / syncCost}; ${prompts} requests in ${ledger.length} batch(es); resubmitted ${batchApi.receivedRequests - prompts}`);
    expect(batchCost / syncCost).toBeCloseTo(0.5, 6);

    // Rubrics got by batch are cache hits for a synchronous run on the same cache: nothing is sent.
    const before = backend.requests.length;
    const againOut = join(directory, 'again.jsonl');
    const again = await runCliInProcess(generateArgs(batchCache, againOut));
    expect(again.code, again.stderr).toBe(0);
    expect(backend.requests.length).toBe(before);
    expect(summaryOf(`${againOut}.summary.json`).usage.generator.cache_hits).toBe(prompts);
    expect(readFileSync(againOut, 'utf8')).toBe(readFileSync(syncOut, 'utf8'));
  }, hangGuard(240_000));

  test('contrastive: the generator and a different judge model both by batch give the same kept rubrics and summary as a synchronous run', async ({ tempDir: directory, closeAfter }) => {
    const pairs = join(directory, 'pairs.jsonl');
    // Six prompts, two of them with a second (held-out) pair; some pairs are ordered by the scripted rubrics, some not.
    const lines = Array.from({ length: 6 }, (_, index) => ({
      id: `pair-${index}`,
      prompt: `Question ${index}: what helps with a cold?`,
      chosen: index % 3 === 2 ? 'Rest.' : `Rest, drink fluids, and see a doctor if breathing gets hard (case ${index}).`,
      rejected: index % 3 === 2 ? `Rest, fluids and honey tea help most colds (case ${index}).` : 'Take antibiotics.',
    }));
    lines.push({ id: 'held-0', prompt: lines[0].prompt, chosen: 'Fluids and rest, with a doctor if it gets worse.', rejected: 'Nothing helps.' });
    lines.push({ id: 'held-1', prompt: lines[1].prompt, chosen: 'Nothing at all.', rejected: 'Drink fluids and rest.' });
    writeFileSync(pairs, lines.map((line) => JSON.stringify(line)).join('\n'));
    const backend = closeAfter(await startFakeJudge(generationScript()));
    const batchApi = closeAfter(await startFakeOpenAIBatch({ backendBaseUrl: backend.baseUrl }));
    const generateArgs = (cache: string, out: string, extra: string[] = []) => [
      'generate', '--input', pairs, '--format', 'pairs', '--attempts', '2', '--min-criteria', '2', '--max-criteria', '4',
      '--generator', 'openai:gpt-4.1', '--generator-base-url', batchApi.baseUrl, '--generator-api-key', 'sk-test-batch',
      '--judge', 'openai:gpt-4.1-mini', '--judge-base-url', batchApi.baseUrl, '--judge-api-key', 'sk-test-batch',
      '--cache', cache, '--out', out, '--summary', `${out}.summary.json`, '--quiet', ...extra,
    ];
    const { syncSummary, batchSummary, batchCache } = await syncThenBatch(directory, { backend, batchApi }, generateArgs);
    // Generator rounds and judge rounds, each model in batches of its own.
    const ledger = await ledgerRows(batchCache);
    expect(new Set(ledger.map((row) => row.role))).toEqual(new Set(['generator', 'judge']));
    const kept = (syncSummary as unknown as { generation: { kept: number; not_kept: number } }).generation;
    expect(kept.kept).toBeGreaterThan(0);
    expect(kept.not_kept).toBeGreaterThan(0);
    console.log(`contrastive --batch: ${kept.kept} kept, ${kept.not_kept} not kept; generator $${batchSummary.usage.generator.cost_usd} / $${syncSummary.usage.generator.cost_usd}; judge $${batchSummary.usage.judge!.cost_usd} / $${syncSummary.usage.judge!.cost_usd}; requests ${batchApi.receivedRequests} in ${ledger.length} batch(es)`);
    for (const role of ['generator', 'judge'] as const) {
      const usage = batchSummary.usage[role]!;
      expect(usage.batch?.calls).toBe(usage.calls);
      expect(usage.cost_usd! / syncSummary.usage[role]!.cost_usd!).toBeCloseTo(0.5, 6);
    }
  }, hangGuard(240_000));

  test('refine --batch: sampled responses, gradings and refinements all by batch give the same refined rubrics and summary as a synchronous run', async ({ tempDir: directory, closeAfter }) => {
    const input = join(directory, 'items.jsonl');
    writeFileSync(
      input,
      Array.from({ length: 3 }, (_, index) => JSON.stringify({ id: `p${index}`, prompt: `Question ${index}: what should I do about a cold?`, rubric: { criteria: [{ text: 'The response mentions "fluids".', points: 2 }, { text: 'The response mentions "sampled".', points: 1 }] } })).join('\n'),
    );
    const backend = closeAfter(await startFakeJudge(generationScript({ criteria: 3 })));
    const batchApi = closeAfter(await startFakeOpenAIBatch({ backendBaseUrl: backend.baseUrl }));
    const refineArgs = (cache: string, out: string, extra: string[] = []) => [
      'refine', '--input', input, '--responses-per-prompt', '3', '--iterations', '1', '--min-criteria', '2', '--max-criteria', '4',
      '--generator', 'openai:gpt-4.1', '--generator-base-url', batchApi.baseUrl, '--generator-api-key', 'sk-test-batch',
      '--judge', 'openai:gpt-4.1', '--judge-base-url', batchApi.baseUrl, '--judge-api-key', 'sk-test-batch',
      '--cache', cache, '--out', out, '--summary', `${out}.summary.json`, '--quiet', ...extra,
    ];
    const { batchSummary, syncSummary, batchCache } = await syncThenBatch(directory, { backend, batchApi }, refineArgs);
    const ledger = await ledgerRows(batchCache);
    const cost = (summary: typeof batchSummary) => summary.usage.generator.cost_usd! + summary.usage.judge!.cost_usd!;
    console.log(`refine --batch/sync cost: $${cost(batchSummary).toFixed(6)} / $${cost(syncSummary).toFixed(6)}; requests ${batchApi.receivedRequests} in ${ledger.length} batch(es)`);
    expect(cost(batchSummary) / cost(syncSummary)).toBeCloseTo(0.5, 4);
    expect(batchSummary.usage.generator.batch?.calls).toBe(batchSummary.usage.generator.calls);
    expect(batchSummary.usage.judge!.batch?.calls).toBe(batchSummary.usage.judge!.calls);
  }, hangGuard(240_000));

  test('an expired batch\'s requests go in a new batch; an unreadable answer is asked again, then reported, never written', async ({ tempDir: directory, closeAfter }) => {
    const input = join(directory, 'prompts.jsonl');
    writePrompts(input, 3);
    const script = generationScript();
    const backend = closeAfter(await startFakeJudge(script));
    // The first batch answers one request and expires.
    const batchApi = closeAfter(await startFakeOpenAIBatch({ backendBaseUrl: backend.baseUrl, expireAfter: (batchIndex) => (batchIndex === 0 ? 1 : undefined) }));
    const generateArgs = (cache: string, out: string) => [
      'generate', '--input', input, '--generator', 'openai:gpt-4.1', '--generator-base-url', batchApi.baseUrl, '--generator-api-key', 'sk-test-batch',
      '--generator-attempts', '2', '--cache', cache, '--out', out, '--batch', '--batch-poll', '0.02',
    ];
    const out = join(directory, 'rubrics.jsonl');
    const expired = await runCliInProcess(generateArgs(join(directory, 'cache.sqlite'), out));
    expect(expired.code, expired.stderr).toBe(0);
    expect(expired.stderr).toMatch(/expired, 1 answered, 2 failed/);
    expect(batchApi.createdBatches).toBe(2);
    expect(batchApi.receivedRequests).toBe(3 + 2);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(3);

    // An answer that is not the rubric JSON, for one prompt: asked again in a new batch, then reported.
    backend.setScript((request) => (request.userText.includes('Question 1:') ? { content: 'Here are some criteria you could use.' } : script(request)));
    const before = batchApi.createdBatches;
    const badOut = join(directory, 'bad.jsonl');
    const unreadable = await runCliInProcess(generateArgs(join(directory, 'fresh.sqlite'), badOut));
    expect(unreadable.code).toBe(3);
    expect(unreadable.stderr).toMatch(/failed: .*prompts\.jsonl:2 id q1: \[JUDGE_UNPARSEABLE\] generator answer rejected after 2 attempts/);
    expect(batchApi.createdBatches - before).toBe(2);
    expect(readFileSync(badOut, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id)).toEqual(['q0', 'q2']);
  }, hangGuard(240_000));

  test('refuses --batch with a generator or judge that has no Batch API, naming the flag', async ({ tempDir: directory }) => {
    const input = join(directory, 'prompts.jsonl');
    writePrompts(input, 2);
    const refused = await runCliInProcess(['generate', '--input', input, '--generator', 'gemini:gemini-2.5-flash', '--generator-api-key', 'k', '--out', join(directory, 'out.jsonl'), '--cache', join(directory, 'c.sqlite'), '--batch']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--generator must be openai:MODEL, azure:DEPLOYMENT or anthropic:MODEL, not gemini:gemini-2\.5-flash/);
  }, hangGuard(60_000));
});

describe('rubricate generate --batch with an anthropic: generator (Message Batches, loopback fake)', { concurrent: true }, () => {
  test('the same rubrics as a synchronous run at half the cost, and cache hits both ways', async ({ tempDir: directory, closeAfter }) => {
    const input = join(directory, 'prompts.jsonl');
    writePrompts(input, 12);
    const messages = closeAfter(await startFakeAnthropic((request) => (request.toolName === 'rubric_criteria' ? { input: { criteria: scriptedCriteria(request.userText, 9, ['fluids', 'rest', 'doctor']) } } : { status: 400, message: 'unexpected request' }), {
      minimumCacheTokens: Number.MAX_SAFE_INTEGER,
    }));
    const anthropicBatch = closeAfter(await startFakeAnthropicBatch({ backendBaseUrl: messages.baseUrl }));
    const generateArgs = (cache: string, out: string, extra: string[] = []) => [
      'generate', '--input', input, '--generator', 'anthropic:claude-sonnet-4-5', '--generator-base-url', anthropicBatch.baseUrl, '--generator-api-key', 'test-anthropic-key',
      '--cache', cache, '--out', out, '--summary', `${out}.summary.json`, '--quiet', ...extra,
    ];
    const syncCache = join(directory, 'sync.sqlite');
    const syncOut = join(directory, 'sync.jsonl');
    const sync = await runCliInProcess(generateArgs(syncCache, syncOut));
    expect(sync.code, sync.stderr).toBe(0);
    expect(messages.requests).toHaveLength(12);
    const batchCache = join(directory, 'batch.sqlite');
    const batchOut = join(directory, 'batch.jsonl');
    const batched = await runCliInProcess(generateArgs(batchCache, batchOut, ['--batch', '--batch-poll', '0.02']));
    expect(batched.code, batched.stderr).toBe(0);
    expect(anthropicBatch.receivedRequests).toBe(12);
    expect(readFileSync(batchOut, 'utf8')).toBe(readFileSync(syncOut, 'utf8'));
    const syncUsage = summaryOf(`${syncOut}.summary.json`).usage.generator;
    const batchUsage = summaryOf(`${batchOut}.summary.json`).usage.generator;
    expect(batchUsage.batch?.calls).toBe(12);
    console.log(`anthropic generate --batch/sync cost: $${batchUsage.cost_usd} / $${syncUsage.cost_usd}`);
    // Costs are rounded to the micro-dollar: the ratio of two small ones is 0.5 within that rounding.
    expect(batchUsage.cost_usd! / syncUsage.cost_usd!).toBeCloseTo(0.5, 4);
    // Batch answers serve a synchronous run, and synchronous answers a batch run: nothing more is sent.
    const requestsBefore = messages.requests.length;
    expect((await runCliInProcess(generateArgs(batchCache, join(directory, 'again.jsonl')))).code).toBe(0);
    expect((await runCliInProcess(generateArgs(syncCache, join(directory, 'batch-again.jsonl'), ['--batch', '--batch-poll', '0.02']))).code).toBe(0);
    expect(messages.requests.length).toBe(requestsBefore);
    expect(anthropicBatch.createdBatches).toBe(1);
    expect(summaryOf(join(directory, 'batch-again.jsonl.summary.json')).usage.generator.cache_hits).toBe(12);
  }, hangGuard(240_000));
});
