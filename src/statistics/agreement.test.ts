import { describe, expect, it } from 'vitest';
import { binaryCohenKappa, cohenKappa, fleissKappa, phiCoefficient } from './agreement.js';

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

describe('phiCoefficient', () => {
  it('is 1 for identical, -1 for opposite and null for constant vectors', () => {
    expect(phiCoefficient([true, false, true, false], [true, false, true, false])).toBeCloseTo(1, 12);
    expect(phiCoefficient([true, false, true, false], [false, true, false, true])).toBeCloseTo(-1, 12);
    expect(phiCoefficient([true, true, true], [true, false, true])).toBeNull();
  });

  it('matches the 2x2 formula and skips unknown positions', () => {
    // both=2, onlyFirst=1, onlySecond=1, neither=2 → (4-1)/sqrt(3*3*3*3) = 1/3
    const first = [true, true, true, false, false, false, null];
    const second = [true, true, false, true, false, false, true];
    expect(phiCoefficient(first, second)).toBeCloseTo(1 / 3, 12);
  });
});
