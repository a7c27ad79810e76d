/**
 * `meta --format llmjudge` against the LLMJudge organisers' notebook: every run whose figures
 * the notebook prints, to all 6 printed decimals, and its crosstab; then the rules on a small
 * hand-made run (clipping, a missing pair, unlabelled lines, malformed lines).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { dataPath, haveData } from '../testing/data.js';
import { test } from '../testing/vitest-fixtures.js';
import { llmJudgeAgreement, llmJudgeMeta, readGradedPairs } from './llmjudge.js';

const folder = dataPath('judge_evidence/llmjudge_trec_dl23');
const available = haveData(folder, 'LLMJudge parity (src/meta/llmjudge.test.ts)');

/** `0-corr-analysis.ipynb`, cell 4: α on the 4-point scale and binarised at ≥1, ≥2, ≥3 (the columns it calls "kappa"). */
const published: Array<[string, number, number, number, number]> = [
  ['h2oloo-fewself', 0.495764, 0.410792, 0.428016, 0.297844],
  ['h2oloo-zeroshot1', 0.481175, 0.405772, 0.385039, 0.306258],
  ['h2oloo-zeroshot2', 0.389818, 0.34181, 0.317459, 0.276929],
  ['TREMA-rubric0', 0.103604, 0.117231, -0.089472, 0.016718],
  ['TREMA-sumdecompose', 0.392616, 0.313767, 0.343022, 0.199542],
  ['willia-umbrela1', 0.491793, 0.412928, 0.393941, 0.312438],
  ['willia-umbrela2', 0.455608, 0.396124, 0.329797, 0.319274],
  ['willia-umbrela3', 0.453547, 0.396488, 0.331441, 0.318456],
];

describe.skipIf(!available)('the organisers\u2019 published figures', () => {
  test.each(published)('%s: α 4-point, ≥1, ≥2, ≥3 to 6 decimals', async (run, fourPoint, atLeast1, atLeast2, atLeast3) => {
    const report = await llmJudgeMeta(path.join(folder, 'submissions', `${run}.txt`), path.join(folder, 'llmjudge_test_qrel_idx.txt'));
    expect(report.pairs).toMatchObject({ labelled: 4423, judged: 4423, missingFromRun: 0 });
    const alphas = [report.fourPoint, report.binarised.atLeast1, report.binarised.atLeast2, report.binarised.atLeast3].map((row) => row.krippendorffAlpha!.toFixed(6));
    expect(alphas).toEqual([fourPoint, atLeast1, atLeast2, atLeast3].map((value) => value.toFixed(6)));
    if (run === 'h2oloo-fewself') expect(report.binarised.atLeast2.confusion).toEqual([[2719, 519], [483, 702]]);
    if (run === 'h2oloo-zeroshot2') expect(report.pairs.clipped).toBe(1);
  });
});

describe('graded runs', () => {
  test('clips run labels, leaves a missing pair out and counts it, and computes κ beside α', async ({ tempDir }) => {
    const labels = path.join(tempDir, 'qrels.txt');
    const run = path.join(tempDir, 'run-a.txt');
    await writeFile(labels, ['q1 0 d1 0', 'q1 0 d2 1', 'q1 0 d3 2', 'q2 0 d1 3', 'q2 0 d2 0', ''].join('\n'));
    await writeFile(run, ['q1 0 d1 -1', 'q1 0 d2 1', 'q1 0 d3 3', 'q2 0 d1 10', 'q9 0 d9 2'].join('\n'));
    const report = await llmJudgeMeta(run, labels);
    expect(report.run).toBe('run-a');
    expect(report.pairs).toEqual({ labelled: 5, judged: 4, missingFromRun: 1, unlabelledInRun: 1, clipped: 2 });
    expect(report.fourPoint.confusion).toEqual([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 0, 1]]);
    expect(report.fourPoint.accuracy).toBe(0.75);
    // Binarised at ≥1 both sides agree on every judged pair.
    expect(report.binarised.atLeast1.cohenKappa).toBe(1);
    expect(report.binarised.atLeast1.krippendorffAlpha).toBe(1);
    expect(report.binarised.atLeast3.confusion).toEqual([[2, 1], [0, 1]]);
  });

  test('names the file, line and field of a malformed or repeated line', async ({ tempDir }) => {
    const file = path.join(tempDir, 'bad.txt');
    await writeFile(file, 'q1 0 d1 1\nq1 0 d2 high\n');
    await expect(readGradedPairs(file)).rejects.toMatchObject({ code: 'INPUT_INVALID', details: { file, line: 2, field: 'label' } });
    await writeFile(file, 'q1 0 d1 1\nq1 0 d1 2\n');
    await expect(readGradedPairs(file)).rejects.toMatchObject({ details: { line: 2, field: 'docid' } });
    await writeFile(file, 'q1 d1 1\n');
    await expect(readGradedPairs(file)).rejects.toMatchObject({ details: { line: 1 } });
  });

  test('refuses human labels off the 0..3 scale and run labels that are not whole', () => {
    const files = { run: 'run.txt', labels: 'qrels.txt' };
    expect(() => llmJudgeAgreement(new Map([['q d', 4]]), new Map([['q d', 1]]), files)).toThrow(/not one of 0, 1, 2, 3/);
    expect(() => llmJudgeAgreement(new Map([['q d', 1]]), new Map([['q d', 1.5]]), files)).toThrow(/not a whole number/);
  });
});
