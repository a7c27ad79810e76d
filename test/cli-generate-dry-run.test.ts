import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { startFakeJudge, type FakeJudge } from '../src/testing/fake-judge.js';
import { generationScript, writePrompts } from './generation-script.js';
import { runCliInProcess } from './helpers.js';
import { openSqlite } from '../src/store/sqlite-driver.js';
import { hangGuard } from '../src/testing/hang-guard.js';

let backend: FakeJudge | undefined;

afterEach(async () => {
  await backend?.close();
  backend = undefined;
});

interface RoleEstimate {
  model: string;
  calls: number;
  exact_calls: number;
  estimated_calls: number;
  cache_hits: number;
  input_tokens: number;
  expected_output_tokens: number;
  tokenizer: string;
  cost_usd: { synchronous: number; batch: number; prompt_cached: number };
}

interface PlannedEstimate {
  dry_run: true;
  command: string;
  exact: boolean;
  assumptions: string[];
  generator: RoleEstimate;
  judge?: RoleEstimate;
  total: { calls: number; exact_calls: number; cache_hits: number; cost_usd: { synchronous: number; batch: number; prompt_cached: number } };
}

interface RecordedUsage {
  calls: number;
  cache_hits: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

/** Replies in the SQLite cache (its journal moved in on close). */
function cachedReplies(cache: string): number {
  if (!existsSync(cache)) return 0;
  const database = openSqlite(cache, { readOnly: true });
  try {
    return (database.prepare('SELECT count(*) AS n FROM replies').get() as { n: number }).n;
  } finally {
    database.close();
  }
}

/** A dry run: nothing sent, no output written, the cache as it was; its estimate. */
async function dryRun(args: string[], out: string, cache: string): Promise<PlannedEstimate> {
  const requests = backend!.requests.length;
  const stored = cachedReplies(cache);
  const dry = await runCliInProcess([...args, '--dry-run']);
  expect(dry.code, dry.stderr).toBe(0);
  expect(backend!.requests.length).toBe(requests);
  expect(existsSync(out)).toBe(false);
  expect(existsSync(`${out}.summary.json`)).toBe(false);
  expect(cachedReplies(cache)).toBe(stored);
  expect(dry.stderr).toMatch(/^dry run: generator \d+ call\(s\) \(\d+ exact\), \d+ cache hit\(s\), cost \$[\d.]+ synchronous/m);
  return JSON.parse(dry.stdout) as PlannedEstimate;
}

const percent = (predicted: number, actual: number) => `${(((predicted - actual) / actual) * 100).toFixed(2)}%`;

describe('generate --dry-run (prompts) against a scripted generator reporting o200k counts', () => {
  test('predicts the calls a real run makes and its cost within ±10%; sends and writes nothing; then predicts 0 calls', async ({ tempDir: directory }) => {
    const input = join(directory, 'prompts.jsonl');
    const prompts = 40;
    writePrompts(input, prompts);
    backend = await startFakeJudge(generationScript());
    const out = join(directory, 'rubrics.jsonl');
    const cache = join(directory, 'cache.sqlite');
    const args = ['generate', '--input', input, '--generator', 'openai:gpt-4.1', '--generator-base-url', backend.baseUrl, '--cache', cache, '--out', out, '--summary', `${out}.summary.json`, '--quiet'];

    const estimate = await dryRun(args, out, cache);
    expect(cachedReplies(cache)).toBe(0);
    expect(estimate).toMatchObject({ dry_run: true, command: 'generate', exact: true });
    expect(estimate.generator).toMatchObject({ model: 'gpt-4.1', calls: prompts, exact_calls: prompts, estimated_calls: 0, cache_hits: 0, tokenizer: 'o200k_base' });
    expect(estimate.judge).toBeUndefined();
    expect(estimate.total.cost_usd.synchronous).toBe(estimate.generator.cost_usd.synchronous);
    expect(estimate.generator.cost_usd.batch).toBeCloseTo(estimate.generator.cost_usd.synchronous / 2, 5);

    const real = await runCliInProcess(args);
    expect(real.code, real.stderr).toBe(0);
    const actual = (JSON.parse(readFileSync(`${out}.summary.json`, 'utf8')) as { usage: { generator: RecordedUsage } }).usage.generator;
    console.log(
      `generate --dry-run: calls predicted ${estimate.generator.calls} actual ${actual.calls}; input tokens ${estimate.generator.input_tokens} vs ${actual.prompt_tokens}; output ${estimate.generator.expected_output_tokens} vs ${actual.completion_tokens}; cost $${estimate.generator.cost_usd.synchronous} vs $${actual.cost_usd} (${percent(estimate.generator.cost_usd.synchronous, actual.cost_usd)})`,
    );
    expect(estimate.generator.calls).toBe(actual.calls);
    expect(estimate.generator.input_tokens).toBe(actual.prompt_tokens);
    expect(Math.abs(estimate.generator.cost_usd.synchronous - actual.cost_usd) / actual.cost_usd).toBeLessThanOrEqual(0.1);

    // On the warm cache every call is a hit, and a dry run still writes nothing to it.
    rmSync(out);
    rmSync(`${out}.summary.json`);
    const again = await dryRun(args, out, cache);
    expect(again.generator).toMatchObject({ calls: 0, cache_hits: prompts });
    expect(again.total.cost_usd.synchronous).toBe(0);
  }, hangGuard(240_000));
});

describe('refine --dry-run with a responses file and given rubrics', () => {
  test('counts the round-0 grading exactly, plans the later rounds on synthetic answers, and writes nothing; the total matches a run that meets its assumptions', async ({ tempDir: directory }) => {
    const words = ['fluids', 'rest', 'doctor'];
    const items = Array.from({ length: 5 }, (_, index) => ({
      id: `p${index}`,
      prompt: `Question ${index}: what should I do about a cold?`,
      rubric: { criteria: words.map((word) => ({ text: `The response mentions "${word}".`, points: 2 })) },
    }));
    const input = join(directory, 'items.jsonl');
    writeFileSync(input, items.map((item) => JSON.stringify(item)).join('\n'));
    const responses = join(directory, 'responses.jsonl');
    const answers = ['Rest and fluids.', 'See a doctor, rest, and drink fluids.', 'Drink fluids.', 'Nothing helps, but rest and fluids are safe.'];
    writeFileSync(responses, items.map((item, index) => JSON.stringify({ id: item.id, responses: answers.map((text) => `${text} (case ${index})`) })).join('\n'));
    // The refined rubrics the script writes have 4 criteria: the mean of --min-criteria 3 and --max-criteria 5 the estimate assumes.
    backend = await startFakeJudge(generationScript({ criteria: 4 }));
    const out = join(directory, 'refined.jsonl');
    const cache = join(directory, 'cache.sqlite');
    const args = [
      'refine', '--input', input, '--responses', responses, '--iterations', '2', '--min-criteria', '3', '--max-criteria', '5',
      '--generator', 'openai:gpt-4.1', '--generator-base-url', backend.baseUrl, '--judge', 'openai:gpt-4.1', '--judge-base-url', backend.baseUrl,
      '--cache', cache, '--out', out, '--summary', `${out}.summary.json`, '--quiet',
    ];
    const estimate = await dryRun(args, out, cache);
    expect(cachedReplies(cache)).toBe(0);
    expect(estimate.exact).toBe(false);
    expect(estimate.assumptions.join('\n')).toMatch(/every one of the --iterations 2 round\(s\) runs/);
    // Round 0: each of the 4 responses graded on each of the 3 given criteria, for 5 prompts: exact.
    const roundZero = 5 * 4 * 3;
    expect(estimate.judge!.exact_calls).toBe(roundZero);
    // Two more rounds, each on a rubric of 4 criteria; one refinement call per prompt and round.
    expect(estimate.judge!.calls).toBe(roundZero + 2 * 5 * 4 * 4);
    expect(estimate.generator).toMatchObject({ calls: 2 * 5, exact_calls: 0 });

    const real = await runCliInProcess(args);
    expect(real.code, real.stderr).toBe(0);
    const usage = (JSON.parse(readFileSync(`${out}.summary.json`, 'utf8')) as { usage: { generator: RecordedUsage; judge: RecordedUsage } }).usage;
    const recorded = usage.generator.cost_usd + usage.judge.cost_usd;
    console.log(
      `refine --dry-run: judge calls predicted ${estimate.judge!.calls} (${estimate.judge!.exact_calls} exact) actual ${usage.judge.calls}; generator ${estimate.generator.calls} actual ${usage.generator.calls}; cost $${estimate.total.cost_usd.synchronous} vs $${recorded} (${percent(estimate.total.cost_usd.synchronous, recorded)})`,
    );
    expect(usage.judge.calls).toBe(estimate.judge!.calls);
    expect(usage.generator.calls).toBe(estimate.generator.calls);
    expect(Math.abs(estimate.total.cost_usd.synchronous - recorded) / recorded).toBeLessThanOrEqual(0.1);

    rmSync(out);
    rmSync(`${out}.summary.json`);
    const warm = await dryRun(args, out, cache);
    expect(warm).toMatchObject({ exact: true, total: { calls: 0 } });
    expect(warm.total.cache_hits).toBe(usage.judge.calls + usage.generator.calls);
  }, hangGuard(240_000));
});

describe('generate --dry-run (contrastive)', () => {
  test('counts the first attempts exactly, gives an upper bound of the calls a real run makes, then predicts 0 calls', async ({ tempDir: directory }) => {
    const pairs = join(directory, 'pairs.jsonl');
    const lines = Array.from({ length: 6 }, (_, index) => ({
      id: `pair-${index}`,
      prompt: `Question ${index}: what helps with a cold?`,
      chosen: index % 2 === 0 ? `Rest, drink fluids, and see a doctor if breathing gets hard (case ${index}).` : 'Rest.',
      rejected: index % 2 === 0 ? 'Take antibiotics.' : `Rest, fluids and honey tea help most colds (case ${index}).`,
    }));
    // Held-out pairs for a prompt whose rubric is kept (pair-0) and for one whose rubric is not (pair-1).
    lines.push({ id: 'held-0', prompt: lines[0].prompt, chosen: 'Fluids and rest.', rejected: 'Nothing helps.' });
    lines.push({ id: 'held-1', prompt: lines[1].prompt, chosen: 'Fluids and rest.', rejected: 'Nothing helps.' });
    writeFileSync(pairs, lines.map((line) => JSON.stringify(line)).join('\n'));
    backend = await startFakeJudge(generationScript());
    const out = join(directory, 'kept.jsonl');
    const args = [
      'generate', '--input', pairs, '--format', 'pairs', '--attempts', '3', '--min-criteria', '2', '--max-criteria', '4',
      '--generator', 'openai:gpt-4.1', '--generator-base-url', backend.baseUrl, '--judge', 'openai:gpt-4.1-mini', '--judge-base-url', backend.baseUrl,
      '--cache', join(directory, 'cache.sqlite'), '--out', out, '--summary', `${out}.summary.json`, '--quiet',
    ];
    const estimate = await dryRun(args, out, join(directory, 'cache.sqlite'));
    expect(estimate.exact).toBe(false);
    expect(estimate.judge!.model).toBe('gpt-4.1-mini');
    // One first attempt per prompt: known without any answer.
    expect(estimate.generator.exact_calls).toBe(6);
    // Every attempt made, each rubric of 3 criteria graded on its pair's 2 responses, and each held-out pair once.
    expect(estimate.generator.calls).toBe(6 * 3);
    expect(estimate.judge!.calls).toBe(6 * 3 * 3 * 2 + 2 * 3 * 2);
    const real = await runCliInProcess(args);
    expect(real.code, real.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(`${out}.summary.json`, 'utf8')) as { usage: { generator: RecordedUsage; judge: RecordedUsage }; pairs: Array<{ pair_id: string; kept: boolean }> };
    const usage = summary.usage;
    expect(summary.pairs.map((pair) => [pair.pair_id, pair.kept]).filter(([id]) => id === 'pair-0' || id === 'pair-1')).toEqual([['pair-0', true], ['pair-1', false]]);
    console.log(`contrastive --dry-run: generator calls predicted ${estimate.generator.calls} (${estimate.generator.exact_calls} exact) actual ${usage.generator.calls}; judge ${estimate.judge!.calls} actual ${usage.judge.calls}; cost $${estimate.total.cost_usd.synchronous} vs $${usage.generator.cost_usd + usage.judge.cost_usd}`);
    expect(usage.generator.calls).toBeGreaterThanOrEqual(estimate.generator.exact_calls);
    expect(usage.generator.calls).toBeLessThanOrEqual(estimate.generator.calls);
    expect(usage.judge.calls).toBeLessThanOrEqual(estimate.judge!.calls);
    // Once the cache holds the run's answers, they decide as in a real run: nothing is left to send.
    rmSync(out);
    rmSync(`${out}.summary.json`);
    const warm = await dryRun(args, out, join(directory, 'cache.sqlite'));
    expect(warm).toMatchObject({ exact: true, total: { calls: 0 } });
    // What the run asked, and what it already read from the cache (identical attempts), are all hits now.
    expect(warm.total.cache_hits).toBe(usage.judge.calls + usage.judge.cache_hits + usage.generator.calls + usage.generator.cache_hits);
  }, hangGuard(240_000));
});
