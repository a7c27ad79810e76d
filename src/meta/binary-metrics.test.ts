import { describe, expect, it } from 'vitest';
import { krippendorffAlpha } from '../statistics/krippendorff.js';
import { RubricateError } from '../errors.js';
import { seededRandom } from '../util/random.js';
import { computeBinaryMeta, type BinaryMetaRecord } from './binary-metrics.js';

/** Records from (prediction, label) pairs written as 'TF' strings, repeated `count` times. */
function records(spec: ReadonlyArray<[string, number]>, groups?: BinaryMetaRecord['groups']): BinaryMetaRecord[] {
  return spec.flatMap(([pair, count]) =>
    Array.from({ length: count }, () => ({ prediction: pair[0] === 'T', label: pair[1] === 'T', ...(groups ? { groups } : {}) })),
  );
}

const quick = { resamples: 200 };

describe('computeBinaryMeta: hand-computed single-label case', () => {
  // TP 3, FP 1, FN 2, TN 4.
  const report = computeBinaryMeta(records([['TT', 3], ['TF', 1], ['FT', 2], ['FF', 4]]), quick);
  const overall = report.overall;

  it('counts the confusion table and accuracy', () => {
    expect(overall.confusion).toEqual({ truePositive: 3, falsePositive: 1, falseNegative: 2, trueNegative: 4 });
    expect(overall.records).toBe(10);
    expect(overall.pairs).toBe(10);
    expect(overall.accuracy).toBeCloseTo(0.7, 14);
  });

  it('computes per-class precision, recall and F1', () => {
    expect(overall.positive).toMatchObject({ predicted: 4, support: 5 });
    expect(overall.positive.precision).toBeCloseTo(0.75, 14);
    expect(overall.positive.recall).toBeCloseTo(0.6, 14);
    expect(overall.positive.f1).toBeCloseTo(2 / 3, 14);
    expect(overall.negative.precision).toBeCloseTo(4 / 6, 14);
    expect(overall.negative.recall).toBeCloseTo(0.8, 14);
    expect(overall.negative.f1).toBeCloseTo(8 / 11, 14);
  });

  it('computes balanced F1, macro F1 (equal here: both classes present) and κ', () => {
    expect(overall.balancedF1).toBeCloseTo(23 / 33, 14);
    expect(overall.macroF1).toBeCloseTo(23 / 33, 14);
    expect(overall.balancedPrecision).toBeCloseTo((0.75 + 4 / 6) / 2, 14);
    expect(overall.balancedRecall).toBeCloseTo((0.6 + 0.8) / 2, 14);
    // Observed 0.7, chance (4·5 + 6·5)/100 = 0.5.
    expect(overall.cohenKappa).toBeCloseTo(0.4, 14);
  });

  it('gives intervals that contain the point estimates', () => {
    for (const key of ['accuracy', 'balancedF1', 'macroF1', 'cohenKappa'] as const) {
      const interval = overall.intervals[key]!;
      expect(interval.lower).toBeLessThanOrEqual(overall[key]!);
      expect(interval.upper).toBeGreaterThanOrEqual(overall[key]!);
    }
  });
});

describe('computeBinaryMeta: several human labels per record (HealthBench physicians)', () => {
  it('pairs the prediction with each label', () => {
    const report = computeBinaryMeta(
      [
        { prediction: true, label: [true, true, false] },
        { prediction: false, label: [false, true] },
      ],
      quick,
    );
    const overall = report.overall;
    expect(overall.records).toBe(2);
    expect(overall.pairs).toBe(5);
    expect(overall.confusion).toEqual({ truePositive: 2, falsePositive: 1, falseNegative: 1, trueNegative: 1 });
    expect(overall.positive.f1).toBeCloseTo(2 / 3, 14);
    expect(overall.negative.f1).toBeCloseTo(0.5, 14);
    expect(overall.balancedF1).toBeCloseTo(7 / 12, 14);
    expect(report.agreement.recordsWithSeveralLabels).toBe(2);
  });
});

