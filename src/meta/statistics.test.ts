import { describe, expect, it } from 'vitest';
import { binaryCohenKappa, cohenKappa, fleissKappa, pythonFloatRepr, quantileOfSorted, roundHalfEven } from './statistics.js';

describe('cohenKappa', () => {
  it('matches a hand-computed three-category case', () => {
    // Observed agreement 4/6; chance agreement (2·2 + 2·3 + 2·1)/36 = 1/3; κ = (2/3 − 1/3)/(2/3).
    expect(cohenKappa(['a', 'a', 'b', 'b', 'c', 'c'], ['a', 'b', 'b', 'b', 'c', 'a'])).toBeCloseTo(0.5, 14);
  });

  it('is 1 for perfect agreement over two categories and −1 for perfect disagreement', () => {
    expect(cohenKappa([1, 0, 1, 0], [1, 0, 1, 0])).toBe(1);
    expect(cohenKappa([1, 0], [0, 1])).toBe(-1);
  });

  it('is null when undefined: no items, or both raters constant and equal (sklearn gives NaN)', () => {
    expect(cohenKappa([], [])).toBeNull();
    expect(cohenKappa(['x', 'x', 'x'], ['x', 'x', 'x'])).toBeNull();
  });

  it('is 0 when one rater is constant and the other is not', () => {
    expect(cohenKappa([true, true, true], [true, false, true])).toBe(0);
  });

  it('rejects raters of different lengths', () => {
    expect(() => cohenKappa([1], [1, 2])).toThrow(RangeError);
  });

  it('agrees with the 2×2 shortcut', () => {
    const predictions = [true, true, true, true, false, false, false, false, false, false];
    const labels = [true, true, true, false, true, true, false, false, false, false];
    const generic = cohenKappa(predictions, labels);
    const shortcut = binaryCohenKappa({ truePositive: 3, falsePositive: 1, falseNegative: 2, trueNegative: 4 });
    expect(generic).toBeCloseTo(0.4, 14);
    expect(shortcut).toBeCloseTo(generic!, 14);
  });
});

describe('fleissKappa', () => {
  it('matches a hand-computed case with three raters', () => {
    // Per-item agreement 1, 1/3, 1 → mean 7/9; category shares 5/9 and 4/9 → chance 41/81.
    expect(fleissKappa([['x', 'x', 'x'], ['x', 'x', 'y'], ['y', 'y', 'y']])).toBeCloseTo(22 / 40, 14);
  });

  it('reproduces the textbook 10-item, 14-rater example (κ ≈ 0.210)', () => {
    const table = [
      [0, 0, 0, 0, 14],
      [0, 2, 6, 4, 2],
      [0, 0, 3, 5, 6],
      [0, 3, 9, 2, 0],
      [2, 2, 8, 1, 1],
      [7, 7, 0, 0, 0],
      [3, 2, 6, 3, 0],
      [2, 5, 3, 2, 2],
      [6, 5, 2, 1, 0],
      [0, 2, 2, 3, 7],
    ];
    const ratings = table.map((row) => row.flatMap((count, category) => Array.from({ length: count }, () => category)));
    expect(fleissKappa(ratings)).toBeCloseTo(0.20993, 4);
  });

  it('handles items with different numbers of raters', () => {
    // Items [a,a] and [a,b,b]: agreement 1 and 1/3; shares 3/5 and 2/5 → κ = (2/3 − 13/25)/(12/25) = 11/36.
    expect(fleissKappa([['a', 'a'], ['a', 'b', 'b']])).toBeCloseTo(11 / 36, 14);
  });

  it('skips single-rating items and is null without any usable item or when chance agreement is 1', () => {
    expect(fleissKappa([['a'], ['b']])).toBeNull();
    expect(fleissKappa([])).toBeNull();
    expect(fleissKappa([[true, true], [true, true]])).toBeNull();
    expect(fleissKappa([['x'], ['x', 'x', 'x'], ['x', 'x', 'y'], ['y', 'y', 'y']])).toBeCloseTo(22 / 40, 14);
  });
});

describe('quantileOfSorted', () => {
  it('interpolates linearly between order statistics', () => {
    expect(quantileOfSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileOfSorted([1, 2, 3, 4], 0.025)).toBeCloseTo(1.075, 14);
    expect(quantileOfSorted([1, 2, 3, 4], 0)).toBe(1);
    expect(quantileOfSorted([1, 2, 3, 4], 1)).toBe(4);
  });

  it('returns the only value of a single-element input and refuses an empty one', () => {
    expect(quantileOfSorted([7], 0.975)).toBe(7);
    expect(() => quantileOfSorted([], 0.5)).toThrow(RangeError);
  });
});

describe('roundHalfEven', () => {
  it('rounds exact halves to even, like NumPy', () => {
    expect(roundHalfEven(0.25, 1)).toBe(0.2);
    expect(roundHalfEven(2.5, 0)).toBe(2);
    expect(roundHalfEven(3.5, 0)).toBe(4);
    expect(roundHalfEven(-2.5, 0)).toBe(-2);
  });

  it('scales before rounding, so 0.35 (stored just below) still rounds up as NumPy does', () => {
    expect(roundHalfEven(0.35, 1)).toBe(0.4);
    expect(roundHalfEven(-33.333333, 1)).toBe(-33.3);
    expect(roundHalfEven(62.5 - 83.3, 3)).toBe(-20.8);
  });
});

describe('pythonFloatRepr', () => {
  it.each([
    [95, '95.0'],
    [100, '100.0'],
    [0, '0.0'],
    [64.81481481481481, '64.81481481481481'],
    [58.333333333333336, '58.333333333333336'],
    [-2.5, '-2.5'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [1e16, '1e+16'],
    [123456789012345680, '1.2345678901234568e+17'],
    [1234.5, '1234.5'],
  ])('%d → %s', (value, expected) => {
    expect(pythonFloatRepr(value)).toBe(expected);
  });
});
