/**
 * The human ceiling on a hand-made multi-rater fixture, worked out by hand the way HealthBench's
 * meta-evaluation computes its physician baseline (each rater as the "judge" against every other
 * rater's label of the same record; precision from the rater's side, recall from the other's).
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { computeBinaryMeta, humanBaseline, type BinaryMetaRecord } from './binary-metrics.js';
import { formatMetaTable } from './format-table.js';
import { metaFromResults } from './results-meta.js';

interface FixtureFigures {
  balancedF1: number;
  cohenKappa: number;
  accuracy: number;
  pairs: number;
  weight: number;
}

interface HealthBenchFixture {
  records: { category: string; prediction: boolean; labels: [string, boolean][] }[];
  expected: FixtureFigures & { twoStepBalancedF1: number; pooled: Omit<FixtureFigures, 'weight'>; judge: FixtureFigures; judgePooled: Omit<FixtureFigures, 'weight'>; byRater: Record<string, FixtureFigures>; byCategory: Record<string, FixtureFigures> };
}

const records: BinaryMetaRecord[] = [
  { prediction: true, label: [true, true, false], raters: ['a', 'b', 'c'] },
  { prediction: false, label: [false, false], raters: ['a', 'b'] },
  { prediction: true, label: [true, false], raters: ['b', 'c'] },
  // One label: no pair, no part in the baseline.
  { prediction: true, label: [true], raters: ['a'] },
];

describe('humanBaseline', () => {
  it('weights each (rater, category) cell’s balanced F1 by HealthBench’s count, not pooling the pairs', () => {
    // One category. a: TP 1, FP 1, TN 1 → balanced F1 2/3, n 3 + 1 = 4. b: TP 1, FP 2, TN 1 → 1/2, n 6.
    // c: FN 3 only → undefined (never said met), left out. (4·2/3 + 6·1/2) / 10 = 17/30.
    const baseline = humanBaseline(records)!;
    expect(baseline).toMatchObject({ aggregation: 'healthbench', categoryKey: 'category', pairs: 10, records: 3, weight: 10, cells: { defined: 2, total: 3 } });
    expect(baseline.balancedF1).toBeCloseTo(17 / 30, 15);
    expect(baseline.accuracy).toBeCloseTo(0.4, 15);
    // κ per cell: a 0.4, b 0.2, c 0 (p_o = p_e = 0), weighted by pairs 3, 4, 3.
    expect(baseline.cohenKappa).toBeCloseTo(0.2, 15);
    // The naive figure: every ordered pair in one table, TP 2, FP 3, FN 3, TN 2.
    expect(baseline.pooled).toEqual({ balancedF1: expect.closeTo(0.4, 15), accuracy: expect.closeTo(0.4, 15), cohenKappa: expect.closeTo(-0.2, 15), pairs: 10 });
    // One category: the judge's weighted figure is its pooled one.
    expect(baseline.judge.balancedF1).toBeCloseTo(computeBinaryMeta(records, { resamples: 0 }).overall.balancedF1!, 15);
  });

  it('gives each rater HealthBench’s per-physician figures, undefined where a class is never used', () => {
    const { byRater } = humanBaseline(records)!;
    expect(byRater!.raters.a).toMatchObject({ pairs: 3, weight: 4 });
    expect(byRater!.raters.a.balancedF1).toBeCloseTo(2 / 3, 15);
    expect(byRater!.raters.b.balancedF1).toBeCloseTo(0.5, 15);
    expect(byRater!.raters.c).toMatchObject({ balancedF1: null, accuracy: 0, pairs: 3, weight: 0 });
    expect(byRater!.meanBalancedF1).toBeCloseTo(7 / 12, 15);
    expect(byRater!.meanAccuracy).toBeCloseTo(7 / 18, 15);
  });

  it('matches the published formula on a four-rater, two-category fixture where it differs from pooling', () => {
    // Expected figures come from fixtures/healthbench_baseline.py (standard library, written from the formula).
    const fixture = JSON.parse(readFileSync(new URL('./fixtures/healthbench-baseline.json', import.meta.url), 'utf8')) as HealthBenchFixture;
    const multi: BinaryMetaRecord[] = fixture.records.map((record) => ({
      prediction: record.prediction,
      label: record.labels.map(([, label]) => label),
      raters: record.labels.map(([rater]) => rater),
      groups: { category: record.category },
    }));
    const baseline = humanBaseline(multi)!;
    const expected = fixture.expected;
    expect(Math.abs(expected.balancedF1 - expected.pooled.balancedF1)).toBeGreaterThan(1e-3);
    for (const key of ['balancedF1', 'cohenKappa', 'accuracy'] as const) {
      expect(baseline[key]).toBeCloseTo(expected[key], 9);
      expect(baseline.pooled[key]).toBeCloseTo(expected.pooled[key], 9);
    }
    expect(baseline.balancedF1).toBeCloseTo(expected.twoStepBalancedF1, 9);
    expect(baseline).toMatchObject({ pairs: expected.pairs, weight: expected.weight });
    for (const [rater, figures] of Object.entries(expected.byRater)) {
      expect(baseline.byRater!.raters[rater]).toMatchObject({ pairs: figures.pairs, weight: figures.weight });
      for (const key of ['balancedF1', 'cohenKappa', 'accuracy'] as const) expect(baseline.byRater!.raters[rater][key]).toBeCloseTo(figures[key], 9);
    }
    // The judge the same way (the notebook's model score), beside its pooled figure (HealthBench's pairwise_model_f1_balanced).
    for (const key of ['balancedF1', 'cohenKappa', 'accuracy'] as const) expect(baseline.judge[key]).toBeCloseTo(expected.judge[key], 9);
    expect(baseline.judge).toMatchObject({ pairs: expected.judge.pairs, weight: expected.judge.weight });
    const report = computeBinaryMeta(multi, { resamples: 0 });
    expect(report.overall.balancedF1).toBeCloseTo(expected.judgePooled.balancedF1, 9);
    expect(Math.abs(expected.judge.balancedF1 - expected.judgePooled.balancedF1)).toBeGreaterThan(1e-3);
    for (const [category, figures] of Object.entries(expected.byCategory)) {
      expect(report.humanBaselineGroups.category[category].balancedF1).toBeCloseTo(figures.balancedF1, 9);
      expect(report.humanBaselineGroups.category[category].cohenKappa).toBeCloseTo(figures.cohenKappa, 9);
    }
    // With another category key every record shares one category, and the figure changes.
    expect(humanBaseline(multi, 'theme')!.balancedF1).not.toBeCloseTo(expected.balancedF1, 6);
  });

  it('pools without per-rater figures when raters are not named, and is absent without two labels on any record', () => {
    const unnamed = records.map(({ raters: _raters, ...record }) => record);
    expect(humanBaseline(unnamed)).toMatchObject({ pairs: 10, byRater: null, aggregation: 'unnamed-raters' });
    // All unnamed labels are one rater: the only cell is the pooled table.
    expect(humanBaseline(unnamed)!.balancedF1).toBeCloseTo(0.4, 15);
    expect(humanBaseline([{ prediction: true, label: true }])).toBeNull();
    expect(() => computeBinaryMeta([{ prediction: true, label: [true, false], raters: ['a'] }])).toThrow(/one string per label/);
  });

  it('is also given per group value, as HealthBench gives its physicians per category', () => {
    const grouped = records.map((record, index) => ({ ...record, groups: { category: index === 1 ? 'calm' : 'urgent' } }));
    const report = computeBinaryMeta(grouped, { resamples: 0 });
    // urgent: records 0, 2 and 3 (one label: no pair): TP 2, FP 3, FN 3, TN 0. calm: record 1, TN 2.
    expect(report.humanBaselineGroups.category.urgent).toMatchObject({ pairs: 8, records: 2 });
    expect(report.humanBaselineGroups.category.urgent.accuracy).toBeCloseTo(2 / 8, 15);
    expect(report.humanBaselineGroups.category.calm).toMatchObject({ pairs: 2, accuracy: 1, balancedF1: null });
    expect(computeBinaryMeta([{ prediction: true, label: true, groups: { category: 'a' } }], { resamples: 0 }).humanBaselineGroups).toEqual({});
  });

  it('is in the binary report and in the table meta prints, beside the judge', () => {
    const report = computeBinaryMeta(records, { resamples: 0 });
    expect(report.humanBaseline?.balancedF1).toBeCloseTo(17 / 30, 15);
    const table = formatMetaTable(report);
    expect(table).toContain("Judge beside the human baseline (each rater against the other raters of the same 3 records; HealthBench's weighted average of raters over (rater, category) cells)");
    expect(table).toMatch(/balanced F1 \(HealthBench\) +(\d\.\d{4}) +\1 +0\.5667 +0\.4000 +0\.5833/);
  });
});

describe('humanBaseline from a labels file', () => {
  test('names each rater from the reviewer of a one-label line, and pools the rest', async ({ tempDir }) => {
    const results = path.join(tempDir, 'results.jsonl');
    const labels = path.join(tempDir, 'labels.jsonl');
    const criterion = (id: string, met: boolean) => ({ id, text: id, points: 1, tags: [], kind: 'principle', source: 'judge', status: 'ok', met });
    await writeFile(results, ['r1', 'r2', 'r3'].map((id) => JSON.stringify({ id, status: 'ok', score: 1, criteria: [criterion('c', true)], rubricate_version: 't' })).join('\n'));
    // The fixture above, one line per rater and record.
    const lines = [
      ['r1', 'a', true],
      ['r1', 'b', true],
      ['r1', 'c', false],
      ['r2', 'a', false],
      ['r2', 'b', false],
      ['r3', 'b', true],
      ['r3', 'c', false],
    ].map(([id, reviewer, label]) => JSON.stringify({ id, criterion_id: 'c', label, reviewer }));
    await writeFile(labels, lines.join('\n'));
    const report = await metaFromResults(results, labels, { resamples: 0 });
    expect(report.humanBaseline).toMatchObject({ pairs: 10, records: 3 });
    expect(report.humanBaseline!.byRater!.meanBalancedF1).toBeCloseTo(7 / 12, 15);
    // A list of labels on one line names no one per label: pooled figures only.
    await writeFile(labels, [JSON.stringify({ id: 'r1', labels: { c: [true, true, false] }, reviewer: 'panel' })].join('\n'));
    const pooled = await metaFromResults(results, labels, { resamples: 0 });
    expect(pooled.humanBaseline).toMatchObject({ pairs: 6, byRater: null });
  });
});
