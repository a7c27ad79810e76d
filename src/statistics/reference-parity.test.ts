/**
 * Each statistic against reference values computed by its published formula in Python's
 * standard library (`fixtures/reference.py`, by another route than ours where one exists:
 * Krippendorff's α from value pairs, Matthews' from one-hot covariances, τ-b by counting every
 * pair), to 1e-9. Krippendorff's own worked example is also checked against his printed α.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cohenKappa, weightedCohenKappa } from './agreement.js';
import { correlationsWithIntervals, kendallTauB, matthewsCorrelation, spearmanCorrelation } from './correlation.js';
import { krippendorffAlpha } from './krippendorff.js';
import { benjaminiHochbergAdjust, holmAdjust } from './multiple-testing.js';
import { minimumPairedSampleSize, pairedDelta } from './paired.js';
import { meanAbsoluteError, rootMeanSquaredError } from './prediction-error.js';

type Rating = number | boolean | string | null;
const reference = JSON.parse(readFileSync(new URL('./fixtures/reference.json', import.meta.url), 'utf8')) as {
  krippendorff: Array<{ units: Rating[][]; nominal: number | null; interval: number | null }>;
  matthews: Array<{ truth: Rating[]; predicted: Rating[]; mcc: number | null }>;
  correlations: Array<{ first: number[]; second: number[]; spearman: number | null; kendallTauB: number | null }>;
  paired: Array<{ first: number[]; second: number[]; confidence: number; delta: number; stdDifference: number; standardError: number; interval: [number, number]; z: number; pValue: number }>;
  sampleSize: Array<{ effect: number; stdDifference: number; alpha: number; power: number; exact: number; n: number }>;
  multipleTesting: Array<{ p: number[]; holm: number[]; benjaminiHochberg: number[] }>;
  krippendorffOrdinal: Array<{ units: Array<Array<number | null>>; ordinal: number | null }>;
  scored: Array<{
    truth: number[];
    predicted: number[];
    confidence: number;
    pearson: number;
    pearsonInterval: [number, number];
    spearman: number;
    spearmanInterval: [number, number];
    kendall: number;
    kendallInterval: [number, number];
    rmse: number;
    mae: number;
  }>;
  kappas: Array<{ first: number[]; second: number[]; scale: number[]; unweighted: number; quadratic: number; linear: number; quadraticOnScale: number }>;
};

const tolerance = 1e-9;
function close(actual: number | null, expected: number | null): void {
  if (expected === null) return void expect(actual).toBeNull();
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - expected)).toBeLessThan(tolerance);
}

describe("Krippendorff's α", () => {
  it('reproduces the worked example of Krippendorff (2011): 0.743 nominal, 0.849 interval', () => {
    const { units } = reference.krippendorff[0];
    expect(krippendorffAlpha(units as Array<Array<number | null>>, 'nominal')!.toFixed(3)).toBe('0.743');
    expect(krippendorffAlpha(units as Array<Array<number | null>>, 'interval')!.toFixed(3)).toBe('0.849');
  });

  it.each(reference.krippendorff.map((entry, index) => [index, entry] as const))('fixture %i matches the reference to 1e-9', (_index, entry) => {
    const units = entry.units as Array<Array<number | boolean | null>>;
    close(krippendorffAlpha(units, 'nominal'), entry.nominal);
    close(krippendorffAlpha(units, 'interval'), entry.interval);
  });

  it('is undefined without two pairable ratings or without any variation, and refuses words on an interval scale', () => {
    expect(krippendorffAlpha([[1], [2, null]], 'nominal')).toBeNull();
    expect(krippendorffAlpha([[1, 1], [1, 1, 1]], 'interval')).toBeNull();
    expect(() => krippendorffAlpha([['a', 'b']], 'interval')).toThrow(RangeError);
  });
});

describe("Krippendorff's α, ordinal", () => {
  it('reproduces the ordinal α of Krippendorff (2011): 0.815', () => {
    expect(krippendorffAlpha(reference.krippendorffOrdinal[0].units, 'ordinal')!.toFixed(3)).toBe('0.815');
  });

  it.each(reference.krippendorffOrdinal.map((entry, index) => [index, entry] as const))('fixture %i matches the reference to 1e-9 (missing ratings, binarised labels)', (_index, entry) => {
    close(krippendorffAlpha(entry.units, 'ordinal'), entry.ordinal);
  });

  it('ignores values no pairable unit holds, and refuses words', () => {
    const units = [[0, 1], [1, 1], [3, 3], [0, 0], [9, null]];
    expect(krippendorffAlpha(units, 'ordinal')).toBe(krippendorffAlpha(units.slice(0, 4), 'ordinal'));
    expect(() => krippendorffAlpha([['low', 'high']], 'ordinal')).toThrow(RangeError);
  });
});

describe('correlations with Fisher-z intervals, RMSE and MAE', () => {
  it.each(reference.scored.map((entry, index) => [index, entry] as const))('case %i matches the reference to 1e-9', (_index, entry) => {
    const estimates = correlationsWithIntervals(entry.truth, entry.predicted, entry.confidence);
    for (const kind of ['pearson', 'spearman', 'kendall'] as const) {
      close(estimates[kind].value, entry[kind]);
      const interval = entry[`${kind}Interval`];
      close(estimates[kind].interval![0], interval[0]);
      close(estimates[kind].interval![1], interval[1]);
      expect(estimates[kind].n).toBe(entry.truth.length);
    }
    close(rootMeanSquaredError(entry.truth, entry.predicted), entry.rmse);
    close(meanAbsoluteError(entry.truth, entry.predicted), entry.mae);
  });

  it('has no interval for too few pairs or an undefined coefficient, and a point at ±1', () => {
    expect(correlationsWithIntervals([1, 2, 3], [1, 2, 3]).pearson).toEqual({ value: 1, interval: null, n: 3 });
    expect(correlationsWithIntervals([1, 2, 3, 4, 5], [2, 4, 6, 8, 10]).kendall.interval).toEqual([1, 1]);
    expect(correlationsWithIntervals([1, 1, 1, 1, 1], [1, 2, 3, 4, 5]).spearman.interval).toBeNull();
    expect(rootMeanSquaredError([], [])).toBeNull();
  });
});

describe("Cohen's κ, unweighted and weighted", () => {
  it.each(reference.kappas.map((entry, index) => [index, entry] as const))('case %i matches the reference to 1e-9', (_index, entry) => {
    close(cohenKappa(entry.first, entry.second), entry.unweighted);
    close(weightedCohenKappa(entry.first, entry.second, 'quadratic'), entry.quadratic);
    close(weightedCohenKappa(entry.first, entry.second, 'linear'), entry.linear);
    close(weightedCohenKappa(entry.first, entry.second, 'quadratic', entry.scale), entry.quadraticOnScale);
  });

  it('weighs by position on the scale (unused categories count), and refuses a label off the scale', () => {
    // 3 is on the scale but unused: it widens the distance between 2 and 4.
    const first = [1, 2, 4, 1, 4];
    const second = [1, 4, 4, 2, 2];
    expect(weightedCohenKappa(first, second, 'quadratic', [1, 2, 3, 4])).not.toBe(weightedCohenKappa(first, second, 'quadratic'));
    expect(() => weightedCohenKappa([1, 5], [1, 2], 'quadratic', [1, 2, 3])).toThrow(RangeError);
    expect(weightedCohenKappa([2, 2], [2, 2], 'quadratic')).toBeNull();
  });
});

describe("Matthews' correlation", () => {
  it.each(reference.matthews.map((entry, index) => [index, entry] as const))('labeling %i matches the reference to 1e-9', (_index, entry) => {
    close(matthewsCorrelation(entry.truth as Array<string | number | boolean>, entry.predicted as Array<string | number | boolean>), entry.mcc);
  });

  it('is ±1 for perfect and inverted binary labelings, and undefined for a constant one', () => {
    expect(matthewsCorrelation([true, false, true], [true, false, true])).toBe(1);
    expect(matthewsCorrelation([true, false], [false, true])).toBe(-1);
    expect(matthewsCorrelation([true, true], [true, false])).toBeNull();
  });
});

describe('Spearman and Kendall', () => {
  it.each(reference.correlations.map((entry, index) => [index, entry] as const))('vectors %i match the reference to 1e-9 (ties included)', (_index, entry) => {
    close(spearmanCorrelation(entry.first, entry.second), entry.spearman);
    close(kendallTauB(entry.first, entry.second), entry.kendallTauB);
  });

  it('are undefined for a constant vector; τ-b counts concordant minus discordant pairs', () => {
    expect(spearmanCorrelation([1, 1, 1], [1, 2, 3])).toBeNull();
    expect(kendallTauB([1, 2, 3], [4, 4, 4])).toBeNull();
    expect(kendallTauB([1, 2, 3], [1, 3, 2])).toBeCloseTo(1 / 3, 15);
  });
});

describe('paired delta and sample size (normal approximation)', () => {
  it.each(reference.paired.map((entry, index) => [index, entry] as const))('case %i matches the reference to 1e-9', (_index, entry) => {
    const result = pairedDelta(entry.first, entry.second, entry.confidence);
    expect(result.n).toBe(entry.first.length);
    close(result.delta, entry.delta);
    close(result.stdDifference, entry.stdDifference);
    close(result.standardError, entry.standardError);
    close(result.interval![0], entry.interval[0]);
    close(result.interval![1], entry.interval[1]);
    close(result.z, entry.z);
    close(result.pValue, entry.pValue);
  });

  it.each(reference.sampleSize.map((entry, index) => [index, entry] as const))('sample size %i matches the reference to 1e-9', (_index, entry) => {
    const result = minimumPairedSampleSize(entry);
    close(result!.exact, entry.exact);
    expect(result!.n).toBe(entry.n);
  });

  it('says nothing it cannot: one pair has no spread, a zero effect needs no sample size', () => {
    expect(pairedDelta([1], [0])).toMatchObject({ n: 1, delta: 1, standardError: null, pValue: null });
    expect(pairedDelta([1, 1], [0, 0])).toMatchObject({ delta: 1, standardError: 0, z: null });
    expect(minimumPairedSampleSize({ effect: 0, stdDifference: 1 })).toBeNull();
  });
});

describe('Holm and Benjamini–Hochberg', () => {
  it.each(reference.multipleTesting.map((entry, index) => [index, entry] as const))('set %i matches the reference to 1e-9', (_index, entry) => {
    holmAdjust(entry.p).forEach((value, index) => close(value, entry.holm[index]));
    benjaminiHochbergAdjust(entry.p).forEach((value, index) => close(value, entry.benjaminiHochberg[index]));
  });

  it('refuses a value that is not a probability', () => {
    expect(() => holmAdjust([0.1, 1.2])).toThrow(RangeError);
  });
});
