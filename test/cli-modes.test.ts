import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';
import { dataDirectory, haveData } from '../src/testing/data.js';
import { hangGuard } from '../src/testing/hang-guard.js';

// The CLI's entry point runs in this process (no start-up per command): these cases are about the
// grading; exit codes through a real process are exit-codes.test.ts's.
const data = dataDirectory();
const natural = join(data, 'llmbar/LLMBar/Natural/dataset.json');
const biggen = join(data, 'biggen_bench/sample_responses.json');

function responseBlock(text: string, position: 1 | 2): string {
  return new RegExp(`<response-${position}-([0-9a-f]{16})>\\n([\\s\\S]*?)\\n</response-${position}-\\1>`).exec(text)?.[2] ?? '';
}

describe.skipIf(!haveData(natural, 'test/cli-modes.test.ts'))('rubricate compare on LLMBar Natural (real data, loopback judge)', () => {
  if (!existsSync(natural)) console.warn(`skipping: ${natural} not found`);

  test('a judge that always prefers the first position: positional agreement 0, accuracy 50%', async ({ makeTempDir, startJudge }) => {
    const fake = await startJudge(() => ({ content: { explanation: 'The first one.', winner: '1' } }));
    const directory = makeTempDir('rubricate-llmbar-');
    const out = join(directory, 'compare.jsonl');
    const result = await runCliInProcess(['compare', '--format', 'llmbar', '--input', natural, '--judge', 'openai:first', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', out, '--no-ties']);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(`${out}.summary.json`, 'utf8')) as { n: number; overall: { inconsistent: number }; agreement: { overall: { accuracy: { original: number; swapped: number; average: number }; positionalAgreement: number } } };
    expect(summary.n).toBe(100);
    expect(summary.agreement.overall.positionalAgreement).toBe(0);
    expect(summary.agreement.overall.accuracy.average).toBe(0.5);
    expect(summary.agreement.overall.accuracy.original + summary.agreement.overall.accuracy.swapped).toBeCloseTo(1, 12);
    expect(summary.overall.inconsistent).toBe(100);
    expect(result.stderr).toMatch(/accuracy .*50\.0% \(average\); positional agreement 0\.0%/);
    expect(fake.requests).toHaveLength(200);
  }, hangGuard(120_000));

  test('a judge that follows the gold label: 100% accuracy and positional agreement', async ({ makeTempDir, startJudge }) => {
    const rows = JSON.parse(readFileSync(natural, 'utf8')) as Array<{ output_1: string; output_2: string; label: 1 | 2 }>;
    const gold = new Map(rows.map((row) => [row.label === 1 ? row.output_1 : row.output_2, true]));
    const fake = await startJudge((request) => ({ content: { explanation: 'Follows the label.', winner: gold.has(responseBlock(request.userText, 1)) ? '1' : '2' } }));
    const directory = makeTempDir('rubricate-llmbar-');
    const out = join(directory, 'compare.jsonl');
    const result = await runCliInProcess(['compare', '--format', 'llmbar', '--input', natural, '--judge', 'openai:oracle', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', out, '--no-ties']);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(`${out}.summary.json`, 'utf8')) as { agreement: { overall: { accuracy: { average: number }; positionalAgreement: number } } };
    expect(summary.agreement.overall.accuracy.average).toBe(1);
    expect(summary.agreement.overall.positionalAgreement).toBe(1);
    const first = JSON.parse(readFileSync(out, 'utf8').split('\n')[0]) as { winner: string; label: string; consistent: boolean; orders: Record<string, string> };
    expect(first.winner).toBe(first.label);
    expect(first.consistent).toBe(true);
    expect(Object.keys(first.orders)).toEqual(['ab', 'ba']);
  }, hangGuard(120_000));
});

describe.skipIf(!haveData(natural, 'test/cli-modes.test.ts'))('rubricate meta runs a judge on a labelled pairwise set', () => {
  test('scores a first-position-biased judge on LLMBar Natural in one command', async ({ makeTempDir, startJudge }) => {
    const fake = await startJudge(() => ({ content: { explanation: 'The first one.', winner: '1' } }));
    const directory = makeTempDir('rubricate-meta-');
    const out = join(directory, 'meta.json');
    const result = await runCliInProcess(['meta', '--format', 'llmbar', '--input', natural, '--judge', 'openai:first', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', out, '--bootstrap-resamples', '0']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { overall: { accuracy: { average: number }; positionalAgreement: number } };
    expect(report.overall.positionalAgreement).toBe(0);
    expect(report.overall.accuracy.average).toBe(0.5);
  }, hangGuard(120_000));
});

describe.skipIf(!haveData(biggen, 'test/cli-modes.test.ts'))('rubricate grade --format biggen (real data, loopback judge)', () => {
  test('grades BiGGen-Bench items on their 1–5 rubrics; a label off the scale is an error, never a default', async ({ makeTempDir, startJudge }) => {
    const fake = await startJudge((request) => {
      // Instances whose id hash is odd get an answer off the scale, every time.
      const offScale = request.userText.length % 7 === 0;
      return { content: offScale ? { explanation: 'great', choice: '6' } : { explanation: 'ok', choice: String((request.userText.length % 5) + 1) } };
    });
    const directory = makeTempDir('rubricate-biggen-');
    const out = join(directory, 'results.jsonl');
    const result = await runCliInProcess(['grade', '--format', 'biggen', '--input', biggen, '--judge', 'openai:likert', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', out, '--max-attempts', '2', '--concurrency', '32']);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { status: string; score: number | null; criteria: Array<{ label?: string; value?: number; error?: { code: string; message: string } }> });
    expect(lines).toHaveLength(765);
    const errors = lines.filter((line) => line.status === 'error');
    const ok = lines.filter((line) => line.status === 'ok');
    expect(errors.length).toBeGreaterThan(0);
    expect(ok.length).toBeGreaterThan(500);
    for (const line of errors) {
      expect(line.score).toBeNull();
      expect(line.criteria[0].error?.message).toMatch(/"6" .* not on its scale/);
    }
    // The biggen scoring (the format's default) reports the 1–5 score itself, as BiGGen-Bench does.
    for (const line of ok) expect(line.score).toBe(Number(line.criteria[0].label));
    expect(result.code).toBe(3);
  }, hangGuard(120_000));
});
