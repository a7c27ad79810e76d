/**
 * LLM-Rubric's README baseline table on the real set, rebuilt from the published files: Q0's
 * sampled, most probable and expected answers to all 6 printed decimals (count, mean and
 * population spread included); then the reading rules on a hand-made folder.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { dataPath, haveData } from '../testing/data.js';
import { test } from '../testing/vitest-fixtures.js';
import { argmaxAnswer, expectedAnswer, joinedAnswers, llmRubricBaselines, readLlmRubricSet, type ScoreAgreement } from './llm-rubric.js';

const folder = dataPath('judge_evidence/llm_rubric_msft');
const available = haveData(folder, 'LLM-Rubric parity (src/meta/llm-rubric.test.ts)');

/** README @ 70d56fc4, Q0 rows: rmse, pearson, spearman, kendall, N, mean, std. */
const readme: Record<'sample' | 'argmax' | 'expected', number[]> = {
  sample: [1.207228, 0.03981, 0.045245, 0.040967, 223, 3.32287, 0.794469],
  argmax: [1.201643, 0.140091, 0.08699, 0.081134, 223, 3.61435, 0.563597],
  expected: [0.918676, 0.177301, 0.086675, 0.065928, 223, 3.282864, 0.300516],
};

function row(agreement: ScoreAgreement | null): string[] {
  const { rmse, pearson, spearman, kendall, n, mean, std } = agreement!;
  return [rmse, pearson.value, spearman.value, kendall.value, n, mean, std].map((value) => value!.toFixed(6));
}

describe.skipIf(!available)('the README baseline table', () => {
  test('Q0: sample, argmax and expected answer to 6 decimals', async () => {
    const report = await llmRubricBaselines(folder);
    for (const system of ['sample', 'argmax', 'expected'] as const) expect(row(report.baselines.Q0[system])).toEqual(readme[system].map((value) => value.toFixed(6)));
    // A question with "not applicable" answers drops them: Q1 has 77 on the real set.
    expect(report.baselines.Q1.expected.n).toBe(223 - 77);
    // The human ceiling: the synthetic set's annotators of the same dialogue against one another.
    expect(report.humanCeiling!.questions.Q0.dialogues).toBe(246);
    expect(report.humanCeiling!.questions.Q0.pairwise.pearson.value!.toFixed(6)).toBe('0.065711');
    const interval = report.baselines.Q0.expected.pearson.interval!;
    expect(interval[0]).toBeLessThan(0.177301);
    expect(interval[1]).toBeGreaterThan(0.177301);
  });
});

const header = 'text_id\tcriterion\tsample_llm\tanswer1_prob\tanswer2_prob\tanswer3_prob\tanswer4_prob';
const humansHeader = 'dialogue_system\ttext_id\tQ1\tQ2\tQ3\tQ4\tQ5\tQ6\tQ7\tQ8\tQ0\tannotator_id';

describe('reading an LLM-Rubric folder', () => {
  test('renormalises short distributions, drops "not applicable", and reads the upstream layout', async ({ tempDir }) => {
    const data = path.join(tempDir, 'data', 'real_data');
    await mkdir(data, { recursive: true });
    await writeFile(path.join(data, 'gpt-3.5-turbo-16k_real_evaluations_FIXED.tsv'), [header, 'a\tQ0\t4\t0.1\t0.2\t0.3\t0.3995', 'a\tQ1\t2\t0.25\t0.25\t0.25\t0.25', ''].join('\n'));
    await writeFile(path.join(data, 'human_judges_real_convs_FIXED_ANON.tsv'), [humansHeader, '1\ta\t0\t3\t3\t3\t3\t3\t3\t3\t4\t7'].join('\n'));
    const set = await readLlmRubricSet(tempDir, 'real');
    const q0 = joinedAnswers(set, 'Q0');
    expect(q0).toHaveLength(1);
    expect(q0[0].distribution.reduce((sum, value) => sum + value, 0)).toBeCloseTo(1, 15);
    expect(expectedAnswer(q0[0].distribution)).toBeCloseTo((0.1 + 0.4 + 0.9 + 1.598) / 0.9995, 12);
    expect(argmaxAnswer([0.25, 0.25, 0.25, 0.25])).toBe(1);
    expect(joinedAnswers(set, 'Q1')).toEqual([]);
  });

  test('names the file, line and field of an answer off the scale or probabilities that do not sum to 1', async ({ tempDir }) => {
    const evaluations = path.join(tempDir, 'real_data__gpt-3.5-turbo-16k_real_evaluations_FIXED.tsv');
    const humans = path.join(tempDir, 'real_data__human_judges_real_convs_FIXED_ANON.tsv');
    await writeFile(evaluations, [header, 'a\tQ0\t4\t0.1\t0.2\t0.3\t0.4'].join('\n'));
    await writeFile(humans, [humansHeader, '1\ta\t0\t3\t3\t3\t3\t3\t3\t3\t5\t7'].join('\n'));
    await expect(readLlmRubricSet(tempDir, 'real')).rejects.toMatchObject({ code: 'INPUT_INVALID', details: { file: humans, line: 2, field: 'Q0' } });
    await writeFile(humans, [humansHeader, '1\ta\t0\t3\t3\t3\t3\t3\t3\t3\t4\t7'].join('\n'));
    await writeFile(evaluations, [header, 'a\tQ0\t4\t0.1\t0.2\t0.3\t0.2'].join('\n'));
    await expect(readLlmRubricSet(tempDir, 'real')).rejects.toMatchObject({ details: { file: evaluations, line: 2, field: 'answer1_prob' } });
    await expect(readLlmRubricSet(tempDir, 'synthetic')).rejects.toMatchObject({ code: 'INPUT_UNREADABLE' });
  });
});
