/**
 * The human ceiling on a hand-made multi-rater fixture, worked out by hand the way HealthBench's
 * meta-evaluation computes its physician baseline (each rater as the "judge" against every other
 * rater's label of the same record; precision from the rater's side, recall from the other's).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { computeBinaryMeta, humanBaseline, type BinaryMetaRecord } from './binary-metrics.js';
import { formatMetaTable } from './format-table.js';
import { metaFromResults } from './results-meta.js';

const records: BinaryMetaRecord[] = [
  { prediction: true, label: [true, true, false], raters: ['a', 'b', 'c'] },
  { prediction: false, label: [false, false], raters: ['a', 'b'] },
  { prediction: true, label: [true, false], raters: ['b', 'c'] },
  // One label: no pair, no part in the baseline.
  { prediction: true, label: [true], raters: ['a'] },
];

describe('humanBaseline', () => {
  it('pools every ordered pair of raters of the same record', () => {
    // Pairs: TP 2, FP 3, FN 3, TN 2. Both classes: precision = recall = 0.4.
    const baseline = humanBaseline(records)!;
    expect(baseline.pairs).toBe(10);
    expect(baseline.records).toBe(3);
    expect(baseline.balancedF1).toBeCloseTo(0.4, 15);
    expect(baseline.accuracy).toBeCloseTo(0.4, 15);
    // p_o 0.4, p_e 0.5.
    expect(baseline.cohenKappa).toBeCloseTo(-0.2, 15);
  });

  it('gives each rater HealthBench\u2019s per-physician figures, undefined where a class is never used', () => {
    const { byRater } = humanBaseline(records)!;
    // a: TP 1, FP 1, TN 1 → F1 2/3 for both classes. b: TP 1, FP 2, TN 1 → 1/2. c: FN 3 only → no positive precision.
    expect(byRater!.raters.a).toMatchObject({ pairs: 3 });
    expect(byRater!.raters.a.balancedF1).toBeCloseTo(2 / 3, 15);
    expect(byRater!.raters.b.balancedF1).toBeCloseTo(0.5, 15);
    expect(byRater!.raters.c).toMatchObject({ balancedF1: null, accuracy: 0, pairs: 3 });
    expect(byRater!.meanBalancedF1).toBeCloseTo(7 / 12, 15);
    expect(byRater!.meanAccuracy).toBeCloseTo(7 / 18, 15);
  });

  it('pools without per-rater figures when raters are not named, and is absent without two labels on any record', () => {
    const unnamed = records.map(({ raters: _raters, ...record }) => record);
    expect(humanBaseline(unnamed)).toMatchObject({ pairs: 10, byRater: null });
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
    expect(report.humanBaseline?.balancedF1).toBeCloseTo(0.4, 15);
    const table = formatMetaTable(report);
    expect(table).toContain('Judge beside the human baseline');
    expect(table).toMatch(/balanced F1 \(HealthBench\) +\d\.\d{4} +0\.4000 +0\.5833/);
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
