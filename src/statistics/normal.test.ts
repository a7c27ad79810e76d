import { describe, expect, it } from 'vitest';
import { erfc, normalCdf, normalQuantile, twoSidedNormalP } from './normal.js';

// Values of Python's math.erfc and statistics.NormalDist (AS241), printed with repr().
describe('the standard normal', () => {
  it('erfc matches math.erfc in relative terms, into the far tail', () => {
    const cases: Array<[number, number]> = [
      [-3, 1.9999779095030015],
      [-1, 1.842700792949715],
      [0.5, 0.4795001221869535],
      [1.96, 0.005573724535172132],
      [3, 2.2090496998585438e-5],
      [6, 2.1519736712498916e-17],
      [10, 2.088487583762545e-45],
    ];
    for (const [x, expected] of cases) expect(Math.abs(erfc(x) - expected) / expected).toBeLessThan(1e-13);
  });

  it('the CDF and quantile match NormalDist to 1e-12 and invert each other', () => {
    expect(Math.abs(normalCdf(1.96) - 0.9750021048517796)).toBeLessThan(1e-12);
    expect(Math.abs(normalQuantile(0.975) - 1.9599639845400536)).toBeLessThan(1e-12);
    expect(Math.abs(normalQuantile(0.001) + 3.090232306167813)).toBeLessThan(1e-12);
    expect(Math.abs(normalQuantile(1e-12) + 7.034483825301132)).toBeLessThan(1e-12);
    expect(Math.abs(normalQuantile(0.8) - 0.8416212335729144)).toBeLessThan(1e-12);
    for (const p of [1e-9, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-9]) expect(Math.abs(normalCdf(normalQuantile(p)) - p)).toBeLessThan(1e-15);
    expect(normalQuantile(0)).toBe(Number.NEGATIVE_INFINITY);
    expect(() => normalQuantile(1.5)).toThrow(RangeError);
  });

  it('a two-sided p-value is the mass beyond |z| on both sides', () => {
    expect(Math.abs(twoSidedNormalP(1.959963984540054) - 0.05)).toBeLessThan(1e-15);
    expect(twoSidedNormalP(-2)).toBe(twoSidedNormalP(2));
  });
});
