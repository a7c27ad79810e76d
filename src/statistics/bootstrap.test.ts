import { describe, expect, it } from 'vitest';
import { bootstrap, bootstrapIntervals, deriveSeed, resolveBootstrapOptions } from './bootstrap.js';
import { mean } from './descriptive.js';

/** Mean of 0/1 outcomes over the drawn units. */
function meanOf(values: readonly number[]) {
  return (sample: Int32Array) => {
    let total = 0;
    for (const index of sample) total += values[index];
    return { mean: total / sample.length };
  };
}

const halfOnes = Array.from({ length: 100 }, (_, index) => (index % 2 === 0 ? 1 : 0));

describe('bootstrapIntervals', () => {
  it('is reproducible for a seed and changes with the seed', () => {
    // Spread-out values, so different resamples give different quantiles.
    const values = Array.from({ length: 50 }, (_, index) => Math.sin(index) + index / 7);
    const first = bootstrapIntervals(50, ['mean'], meanOf(values), { seed: 7 });
    const again = bootstrapIntervals(50, ['mean'], meanOf(values), { seed: 7 });
    const other = bootstrapIntervals(50, ['mean'], meanOf(values), { seed: 8 });
    expect(again).toEqual(first);
    expect(other.mean).not.toEqual(first.mean);
  });

  it('uses 1000 resamples at 95% by default and brackets the point estimate', () => {
    const { mean } = bootstrapIntervals(100, ['mean'], meanOf(halfOnes));
    expect(mean).not.toBeNull();
    expect(mean!.resamples).toBe(1000);
    expect(mean!.confidence).toBe(0.95);
    expect(mean!.lower).toBeLessThan(0.5);
    expect(mean!.upper).toBeGreaterThan(0.5);
    // Binomial standard error is 0.05, so a 95% interval is about ±0.1 wide.
    expect(mean!.upper - mean!.lower).toBeGreaterThan(0.12);
    expect(mean!.upper - mean!.lower).toBeLessThan(0.28);
  });

  it('gives a zero-width interval for a single unit or constant data', () => {
    expect(bootstrapIntervals(1, ['mean'], meanOf([0.75]), { resamples: 50 }).mean).toEqual({ lower: 0.75, upper: 0.75, confidence: 0.95, resamples: 50 });
    const constant = bootstrapIntervals(5, ['mean'], meanOf([1, 1, 1, 1, 1]), { resamples: 50 }).mean!;
    expect([constant.lower, constant.upper]).toEqual([1, 1]);
  });

  it('is null with no units, with zero resamples, or when the statistic is never defined', () => {
    expect(bootstrapIntervals(0, ['mean'], meanOf([])).mean).toBeNull();
    expect(bootstrapIntervals(10, ['mean'], meanOf(halfOnes), { resamples: 0 }).mean).toBeNull();
    expect(bootstrapIntervals(10, ['never'], () => ({ never: null })).never).toBeNull();
  });

  it('counts only the resamples where the statistic was defined', () => {
    // Defined only when unit 0 is drawn at least once.
    const result = bootstrapIntervals(
      3,
      ['whenZeroDrawn'],
      (sample) => ({ whenZeroDrawn: sample.includes(0) ? 1 : null }),
      { resamples: 400, seed: 3 },
    ).whenZeroDrawn!;
    // P(unit 0 drawn in 3 draws) = 1 − (2/3)³ ≈ 0.70.
    expect(result.resamples).toBeGreaterThan(230);
    expect(result.resamples).toBeLessThan(330);
    expect([result.lower, result.upper]).toEqual([1, 1]);
  });

  it('validates its options', () => {
    expect(() => resolveBootstrapOptions({ resamples: -1 })).toThrow(RangeError);
    expect(() => resolveBootstrapOptions({ confidence: 1 })).toThrow(RangeError);
    expect(resolveBootstrapOptions({})).toEqual({ resamples: 1000, seed: 0, confidence: 0.95 });
  });
});

describe('deriveSeed', () => {
  it('depends on the base seed and the name only', () => {
    expect(deriveSeed(1, 'source=o3')).toBe(deriveSeed(1, 'source=o3'));
    expect(deriveSeed(1, 'source=o3')).not.toBe(deriveSeed(2, 'source=o3'));
    expect(deriveSeed(1, 'source=o3')).not.toBe(deriveSeed(1, 'source=r1'));
  });
});

describe('bootstrap', () => {
  it('is seeded and estimates the standard error of the mean', () => {
    const values = Array.from({ length: 400 }, (_, index) => (index % 4 === 0 ? 1 : 0));
    const first = bootstrap(values, (sample) => sample.reduce((sum, value) => sum + value, 0) / sample.length);
    const second = bootstrap(values, (sample) => sample.reduce((sum, value) => sum + value, 0) / sample.length);
    expect(first).toEqual(second);
    const analytic = Math.sqrt((0.25 * 0.75) / 400);
    expect(first.std).toBeGreaterThan(analytic * 0.85);
    expect(first.std).toBeLessThan(analytic * 1.15);
    expect(first.ci95[0]).toBeLessThan(0.25);
    expect(first.ci95[1]).toBeGreaterThan(0.25);
  });
  it('gives no interval without values or resamples', () => {
    expect(bootstrap([], mean)).toEqual({ std: 0, ci95: [Number.NaN, Number.NaN] });
    expect(bootstrap([1, 2], mean, 0)).toEqual({ std: 0, ci95: [Number.NaN, Number.NaN] });
  });
});