describe('computeBinaryMeta: empty classes and degenerate inputs', () => {
  it('leaves balanced F1 undefined when a class has no labels, while macro F1 scores it 0', () => {
    // All labels met; the judge says not met once. Negative recall has no denominator.
    const overall = computeBinaryMeta(records([['TT', 2], ['FT', 1]]), quick).overall;
    expect(overall.positive.precision).toBe(1);
    expect(overall.positive.recall).toBeCloseTo(2 / 3, 14);
    expect(overall.positive.f1).toBeCloseTo(0.8, 14);
    expect(overall.negative.precision).toBe(0);
    expect(overall.negative.recall).toBeNull();
    expect(overall.negative.f1).toBeNull();
    expect(overall.balancedF1).toBeNull();
    expect(overall.balancedRecall).toBeNull();
    expect(overall.macroF1).toBeCloseTo(0.4, 14);
    expect(overall.cohenKappa).toBe(0);
  });

  it('scores F1 as 0 when precision and recall are both 0', () => {
    const overall = computeBinaryMeta(records([['TF', 1], ['FT', 1]]), quick).overall;
    expect(overall.positive).toMatchObject({ precision: 0, recall: 0, f1: 0 });
    expect(overall.negative).toMatchObject({ precision: 0, recall: 0, f1: 0 });
    expect(overall.balancedF1).toBe(0);
    expect(overall.accuracy).toBe(0);
    expect(overall.cohenKappa).toBe(-1);
  });

  it('handles a single record', () => {
    const overall = computeBinaryMeta([{ prediction: true, label: true }], quick).overall;
    expect(overall.accuracy).toBe(1);
    expect(overall.positive.f1).toBe(1);
    expect(overall.balancedF1).toBeNull();
    expect(overall.macroF1).toBe(1);
    expect(overall.cohenKappa).toBeNull();
    expect(overall.intervals.accuracy).toMatchObject({ lower: 1, upper: 1 });
    expect(overall.intervals.cohenKappa).toBeNull();
  });

  it('handles no records', () => {
    const report = computeBinaryMeta([], quick);
    expect(report.overall).toMatchObject({ records: 0, pairs: 0, accuracy: null, balancedF1: null, macroF1: null, cohenKappa: null });
    expect(report.overall.intervals.accuracy).toBeNull();
    expect(report.biasIndex).toBeNull();
    expect(report.groups).toEqual({});
    expect(report.agreement.humanFleissKappa).toBeNull();
  });
});

describe('computeBinaryMeta: ProfBench bias index', () => {
  const data = [
    ...records([['TF', 1], ['TT', 1]], { source: 'o3' }), // mean error +1/2
    ...records([['FT', 1], ['FF', 1], ['TT', 1]], { source: 'r1-0528' }), // mean error −1/3
    ...records([['TT', 1]], { source: 'grok4' }), // mean error 0
  ];
  const bias = computeBinaryMeta(data, quick).biasIndex!;

  it('is max − min of the per-source mean of (prediction − label)', () => {
    expect(bias.sourceKey).toBe('source');
    expect(Object.keys(bias.bySource)).toEqual(['grok4', 'o3', 'r1-0528']);
    expect(bias.bySource.o3).toEqual({ pairs: 2, meanError: 0.5 });
    expect(bias.bySource['r1-0528'].meanError).toBeCloseTo(-1 / 3, 14);
    expect(bias.bySource.grok4.meanError).toBe(0);
    expect(bias.biasIndex).toBeCloseTo(5 / 6, 14);
  });

  it('subtracts it from overall macro F1', () => {
    // TP 3, FP 1, FN 1, TN 1 → F1 0.75 and 0.5.
    expect(bias.macroF1).toBeCloseTo(0.625, 14);
    expect(bias.mf1MinusBiasIndex).toBeCloseTo(0.625 - 5 / 6, 14);
  });

  it('reproduces ProfBench\u2019s printed, rounded percentages', () => {
    expect(bias.profBench).toEqual({
      macroF1: 62.5,
      bySource: { grok4: 0, o3: 50, 'r1-0528': -33.3 },
      biasIndex: 83.3,
      mf1MinusBiasIndex: -20.8,
    });
  });

  it('is zero with a single source and uses a custom source key', () => {
    const single = computeBinaryMeta(records([['TF', 1], ['TT', 1]], { model: 'only' }), { ...quick, sourceKey: 'model' }).biasIndex!;
    expect(single.sourceKey).toBe('model');
    expect(single.biasIndex).toBe(0);
    expect(computeBinaryMeta(records([['TT', 1]], { model: 'only' }), quick).biasIndex).toBeNull();
  });

  it('has bootstrap intervals', () => {
    expect(bias.intervals.biasIndex).not.toBeNull();
    expect(bias.intervals.biasIndex!.lower).toBeGreaterThanOrEqual(0);
  });
});

