import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { writeTinyGguf } from '../src/testing/tiny-gguf.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCli, runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

function itemsFile(directory: string): string {
  const file = join(directory, 'items.jsonl');
  writeFileSync(
    file,
    [
      JSON.stringify({ id: 'a', prompt: 'Name a fruit.', response: 'An apple.', rubric: { criteria: [{ id: 'fruit', text: 'Names a fruit', points: 2 }, { id: 'rude', text: 'Is rude', points: -1 }] } }),
      JSON.stringify({ id: 'b', prompt: 'Say hi.', response: 'Hi!', rubric: { criteria: [{ id: 'greets', text: 'Greets the user', points: 1 }] } }),
    ].join('\n'),
  );
  return file;
}

/** Two items of six criteria: twelve settled criteria, past the first progress line (every 10). */
function twelveCriteriaFile(directory: string): string {
  const file = join(directory, 'twelve.jsonl');
  const item = (id: string, response: string) => ({ id, prompt: 'Name a fruit.', response, rubric: { criteria: Array.from({ length: 6 }, (_, index) => ({ id: `c${index}`, text: `Criterion ${index} holds`, points: 1 })) } });
  writeFileSync(file, [JSON.stringify(item('a', 'An apple.')), JSON.stringify(item('b', 'A pear.'))].join('\n'));
  return file;
}

/**
 * Runs with this process's stderr reported as no terminal, whatever runs the tests: the
 * in-process CLI decides its progress display from `process.stderr.isTTY`.
 */
async function withStderrNotATerminal<T>(run: () => Promise<T>): Promise<T> {
  const own = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
  Object.defineProperty(process.stderr, 'isTTY', { value: false, configurable: true, writable: true });
  try {
    return await run();
  } finally {
    if (own) Object.defineProperty(process.stderr, 'isTTY', own);
    else delete (process.stderr as { isTTY?: boolean }).isTTY;
  }
}

