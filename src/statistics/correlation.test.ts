import { describe, expect, it } from 'vitest';
import { averageRanks, kendallTauB, spearmanCorrelation } from './correlation.js';

describe('averageRanks', () => {
  it('gives ties the mean of the ranks they span', () => {
    expect(averageRanks([10, 20, 20, 30])).toEqual([1, 2.5, 2.5, 4]);
    expect(averageRanks([3, 1, 2])).toEqual([3, 1, 2]);
  });
});

describe('spearmanCorrelation', () => {
  it('is 1 and −1 for the same and the reversed order', () => {
    expect(spearmanCorrelation([1, 2, 3, 4], [10, 20, 30, 40])).toBeCloseTo(1, 14);
    expect(spearmanCorrelation([1, 2, 3, 4], [4, 3, 2, 1])).toBeCloseTo(-1, 14);
  });

  it('matches a hand-computed case with a tie', () => {
    // Ranks [1, 2.5, 2.5, 4] and [1, 3, 2, 4]: covariance 4.5, variances 4.5 and 5 → ρ = 4.5 ÷ √22.5 = √0.9.
    expect(spearmanCorrelation([1, 2, 2, 3], [1, 3, 2, 4])).toBeCloseTo(Math.sqrt(0.9), 14);
  });

  it('is null when undefined', () => {
    expect(spearmanCorrelation([1], [2])).toBeNull();
    expect(spearmanCorrelation([1, 1, 1], [1, 2, 3])).toBeNull();
    expect(() => spearmanCorrelation([1], [1, 2])).toThrow(RangeError);
  });
});

describe('kendallTauB', () => {
  it('counts concordant and discordant pairs', () => {
    // One discordant pair (positions 1 and 2) of six: (5 − 1) ÷ 6.
    expect(kendallTauB([1, 2, 3, 4], [1, 3, 2, 4])).toBeCloseTo(4 / 6, 14);
  });

  it('corrects for ties (τ-b)', () => {
    // Five concordant, none discordant, one pair tied in x only: 5 ÷ √(5 · 6).
    expect(kendallTauB([1, 2, 2, 3], [1, 3, 2, 4])).toBeCloseTo(5 / Math.sqrt(30), 14);
  });

  it('is null when undefined', () => {
    expect(kendallTauB([2, 2], [1, 3])).toBeNull();
    expect(kendallTauB([], [])).toBeNull();
  });
});
