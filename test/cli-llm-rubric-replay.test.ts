/**
 * LLM-Rubric's recorded judge replayed end to end on the shared data: `meta --format llm-rubric
 * --write-replay --write-items` turns gpt-3.5-turbo-16k's answer distributions into items and a
 * replay file, `grade --judge replay:FILE` answers from it, and `meta --results` rebuilds the
 * README's rows from the graded lines. The recorded distributions are read here straight from
 * the published TSV, not through the code under test. Skipped, and listed, when the data is absent.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { dataPath, haveData } from '../src/testing/data.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

const llmRubric = dataPath('judge_evidence/llm_rubric_msft');
const haveLlmRubric = haveData(llmRubric, 'LLM-Rubric replayed through grade and meta (test/cli-llm-rubric-replay.test.ts)');

/** (text_id, question) → the four published probabilities, from the evaluations TSV. */
function recordedDistributions(): Map<string, number[]> {
  const [header, ...rows] = readFileSync(path.join(llmRubric, 'real_data__gpt-3.5-turbo-16k_real_evaluations_FIXED.tsv'), 'utf8').trim().split('\n');
  const columns = header.trim().split('\t');
  const recorded = new Map<string, number[]>();
  for (const row of rows) {
    const cells = Object.fromEntries(row.trim().split('\t').map((cell, index) => [columns[index], cell]));
    recorded.set(`${cells.text_id} ${cells.criterion}`, [1, 2, 3, 4].map((answer) => Number(cells[`answer${answer}_prob`])));
  }
  return recorded;
}

function lines(file: string): Array<Record<string, any>> {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
}

describe.skipIf(!haveLlmRubric)('LLM-Rubric replayed', () => {
  test('grade answers with the recorded distributions, and meta rebuilds the README rows from them', async ({ tempDir }) => {
    const items = path.join(tempDir, 'items.jsonl');
    const replay = path.join(tempDir, 'verdicts.jsonl');
    const baselines = path.join(tempDir, 'baselines.json');
    const written = await runCliInProcess(['meta', '--format', 'llm-rubric', '--input', llmRubric, '--out', baselines, '--write-replay', replay, '--write-items', items]);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stderr).toContain('2007 recorded verdicts of gpt-3.5-turbo-16k');

    const results = path.join(tempDir, 'results.jsonl');
    const graded = await runCliInProcess(['grade', '--input', items, '--out', results, '--judge', `replay:${replay}`, '--verdict', 'expected-score', '--no-cache', '--quiet']);
    expect(graded.code, graded.stderr).toBe(0);
    const recorded = recordedDistributions();
    const lines_ = lines(results);
    expect(lines_).toHaveLength(223);
    let compared = 0;
    for (const result of lines_) {
      expect(result.judge).toMatchObject({ id: `replay:${replay}`, model: 'gpt-3.5-turbo-16k', settings: { replayed: true, recorded_judge: 'gpt-3.5-turbo-16k' } });
      for (const criterion of result.criteria) {
        const distribution = recorded.get(`${result.id} ${criterion.id}`)!;
        expect(distribution, `${result.id} ${criterion.id}`).toBeDefined();
        // The replayed label is the recorded most probable answer (first on ties)…
        expect(Number(criterion.label)).toBe(distribution.indexOf(Math.max(...distribution)) + 1);
        // …and the expected score is G-Eval's over the recorded probabilities of 1% or more.
        const kept = distribution.map((probability, index) => ({ answer: index + 1, probability })).filter((entry) => entry.probability >= 0.01);
        const expected = kept.reduce((sum, entry) => sum + entry.answer * entry.probability, 0) / kept.reduce((sum, entry) => sum + entry.probability, 0);
        expect(criterion.expected_score).toBeCloseTo(expected, 9);
        expect(criterion.explanation).toContain('replayed verdict');
        compared += 1;
      }
    }
    expect(compared).toBe(recorded.size);

    const rebuilt = path.join(tempDir, 'rebuilt.json');
    const meta = await runCliInProcess(['meta', '--format', 'llm-rubric', '--input', llmRubric, '--out', rebuilt, '--results', results]);
    expect(meta.code, meta.stderr).toBe(0);
    expect(meta.stderr).toContain(`replayed verdicts of gpt-3.5-turbo-16k (replay:${replay})`);
    const report = JSON.parse(readFileSync(rebuilt, 'utf8'));
    expect(report.graded.judge).toEqual({ id: `replay:${replay}`, model: 'gpt-3.5-turbo-16k', replayed: true });
    // The README's argmax row for Q0, from the replayed verdicts.
    const argmax = report.graded.questions.Q0.argmax;
    expect(argmax.n).toBe(223);
    expect(argmax.rmse).toBeCloseTo(1.201643, 6);
    expect(argmax.pearson.value).toBeCloseTo(0.140091, 6);
    expect(argmax.spearman.value).toBeCloseTo(0.08699, 6);
    expect(argmax.kendall.value).toBeCloseTo(0.081134, 6);
    for (const question of Object.keys(report.baselines)) expect(report.graded.questions[question].argmax).toEqual(report.baselines[question].argmax);
  });

  test('the converter\u2019s flags go together and belong to llm-rubric', async ({ tempDir }) => {
    const out = path.join(tempDir, 'r.json');
    const alone = await runCliInProcess(['meta', '--format', 'llm-rubric', '--input', llmRubric, '--out', out, '--write-replay', path.join(tempDir, 'v.jsonl')]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--write-replay and --write-items go together');
    const elsewhere = await runCliInProcess(['meta', '--format', 'results', '--input', path.join(tempDir, 'x.jsonl'), '--labels', path.join(tempDir, 'y.jsonl'), '--out', out, '--results', path.join(tempDir, 'z.jsonl')]);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('--results applies to --format llm-rubric, not to --format results');
  });
});