// The grading runs go through the CLI's entry point in this process: llama.cpp loads once per
// worker instead of once per command. The run that depends on its environment is a real process.
describe('rubricate grade with the embedded local judge (real node-llama-cpp, tiny generated model)', () => {
  test('grades a small file end to end through gguf:PATH, binary and probability verdicts', async ({ tempDir: directory }) => {
    const model = await writeTinyGguf({ path: join(directory, 'tiny-true.gguf'), bias: 'true' });
    const input = itemsFile(directory);
    const out = join(directory, 'results.jsonl');
    const common = ['grade', '--input', input, '--judge', `gguf:${model}`, '--threads', '1', '--max-tokens', '96', '--no-cache', '--quiet'];
    const binary = await runCliInProcess([...common, '--out', out]);
    expect(binary.code, binary.stderr).toBe(0);
    const results = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { status: string; criteria: Array<{ met: boolean; probability?: number }>; judge: { id: string; model: string } });
    expect(results.map((result) => result.status)).toEqual(['ok', 'ok']);
    // The rigged model answers true under greedy decoding.
    expect(results.flatMap((result) => result.criteria.map((criterion) => criterion.met))).toEqual([true, true, true]);
    expect(results[0].judge.id).toBe(`gguf:${model}`);
    expect(results[0].judge.model).toBe('tiny-true.gguf');

    const probability = await runCliInProcess([...common, '--verdict', 'probability', '--out', join(directory, 'probability.jsonl')]);
    expect(probability.code, probability.stderr).toBe(0);
    const soft = readFileSync(join(directory, 'probability.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { criteria: Array<{ probability: number; value: number }> });
    for (const criterion of soft.flatMap((result) => result.criteria)) {
      expect(criterion.probability).toBeGreaterThan(0);
      expect(criterion.probability).toBeLessThan(1);
      expect(criterion.value).toBe(criterion.probability);
    }
  }, hangGuard(120_000));

  test('states the local plan, defaults to short explanations, and answers --explanation none with one token per verdict', async ({ tempDir: directory }) => {
    const model = await writeTinyGguf({ path: join(directory, 'tiny-true.gguf'), bias: 'true' });
    const input = itemsFile(directory);
    const common = ['grade', '--input', input, '--judge', `gguf:${model}`, '--threads', '1', '--max-tokens', '96', '--no-cache', '--quiet'];
    type Line = { status: string; usage: { completion_tokens: number; calls: number }; judge: { template_version: string }; criteria: Array<{ met: boolean; explanation?: string }> };
    const read = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Line);

    // Without --quiet, the plan and the first item's projection are stated; --quiet prints neither.
    const byDefault = await runCliInProcess([...common.filter((flag) => flag !== '--quiet'), '--out', join(directory, 'default.jsonl')]);
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(byDefault.stderr).toMatch(/local judge gguf:.*one call per criterion reusing the item's KV prefix, short explanations/);
    expect(byDefault.stderr).toMatch(/local judge: first item graded in/);
    expect(read(join(directory, 'default.jsonl'))[0].judge.template_version).toMatch(/\+explanation-short$/);

    const none = await runCliInProcess([...common, '--explanation', 'none', '--out', join(directory, 'none.jsonl')]);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).not.toMatch(/local judge/);
    const results = read(join(directory, 'none.jsonl'));
    expect(results.map((result) => result.status)).toEqual(['ok', 'ok']);
    expect(results.flatMap((result) => result.criteria.map((criterion) => criterion.met))).toEqual([true, true, true]);
    for (const result of results) {
      // One generated token per judge call: the verdict; the JSON around it is forced.
      expect(result.usage.completion_tokens).toBe(result.usage.calls);
      for (const criterion of result.criteria) expect(criterion.explanation).toBeUndefined();
    }
  }, hangGuard(120_000));

  test('off a terminal, a local judge prints a progress line every 10 criteria and one at the end; a judge that is not local prints none', async ({ tempDir: directory }) => {
    const model = await writeTinyGguf({ path: join(directory, 'tiny-true.gguf'), bias: 'true' });
    const input = twelveCriteriaFile(directory);
    // One generated token per verdict keeps the twelve calls cheap; no --quiet, which turns progress off.
    const local = await withStderrNotATerminal(() => runCliInProcess(['grade', '--input', input, '--judge', `gguf:${model}`, '--threads', '1', '--explanation', 'none', '--no-cache', '--out', join(directory, 'local.jsonl')]));
    expect(local.code, local.stderr).toBe(0);
    const progress = local.stderr.split('\n').filter((line) => line.startsWith('grading (local: per criterion, none): '));
    // Whether the item count has a total yet depends on when counting the input finished: either form is right.
    expect(progress, local.stderr).toEqual([
      expect.stringMatching(/^grading \(local: per criterion, none\): 10 criteria, [01](\/2)? items, \d+\.\d\d criteria\/s, (about [^,]+ left, )?0 errors$/),
      expect.stringMatching(/^grading \(local: per criterion, none\): 12 criteria, 2(\/2)? items in [^,]+, \d+\.\d\d criteria\/s, 0 errors$/),
    ]);

    const scripted = await withStderrNotATerminal(() => runCliInProcess(['grade', '--input', input, '--judge', 'scripted:met', '--no-cache', '--out', join(directory, 'scripted.jsonl')]));
    expect(scripted.code, scripted.stderr).toBe(0);
    expect(scripted.stderr).not.toMatch(/criteria\/s/);
  }, hangGuard(120_000));

  test('the default local model, not cached and no network: fails at once and says how to point to a model, an endpoint or the scripted judge', async ({ tempDir: directory }) => {
    const result = await runCli(['grade', '--input', itemsFile(directory), '--judge', 'gguf:default', '--out', join(directory, 'results.jsonl'), '--quiet'], {
      env: { RUBRICATE_CACHE_DIR: join(directory, 'cache'), XDG_CACHE_HOME: join(directory, 'xdg') },
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/JUDGE_UNAVAILABLE/);
    expect(result.stderr).toMatch(/--judge gguf:/);
    expect(result.stderr).toMatch(/RUBRICATE_MODEL/);
    expect(result.stderr).toMatch(/--judge openai:/);
    expect(result.stderr).toMatch(/--judge scripted/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, hangGuard(60_000));

  test('bench-local measures plans through the real judge, and --quick projects them from the same token counts', async ({ tempDir: directory }) => {
    const model = await writeTinyGguf({ path: join(directory, 'tiny-true.gguf'), bias: 'true' });
    const plans = ['per-criterion, full explanation, no prefix reuse (naive)', 'per-criterion, short explanation, prefix reuse', 'batched all, short explanation'];
    const common = ['bench-local', '--model', model, '--criteria', '3', '--threads', '1', '--json', '--plans', ...plans];
    type Report = {
      projected: boolean;
      raw: { prefillTokensPerSecond: number; decodeTokensPerSecond: number };
      plans: Array<{
        plan: string;
        secondsPerCriterion: number;
        criteria: number;
        calls: number;
        errors: number;
        prefillTokensPerCriterion: number;
        reusedTokensPerCriterion: number;
        forcedTokensPerCriterion: number;
        ratioToNaive: number;
        arithmeticSecondsPerCriterion: number;
        ratioToArithmetic: number;
        profile?: { sharedPrefixTokens: number; perCriterionPromptTokens: number; decodeSteps: number };
      }>;
    };
    const measuredRun = await runCliInProcess(common);
    expect(measuredRun.code, measuredRun.stderr).toBe(0);
    const measured = JSON.parse(measuredRun.stdout) as Report;
    expect(measured.projected).toBe(false);
    expect(measured.raw.prefillTokensPerSecond).toBeGreaterThan(0);
    expect(measured.plans.map((plan) => [plan.plan, plan.criteria, plan.calls, plan.errors])).toEqual([
      [plans[0], 3, 3, 0],
      [plans[1], 3, 3, 0],
      [plans[2], 3, 1, 0],
    ]);
    const [naive, reuse] = measured.plans;
    expect(naive.reusedTokensPerCriterion).toBe(0);
    // Every criterion after an item's first evaluates only its own tail.
    expect(reuse.reusedTokensPerCriterion).toBeGreaterThan(0);
    expect(reuse.prefillTokensPerCriterion).toBeLessThan(naive.prefillTokensPerCriterion / 2);
    expect(naive.ratioToNaive).toBe(1);
    // The profile splits the evaluated prompt into each item's shared context and the criteria's own tails.
    expect(reuse.profile?.sharedPrefixTokens).toBeGreaterThan(reuse.profile?.perCriterionPromptTokens ?? Number.POSITIVE_INFINITY);
    expect((reuse.profile?.sharedPrefixTokens ?? 0) + (reuse.profile?.perCriterionPromptTokens ?? 0)).toBe(reuse.prefillTokensPerCriterion * 3);
    // Per criterion the judge writes the JSON around the values itself.
    expect(reuse.forcedTokensPerCriterion).toBeGreaterThan(0);
    for (const plan of measured.plans) {
      expect(plan.arithmeticSecondsPerCriterion).toBeGreaterThan(0);
      expect(plan.ratioToArithmetic).toBeCloseTo(plan.secondsPerCriterion / plan.arithmeticSecondsPerCriterion, 6);
    }
    // Without reuse every call evaluates its shared context again.
    expect(naive.prefillTokensPerCriterion).toBeGreaterThan(reuse.prefillTokensPerCriterion);

    const quickRun = await runCliInProcess([...common, '--quick']);
    expect(quickRun.code, quickRun.stderr).toBe(0);
    const quick = JSON.parse(quickRun.stdout) as Report;
    expect(quick.projected).toBe(true);
    // The projection counts the very prompts the measured run evaluated.
    expect(quick.plans.map((plan) => [plan.plan, plan.calls, plan.prefillTokensPerCriterion, plan.reusedTokensPerCriterion])).toEqual(
      measured.plans.map((plan) => [plan.plan, plan.calls, plan.prefillTokensPerCriterion, plan.reusedTokensPerCriterion]),
    );
  }, hangGuard(180_000));

  test('bench-local grades a plan on two sequences at once, measures batched decode, and --quick projects it', async ({ tempDir: directory }) => {
    const model = await writeTinyGguf({ path: join(directory, 'tiny-true.gguf'), bias: 'true' });
    const plan = 'per-criterion, short explanation, prefix reuse, 2 sequences';
    const common = ['bench-local', '--model', model, '--criteria', '4', '--threads', '1', '--json', '--plans', plan];
    type Report = {
      projected: boolean;
      batchedDecode: Array<{ width: number; stepSeconds: number; tokensPerSecond: number }>;
      plans: Array<{ plan: string; criteria: number; calls: number; errors: number; secondsPerCriterion: number; reusedTokensPerCriterion: number; arithmeticSecondsPerCriterion: number }>;
    };
    const measuredRun = await runCliInProcess(common);
    expect(measuredRun.code, measuredRun.stderr).toBe(0);
    const measured = JSON.parse(measuredRun.stdout) as Report;
    expect(measured.batchedDecode.map((speed) => speed.width)).toEqual([1, 2]);
    for (const speed of measured.batchedDecode) expect(speed.tokensPerSecond).toBeCloseTo((speed.width / speed.stepSeconds), 6);
    expect(measured.plans.map((entry) => [entry.plan, entry.criteria, entry.calls, entry.errors])).toEqual([[plan, 4, 4, 0]]);
    // The second sequence loads the item's shared context instead of evaluating it.
    expect(measured.plans[0].reusedTokensPerCriterion).toBeGreaterThan(0);
    expect(measured.plans[0].arithmeticSecondsPerCriterion).toBeGreaterThan(0);

    const quickRun = await runCliInProcess([...common, '--quick']);
    expect(quickRun.code, quickRun.stderr).toBe(0);
    const quick = JSON.parse(quickRun.stdout) as Report;
    expect(quick.projected).toBe(true);
    expect(quick.plans.map((entry) => [entry.plan, entry.criteria, entry.calls])).toEqual([[plan, 4, 4]]);
    expect(quick.plans[0].secondsPerCriterion).toBeGreaterThan(0);
  }, hangGuard(120_000));
});
