/**
 * Parity with each benchmark's own scorer. Every expected value is derived in a comment from
 * the reference's formula (file and function named in docs/scoring.md), by hand.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toScoredItem } from '../results/results.js';
import { prbenchImporter } from '../formats/prbench.js';
import { profbenchImporter } from '../formats/profbench.js';
import { rarImporter } from '../formats/rar.js';
import { pointsForImportance } from '../rubric/importance.js';
import type { Item } from '../rubric/schema.js';
import { lengthAdjustedScoring } from './benchmarks.js';
import { failedAsNotMet, withFailedAsZero } from './failed-as-zero.js';
import { aggregate, getScoring } from './registry.js';
import { toSimpleEvalsMetrics } from './simple-evals-format.js';
import { test } from '../testing/vitest-fixtures.js';
import type { ScoredCriterion, ScoredItem } from './types.js';

function criterion(points: number, met: boolean | null, extra: Partial<ScoredCriterion> = {}): ScoredCriterion {
  return { id: `c${Math.random().toString(36).slice(2, 8)}`, points, tags: [], status: met === null ? 'error' : 'ok', met, ...extra };
}
function item(id: string, criteria: ScoredCriterion[], extra: Partial<ScoredItem> = {}): ScoredItem {
  return { id, status: criteria.some((entry) => entry.status === 'error') ? 'error' : 'ok', criteria, ...extra };
}
function tempFile(directory: string, name: string, lines: unknown[]): string {
  const file = join(directory, name);
  writeFileSync(file, lines.map((line) => JSON.stringify(line)).join('\n'));
  return file;
}
async function items(read: AsyncIterable<{ kind: string; item?: Item }>): Promise<Item[]> {
  const list: Item[] = [];
  for await (const record of read) {
    expect(record.kind).toBe('item');
    if (record.item) list.push(record.item);
  }
  return list;
}

describe('PRBench (evals.py: mean_clipped = max(0, np.mean(points / Σpositive)), std_clipped = np.std)', () => {
  it('clips the mean, not each task, and reports the standard deviations', () => {
    // Task a: weights [5, −8], the −8 met, the 5 not: points −8, Σpositive 5 → −1.6.
    // Task b: weight [4] met → 4 / 4 = 1.0.
    // mean_clipped = max(0, (−1.6 + 1.0) / 2) = max(0, −0.3) = 0 (clipping each task would give 0.5).
    // std_clipped = np.std([−1.6, 1.0]) = sqrt((1.3² + 1.3²) / 2) = 1.3.
    // normalized: a (−8 − (−8)) / (5 − (−8)) = 0, b (4 − 0) / (4 − 0) = 1 → mean 0.5, std 0.5.
    const metrics = aggregate(getScoring('prbench_clipped'), [item('a', [criterion(5, false), criterion(-8, true)]), item('b', [criterion(4, true)])]);
    expect(metrics.overall?.score).toBe(0);
    expect(metrics.extra?.prbench).toEqual({ mean_clipped: 0, std_clipped: expect.closeTo(1.3, 15), mean_normalized: 0.5, std_normalized: 0.5 });
  });

  it('a positive mean is reported as is', () => {
    // Ratios 0.5 (2 of 4) and 0.25 (1 of 4) → mean 0.375 ≥ 0; std = 0.125.
    const metrics = aggregate(getScoring('prbench_clipped'), [item('a', [criterion(2, true), criterion(2, false)]), item('b', [criterion(1, true), criterion(3, false)])]);
    expect(metrics.overall?.score).toBe(0.375);
    expect((metrics.extra?.prbench as { std_clipped: number }).std_clipped).toBe(0.125);
  });

  it('knows all six weight classes; the class midpoint is only a fallback', () => {
    // Class ranges: critically important 8–10, important 4–7, slightly important 1–3,
    // slightly detrimental −3…−1, detrimental −7…−4, critically detrimental −10…−8.
    expect(['critically important', 'important', 'slightly important', 'slightly detrimental', 'detrimental', 'critically detrimental'].map((name) => pointsForImportance(name, 'prbench'))).toEqual([
      9, 5.5, 2, -2, -5.5, -9,
    ]);
  });

  test('takes each criterion\u2019s own integer weight from annotations (Criterion.find_weight)', async ({ tempDir }) => {
    const annotation = (weightClass: string, weight?: number) => ({
      weight_class: weightClass,
      criteria_category: 'Financial Accuracy',
      ...(weight === undefined ? {} : { [`${weightClass.replace(/ /g, '_')}_weight`]: weight }),
      // Other classes' weight fields may carry stale values; only the named class counts.
      important_weight: weightClass === 'important' ? weight : 99,
    });
    const file = tempFile(tempDir, 'prbench.jsonl', [
      {
        task: 't1',
        field: 'Finance',
        prompt_0: 'Question?',
        reference_texts_0: ['Ref one'],
        response: 'Answer.',
        rubric: [
          { id: 'r1', title: 'States the rate.', annotations: annotation('critically important', 10) },
          { id: 'r2', title: 'Mentions tax.', annotations: annotation('important', 4) },
          { id: 'r3', title: 'Cites a source.', annotations: annotation('slightly important', 1) },
          { id: 'r4', title: 'Digresses.', annotations: annotation('slightly detrimental', -3) },
          { id: 'r5', title: 'Wrong sign.', annotations: annotation('detrimental', -7) },
          { id: 'r6', title: 'Advises fraud.', annotations: annotation('critically detrimental') },
        ],
      },
    ]);
    const [imported] = await items(prbenchImporter.read(file, {}));
    expect(imported.rubric.criteria.map((entry) => entry.points)).toEqual([10, 4, 1, -3, -7, -9]);
    expect(imported.rubric.criteria[5].metadata).toEqual({ weight_from: 'class midpoint' });
    // PRBench's process_reference_texts prepends "Reference Text i:\n…\n\n" to the prompt.
    expect(imported.prompt).toEqual([{ role: 'user', content: 'Reference Text 0:\nRef one\n\nQuestion?' }]);
  });
});

describe('ProfBench (score_report_generation.py: get_predicted_score_per_task_id_e2e)', () => {
  const report = (task: string, domain: string, text: string, metC1: boolean, metC2: boolean): ScoredItem =>
    item(`${task}:${text}`, [criterion(4, metC1, { tags: ['criterion_type:Reasoning'] }), criterion(2, metC2, { tags: ['criterion_type:Style'] })], {
      tags: [`domain:${domain}`],
      metadata: { task_id: task },
      responseDigest: text,
    });
  const reports = [
    // Physics, task t1: three reports (unequal reports per task): 6/6 = 1, 2/6, 0/6 → task mean 4/9.
    report('t1', 'Physics PhD', 'r1a', true, true),
    report('t1', 'Physics PhD', 'r1b', false, true),
    report('t1', 'Physics PhD', 'r1c', false, false),
    // Physics, task t2: one report 4/6 → task mean 2/3.  Physics = (4/9 + 2/3) / 2 = 0.5556 → round 0.556.
    // (Averaging reports within the domain instead would give (1 + 1/3 + 0 + 2/3) / 4 = 0.5.)
    report('t2', 'Physics PhD', 'r2', true, false),
    // Chemistry, task t3: the same text twice is one report, criteria pooled: (4 + 6) / (6 + 6) = 5/6;
    // another report 0/6 → task mean (5/6 + 0) / 2 = 0.41667 → Chemistry round 0.417.
    report('t3', 'Chemistry PhD', 'same', true, false),
    report('t3', 'Chemistry PhD', 'same', true, true),
    report('t3', 'Chemistry PhD', 'other', false, false),
  ];
  const metrics = aggregate(getScoring('profbench'), reports);

  it('averages reports within a task, tasks within a domain, then the rounded domain means', () => {
    // Overall = round(np.mean([0.556, 0.417]), 3) = round(0.4865, 3) = 0.487 (NumPy: 486.50000000000006 → 487);
    // without rounding the domains first it would be round(0.48611, 3) = 0.486.
    expect(metrics.by_tag['domain:Physics PhD'].score).toBe(0.556);
    expect(metrics.by_tag['domain:Chemistry PhD'].score).toBe(0.417);
    expect(metrics.overall?.score).toBe(0.487);
    expect(metrics.extra?.tasks).toBe(3);
    expect(metrics.extra?.reports).toBe(6);
  });

  it('prints every figure ×100 to one decimal, with the criterion-type fulfilment rates', () => {
    // Reasoning (weight-4 criterion) met in r1a, r2, same, same = 4 of 7 rows → round(0.5714, 3) = 0.571 → 57.1.
    // Style (weight-2 criterion) met in r1a, r1b, the second "same" = 3 of 7 → 0.429 → 42.9.
    expect(metrics.extra?.profbench).toEqual({ 'Physics PhD': 55.6, 'Chemistry PhD': 41.7, Overall: 48.7, Reasoning: 57.1, Style: 42.9 });
  });

  it('response_len_chars: the last report of each task, averaged and rounded half to even', () => {
    // {task_id: len(response)} keeps each task's last report: t1 → 10, t2 → 13; np.mean = 11.5 → round → 12 (even).
    const withLength = (entry: ScoredItem, length: number) => ({ ...entry, responseCharacters: length });
    const lengths = aggregate(getScoring('profbench'), [withLength(reports[0], 99), withLength(reports[1], 10), withLength(reports[3], 13)]);
    expect((lengths.extra?.profbench as Record<string, number>).response_len_chars).toBe(12);
  });

  it('identical report texts get the same digest from results lines', () => {
    const line = (id: string, response: string) => toScoredItem({ id, status: 'ok', criteria: [], response });
    expect(line('a', 'Same report.').responseDigest).toBe(line('b', 'Same report.').responseDigest);
    expect(line('a', 'Same report.').responseDigest).not.toBe(line('a', 'Other.').responseDigest);
  });

  test('imports report rows with weights Critical 4 … Additional 1 and criterion types', async ({ tempDir }) => {
    const file = tempFile(tempDir, 'profbench.jsonl', [
      {
        task_id: 'T9',
        domain: 'Finance MBA',
        prompt: 'Write a memo.',
        response: 'Memo.',
        rubrics: [
          { criterion_description: 'Gives the NPV.', criterion_weight: 'Critical', criterion_type: ['Extraction', 'Reasoning'] },
          { criterion_description: 'Is concise.', criterion_weight: 'Additional', criterion_type: ['Style'] },
        ],
      },
    ]);
    const [imported] = await items(profbenchImporter.read(file, {}));
    expect(imported.rubric.criteria.map((entry) => [entry.points, entry.tags.filter((tag) => tag.startsWith('criterion_type:'))])).toEqual([
      [4, ['criterion_type:Extraction', 'criterion_type:Reasoning']],
      [1, ['criterion_type:Style']],
    ]);
    expect(imported.metadata).toMatchObject({ task_id: 'T9', domain: 'Finance MBA' });
  });
});

describe('RaR explicit reward (paper Eq. 1: Σ w·c ÷ Σ w over all weights)', () => {
  test('divides by the sum of all weights, pitfalls included', async ({ tempDir }) => {
    // Weights [5, 3, −2], verdicts [met, not, met]: (5 − 2) / (5 + 3 − 2) = 3 / 6 = 0.5 (Σ positive would give 3/8).
    const scored = item('r', [criterion(5, true), criterion(3, false), criterion(-2, true)]);
    expect(getScoring('rar_explicit').itemScore(scored)).toBe(0.5);
    const file = tempFile(tempDir, 'rar.jsonl', [{ id: 'q1', question: 'Q?', response: 'A.', rubric: [{ title: 'x', description: 'Essential Criteria: y', weight: 5 }] }]);
    await items(rarImporter.read(file, {}));
    expect(rarImporter.defaultScoring).toBe('rar_explicit');
  });
  it('is unscorable where the formula is undefined (Σ w ≤ 0)', () => {
    // Only a pitfall: Σ w = −2; the ratio would turn a met pitfall into +1.
    expect(getScoring('rar_explicit').itemScore(item('p', [criterion(-2, true)]))).toBeNull();
  });
});

describe('BiGGen-Bench (make_report.py: Overall = mean of the capability means)', () => {
  const instance = (capability: string, score: number, index: number): ScoredItem =>
    item(`${capability}_${index}`, [criterion(1, score >= 5, { label: String(score), value: (score - 1) / 4 })], { tags: [`capability:${capability}`] });
  it('averages the capability means, not the instances', () => {
    // planning [5, 5, 5, 4] → 4.75; reasoning [1] → 1.0; Overall = (4.75 + 1.0) / 2 = 2.875
    // (the mean of all five instances would be 20 / 5 = 4.0).
    const metrics = aggregate(getScoring('biggen'), [instance('planning', 5, 0), instance('planning', 5, 1), instance('planning', 5, 2), instance('planning', 4, 3), instance('reasoning', 1, 0)]);
    expect(metrics.overall?.score).toBe(2.875);
    expect(metrics.by_tag['capability:planning'].score).toBe(4.75);
    // Printed like f"{x:.3f}": 2.875 is exact, so the tie rounds half to even → "2.875"; N/A for empty capabilities.
    expect(metrics.extra?.biggen_printed).toMatchObject({ planning: '4.750', reasoning: '1.000', Overall: '2.875', safety: 'N/A' });
  });
  it('prints exact ties half to even, as Python does (3.0625 → "3.062")', () => {
    // grounding 16 instances: fifteen 3s and one 4 → 49 / 16 = 3.0625 exactly.
    const scores = [...Array.from({ length: 15 }, () => 3), 4];
    const metrics = aggregate(getScoring('biggen'), scores.map((score, index) => instance('grounding', score, index)));
    expect(metrics.extra?.biggen_printed).toMatchObject({ grounding: '3.062', Overall: '3.062' });
  });
});

describe('DeepResearch Bench II (aggregate_scores.py: compute_dimension_averages; verdicts keyed by rubric text)', () => {
  const graded = (text: string, dimension: string, met: boolean, label?: string): ScoredCriterion => criterion(1, met, { text, tags: [`dimension:${dimension}`], ...(label ? { label } : {}) });
  it('counts a repeated rubric text once, with its last verdict, and reports blocked_rate', () => {
    // info_recall lists X three times (verdicts met, met, not met): one item, its last verdict → 0 / 1.
    // analysis Y met → 1 / 1; presentation Z labelled blocked (score −1) → 0 / 1.
    // total = 1 one among 3 texts = 1/3; blocked_rate = 1 / 3. (Counting copies: info_recall 2/3, total 3/5.)
    const task = item('task45', [graded('X', 'info_recall', true), graded('X', 'info_recall', true), graded('X', 'info_recall', false), graded('Y', 'analysis', true), graded('Z', 'presentation', false, 'blocked')], {
      metadata: { idx: 116 },
    });
    const metrics = aggregate(getScoring('drb2'), [task]);
    expect(metrics.extra?.drb2).toEqual({ inforecall: 0, analysis: 1, presentation: 0, total: 1 / 3, blocked_rate: 1 / 3 });
    expect(metrics.overall?.score).toBe(1 / 3);
  });
  it('a text listed under two dimensions counts once, under the last', () => {
    // dimension_map[text] is overwritten in listing order, so W belongs to presentation only.
    const task = item('t', [graded('W', 'info_recall', true), graded('W', 'presentation', true), graded('V', 'info_recall', false)]);
    expect(aggregate(getScoring('drb2'), [task]).extra?.drb2).toEqual({ inforecall: 0, analysis: null, presentation: 1, total: 0.5, blocked_rate: 0 });
  });
  it('averages repeated records of a task first, then tasks', () => {
    // Task 1 twice: totals 1 and 0 → 0.5; task 2 once: 1 → mean over tasks (0.5 + 1) / 2 = 0.75.
    const one = (met: boolean, idx: number) => item(`i${idx}${met}`, [graded('A', 'analysis', met)], { metadata: { idx } });
    expect(aggregate(getScoring('drb2'), [one(true, 1), one(false, 1), one(true, 2)]).overall?.score).toBe(0.75);
  });
});

describe('rubrics with no positive weight (ResearchRubrics and RuscaRL score them 0)', () => {
  const onlyPenalty = () => item('z', [criterion(-3, false), criterion(-1, true)]);
  it('compliance: `numerator / denominator if denominator > 0 else 0.0`', () => {
    expect(getScoring('compliance').itemScore(onlyPenalty())).toBe(0);
    expect(getScoring('compliance_binary').itemScore(onlyPenalty())).toBe(0);
    // The 0 enters the mean: (1 + 0) / 2 = 0.5, and nothing is unscorable.
    const metrics = aggregate(getScoring('compliance'), [item('full', [criterion(2, true)]), onlyPenalty()]);
    expect([metrics.overall?.score, metrics.n_unscorable]).toEqual([0.5, 0]);
  });
  it('RuscaRL calculate_score: `if total_possible_points == 0: return 0.0`', () => {
    expect(getScoring('ruscarl').itemScore(onlyPenalty())).toBe(0);
  });
  it('other scorings keep such items unscorable', () => {
    expect(getScoring('healthbench').itemScore(onlyPenalty())).toBeNull();
    expect(getScoring('weighted_mean').itemScore(onlyPenalty())).toBeNull();
  });
});

describe('HealthBench flat output with a length-adjusted scoring', () => {
  it('writes overall_score (unadjusted) and overall_score_length_adjusted, as upstream does', () => {
    // One item, 10 of 10 points met, 3,000 characters: unadjusted 1; adjusted 1 − 0.0299 × (3000 − 2000) / 500 = 0.9402.
    const metrics = aggregate(lengthAdjustedScoring('regular'), [item('a', [criterion(10, true)], { responseCharacters: 3000 })], { bootstrapSamples: 10 });
    const flat = toSimpleEvalsMetrics(metrics);
    expect(flat.overall_score).toBe(1);
    expect(flat.overall_score_length_adjusted).toBeCloseTo(1 - 0.0299 * 2, 12);
    expect(flat['overall_score_length_adjusted:n_samples']).toBe(1);
  });
});

describe('--failed-as-zero', () => {
  it('counts a failed judge call as "not met" and says how many were', () => {
    // a: 4 met, 4 failed → as zero: 4 / 8 = 0.5; by default a has no score and only b (1.0) counts.
    const items = [item('a', [criterion(4, true), criterion(4, null)]), item('b', [criterion(2, true)])];
    expect(aggregate(getScoring('compliance'), items).overall?.score).toBe(1);
    const metrics = aggregate(withFailedAsZero(getScoring('compliance')), items);
    expect(metrics.overall?.score).toBe(0.75);
    expect(metrics.failed_as_zero).toEqual({ items: 1, criteria: 1 });
    expect(failedAsNotMet(items[1])).toBeNull();
    // The item itself keeps no score: only the aggregate counts the failure.
    expect(withFailedAsZero(getScoring('compliance')).itemScore(items[0])).toBeNull();
  });
});