describe('computeBinaryMeta: groups, agreement, reproducibility', () => {
  const data: BinaryMetaRecord[] = [
    { prediction: true, label: true, groups: { criterion: 'c1', tag: ['theme:a', 'theme:b'] } },
    { prediction: false, label: true, groups: { criterion: 'c1', tag: 'theme:a' } },
    { prediction: false, label: false, groups: { criterion: 'c2' } },
  ];

  it('breaks down by every group key, with multi-valued groups counting in each', () => {
    const report = computeBinaryMeta(data, quick);
    expect(Object.keys(report.groups)).toEqual(['criterion', 'tag']);
    expect(report.groups.criterion.c1).toMatchObject({ records: 2, accuracy: 0.5 });
    expect(report.groups.criterion.c2).toMatchObject({ records: 1, accuracy: 1 });
    expect(report.groups.tag['theme:a']).toMatchObject({ records: 2, accuracy: 0.5 });
    expect(report.groups.tag['theme:b']).toMatchObject({ records: 1, accuracy: 1 });
    expect(report.groups.criterion.c1.intervals.accuracy).not.toBeNull();
  });

  it('limits breakdowns to groupBy and can skip group intervals', () => {
    const report = computeBinaryMeta(data, { ...quick, groupBy: ['criterion'], groupIntervals: false });
    expect(Object.keys(report.groups)).toEqual(['criterion']);
    expect(report.groups.criterion.c1.intervals.accuracy).toBeNull();
  });

  it('reports Fleiss κ among human labels and among jurors', () => {
    const report = computeBinaryMeta(
      [
        { prediction: true, label: [true, true, true], juryVotes: [true, true, false] },
        { prediction: true, label: [true, true, false], juryVotes: [true, true, true] },
        { prediction: false, label: [false, false, false], juryVotes: [false, false, false] },
        { prediction: false, label: false },
      ],
      quick,
    );
    // Human labels: same table as the hand-computed Fleiss case → 22/40.
    expect(report.agreement.humanFleissKappa).toBeCloseTo(22 / 40, 14);
    expect(report.agreement.recordsWithSeveralLabels).toBe(3);
    // Pairs: TP 5, FP 1, FN 0, TN 4 → MCC = (5·4 − 1·0) ÷ √(6·5·5·4).
    expect(report.agreement.matthews).toBeCloseTo(20 / Math.sqrt(600), 14);
    expect(report.agreement.krippendorffAlpha.humans).toBe(krippendorffAlpha([[true, true, true], [true, true, false], [false, false, false], [false]], 'nominal'));
    expect(report.agreement.krippendorffAlpha.humansAndJudge).toBe(krippendorffAlpha([[true, true, true, true], [true, true, false, true], [false, false, false, false], [false, false]], 'nominal'));
    expect(report.agreement.juryFleissKappa).toBeCloseTo(22 / 40, 14);
    expect(report.agreement.recordsWithJury).toBe(3);
  });

  it('is deterministic for a seed, different for another, and JSON-safe', () => {
    const many = Array.from({ length: 60 }, (_, index) => ({ prediction: index % 3 !== 0, label: index % 4 !== 0, groups: { source: `s${index % 3}` } }));
    const first = computeBinaryMeta(many, { seed: 11 });
    expect(computeBinaryMeta(many, { seed: 11 })).toEqual(first);
    expect(computeBinaryMeta(many, { seed: 12 }).overall.intervals).not.toEqual(first.overall.intervals);
    expect(JSON.parse(JSON.stringify(first))).toEqual(first);
    expect(first.bootstrap).toEqual({ resamples: 1000, seed: 11, confidence: 0.95, unit: 'record' });
  });
});

