/**
 * Parity of the RewardBench 2 and RM-Bench aggregations with their references' formulas, on the
 * fixtures in examples/ (written in the published row formats), each response scored by the
 * "(quality N)" it ends with; every expected value below is worked out by hand from the
 * reference definitions (reward-bench `reroll_and_score_dataset` / `process_single_model`,
 * RM-Bench `compute_accuracy`). Also the length baselines and the importers' refusals.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { rewardbench2Importer } from '../formats/rewardbench2.js';
import { rmBenchImporter } from '../formats/rm-bench.js';
import type { BestOfNItem } from '../rubric/schema.js';
import { bestOfNResult, tiesScore } from '../scoring/rewardbench2.js';
import { test } from '../testing/vitest-fixtures.js';
import { benchmarkScores, lengthBaselines, lengthScores, shownCandidates, type SetJudgment } from './best-of-n.js';

const examples = join(import.meta.dirname, '../../examples');

async function setsOf(importer: { read(file: string): AsyncIterable<{ kind: string; set?: BestOfNItem; error?: unknown }> }, file: string): Promise<BestOfNItem[]> {
  const sets: BestOfNItem[] = [];
  for await (const record of importer.read(file)) {
    expect(record.kind, String(record.error)).toBe('set');
    sets.push(record.set!);
  }
  return sets;
}

const quality = (response: string) => Number(/\(quality (\d+)\)$/.exec(response)![1]);
const byQuality = (sets: readonly BestOfNItem[]) => new Map<string, SetJudgment>(sets.map((set) => [set.id, { scores: set.responses.map(quality) }]));

describe('RewardBench 2 parity', () => {
  test('best-of-4 with the tie penalty, the Ties formula, and the mean of the subsets, by hand', async () => {
    const sets = await setsOf(rewardbench2Importer, join(examples, 'rewardbench2/sample.jsonl'));
    expect(sets.map((set) => [set.id, set.correct, set.responses.length])).toEqual([
      ['f1', 1, 4], ['f2', 1, 4], ['p1', 1, 4], ['m1', 1, 4], ['s1', 1, 4], ['o1', 1, 4], ['ref:1', 1, 3], ['tied:1', 3, 5], ['ref:2', 1, 3], ['tied:2', 2, 4],
    ]);
    const report = benchmarkScores('rewardbench2', sets, byQuality(sets)) as ReturnType<typeof import('../scoring/rewardbench2.js').rewardBench2Report>;
    // f1: 9 beats 3, 4, 2 → 1; f2: 6 ties one rejected 6 → 1/2; p1: 5 < 7 → 0; m1: 8 ties two 8s → 1/3; s1 → 1; o1: four 4s → 1/4.
    expect(Object.keys(report.subsets)).toEqual(['Factuality', 'Focus', 'Math', 'Precise IF', 'Safety', 'Ties']);
    expect(report.subsets.Factuality).toEqual({ score: 0.75, prompts: 2 });
    expect(report.subsets.Focus.score).toBe(0.25);
    expect(report.subsets.Math.score).toBeCloseTo(1 / 3, 15);
    expect(report.subsets['Precise IF'].score).toBe(0);
    expect(report.subsets.Safety.score).toBe(1);
    // ref:1 margin 9 − 6 = 3 (accurate); tied:1 margin 8 − 5 = 3, spread 9 − 8 = 1; ref:2 margin 6 − 7 = −1; tied:2 margin 8 − 8 = 0 (not > 0), spread 0.
    // preferred: prompt 1 3 > 1, prompt 2 0 > 0 no → 1/2; hard: min(3, 3) > 1, min(−1, 0) > 0 no → 1/2;
    // margin score: tanh(3/1 − 1) = tanh 2 and tanh(−1/0 − 1) = tanh(−∞) = −1 → (tanh 2 − 1) / 2.
    const marginScore = (Math.tanh(2) - 1) / 2;
    expect(report.ties).toEqual({ score: expect.closeTo(0.3 * 0.5 + 0.3 * 0.5 + 0.2 * 0.5 + 0.2 * 0.5 + 0.01 * marginScore, 15), ref_accuracy: 0.5, tied_accuracy: 0.5, correctness_preferred: 0.5, correctness_preferred_hard: 0.5, correctness_margin_score: expect.closeTo(marginScore, 15), prompts: { ref: 2, tied: 2, paired: 2 } });
    expect(report.overall).toBeCloseTo((0.75 + 0.25 + 1 / 3 + 0 + 1 + report.subsets.Ties.score) / 6, 15);
  });

  test('the formulas\' edge cases: a first place shared, 0 ÷ 0 margins, a Ties prompt without its partner', () => {
    expect(bestOfNResult([3, 3, 3, 3])).toBe(0.25);
    expect(bestOfNResult([2, 3, 1, 1])).toBe(0);
    const rows = [
      { id: 'ref:7', subset: 'Ties', numCorrect: 1, scores: [5, 5] },
      { id: 'tied:7', subset: 'Ties', numCorrect: 2, scores: [5, 5, 5] },
    ];
    // Margins 0 and 0, spread 0: 0 ÷ 0 is NaN, counted 0 (NumPy's nan_to_num).
    expect(tiesScore(rows)).toMatchObject({ score: 0, correctness_margin_score: 0 });
    expect(() => tiesScore([rows[0]])).toThrow(/no prompt given as both ref:N and tied:N/);
  });

  test('the length baselines score the same way, and a row whose counts disagree is refused', async ({ tempDir }) => {
    const sets = await setsOf(rewardbench2Importer, join(examples, 'rewardbench2/sample.jsonl'));
    const baselines = lengthBaselines('rewardbench2', sets) as { longer: { subsets: Record<string, { score: number }> }; shorter: { subsets: Record<string, { score: number }> } };
    // The safety answer that refuses is by far the longest of its four.
    expect(baselines.longer.subsets.Safety.score).toBe(1);
    expect(baselines.shorter.subsets.Safety.score).toBe(0);
    expect(lengthScores(sets[0], 'shorter')).toEqual(sets[0].responses.map((response) => -[...response].length));
    const bad = join(tempDir, 'bad.jsonl');
    writeFileSync(bad, `${JSON.stringify({ id: 'x', prompt: 'p', chosen: ['a'], rejected: ['b', 'c', 'd'], num_correct: 2, subset: 'Math' })}\n${JSON.stringify({ id: 'y', prompt: 'p', chosen: ['a', 'b'], rejected: ['c'], subset: 'Math' })}\n`);
    const records = [];
    for await (const record of rewardbench2Importer.read(bad)) records.push(record);
    expect(records.map((record) => (record.kind === 'invalid' ? record.error.details.field : 'set'))).toEqual(['num_correct', 'chosen']);
  });

  test('the chosen response is shown at a place that depends on the prompt only, swapped with the first', async () => {
    const [set] = await setsOf(rewardbench2Importer, join(examples, 'rewardbench2/sample.jsonl'));
    const shown = shownCandidates(set);
    expect([...shown].sort()).toEqual([...set.responses].sort());
    expect(shownCandidates(set)).toEqual(shown);
  });
});

describe('RM-Bench parity', () => {
  test('the 3×3 style matrix, hard/normal/easy per domain, and Overall as the mean of chat, math, code and safety, by hand', async () => {
    const sets = await setsOf(rmBenchImporter, join(examples, 'rm-bench/sample.json'));
    const report = benchmarkScores('rm-bench', sets, byQuality(sets)) as ReturnType<typeof import('../scoring/rm-bench.js').rmBenchReport>;
    // chat: rows (8,8,8 | 5,6,9) and (4,7,9 | 5,5,5) → matrix [[.5,.5,0],[1,1,.5],[1,1,.5]].
    expect(report.domains.chat).toMatchObject({ matrix: [[0.5, 0.5, 0], [1, 1, 0.5], [1, 1, 0.5]], hard_acc: expect.closeTo(1 / 3, 15), normal_acc: expect.closeTo(2 / 3, 15), easy_acc: 1, average: expect.closeTo(2 / 3, 15), prompts: 2 });
    // math: (3,3,3 | 3,2,1) → every row [0,1,1]: hard 1, normal 2/3, easy 1/3.
    expect(report.domains.math).toMatchObject({ hard_acc: 1, normal_acc: expect.closeTo(2 / 3, 15), easy_acc: expect.closeTo(1 / 3, 15) });
    expect(report.domains.code).toMatchObject({ hard_acc: 1, normal_acc: 1, easy_acc: 1, average: 1 });
    // safety (refuse and response together): (2,2,2 | 3,3,3) all lost; (6,5,4 | 5,5,5) only the concise one wins → [[.5,.5,.5],[0,0,0],[0,0,0]].
    expect(report.domains.safety).toMatchObject({ hard_acc: expect.closeTo(1 / 3, 15), normal_acc: expect.closeTo(1 / 6, 15), easy_acc: 0, prompts: 2 });
    expect(report.overall).toEqual({ total_avg_acc: expect.closeTo((2 / 3 + 2 / 3 + 1 + 1 / 6) / 4, 15), hard_acc: expect.closeTo(2 / 3, 15), normal_acc: expect.closeTo(0.625, 15), easy_acc: expect.closeTo(7 / 12, 15) });
    expect(report.unknown_domain).toBe(0);
  });

  test('without one of the four domains there is no Overall; a row of another domain is counted apart', () => {
    const row = (id: string, domain: string): BestOfNItem => ({ id, prompt: [], responses: ['a (quality 2)', 'b (quality 2)', 'c (quality 2)', 'd (quality 1)', 'e (quality 1)', 'f (quality 1)'], correct: 3, subset: domain });
    const sets = [row('1', 'chat'), row('2', 'poetry')];
    const report = benchmarkScores('rm-bench', sets, byQuality(sets)) as ReturnType<typeof import('../scoring/rm-bench.js').rmBenchReport>;
    expect(report.overall).toBeNull();
    expect(report.unknown_domain).toBe(1);
    expect(report.domains.chat?.average).toBe(1);
  });
});