describe('computeBinaryMeta: HealthBench reference semantics', () => {
  /**
   * Re-derivation of HealthBench's meta-eval bookkeeping in the test: for every
   * (grader, physician) pair, append "agree" to the precision list of the grader's class and
   * to the recall list of the physician's class; each list's mean is the metric.
   */
  function healthBenchReference(rows: ReadonlyArray<{ prediction: boolean; labels: boolean[] }>) {
    const lists: Record<string, boolean[]> = {};
    const push = (key: string, value: boolean) => (lists[key] ??= []).push(value);
    for (const row of rows) {
      for (const label of row.labels) {
        push(`precision_${row.prediction ? 'pos' : 'neg'}`, row.prediction === label);
        push(`recall_${label ? 'pos' : 'neg'}`, row.prediction === label);
      }
    }
    const value = (key: string) => (lists[key]?.length ? lists[key].filter(Boolean).length / lists[key].length : null);
    const f1 = (precision: number | null, recall: number | null) =>
      precision === null || recall === null ? null : precision === 0 && recall === 0 ? 0 : (2 * (precision * recall)) / (precision + recall);
    const f1Positive = f1(value('precision_pos'), value('recall_pos'));
    const f1Negative = f1(value('precision_neg'), value('recall_neg'));
    return f1Positive === null || f1Negative === null ? null : (f1Positive + f1Negative) / 2;
  }

  it('matches the reference bookkeeping on random multi-physician data, overall and per cluster', () => {
    const random = seededRandom(42);
    const rows = Array.from({ length: 300 }, (_, index) => ({
      prediction: random() < 0.6,
      labels: Array.from({ length: 1 + Math.floor(random() * 4) }, () => random() < 0.55),
      cluster: `cluster-${index % 4}`,
    }));
    const report = computeBinaryMeta(
      rows.map((row) => ({ prediction: row.prediction, label: row.labels, groups: { category: row.cluster } })),
      { resamples: 0 },
    );
    expect(report.overall.balancedF1).toBe(healthBenchReference(rows));
    for (const cluster of ['cluster-0', 'cluster-1', 'cluster-2', 'cluster-3']) {
      expect(report.groups.category[cluster].balancedF1).toBe(healthBenchReference(rows.filter((row) => row.cluster === cluster)));
    }
  });
});

describe('computeBinaryMeta: input validation', () => {
  it.each([
    [[{ prediction: 'yes', label: true }], 'records[0].prediction'],
    [[{ prediction: true, label: [] }], 'records[0].label'],
    [[{ prediction: true, label: true }, { prediction: true, label: [true, 1] }], 'records[1].label'],
    [[{ prediction: true, label: true, juryVotes: [1] }], 'records[0].juryVotes'],
    [[{ prediction: true, label: true, groups: { source: 3 } }], 'records[0].groups.source'],
  ])('rejects %j naming %s', (input, field) => {
    try {
      computeBinaryMeta(input as unknown as BinaryMetaRecord[]);
      expect.unreachable('should have thrown');
    } catch (error) {
      expect(error).toBeInstanceOf(RubricateError);
      expect((error as RubricateError).code).toBe('INPUT_INVALID');
      expect((error as RubricateError).details.field).toBe(field);
    }
  });
});
