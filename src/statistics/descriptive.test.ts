import { describe, expect, it } from 'vitest';
import { populationStd, quantileOfSorted, round } from './descriptive.js';
import { numpyRound } from './reference-math.js';

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

describe('populationStd and round', () => {
  it('std is the population std, NaN without values', () => {
    expect(populationStd([1, 3])).toBe(1);
    expect(populationStd([])).toBeNaN();
  });

  it('round takes halves up, where numpyRound takes them to even', () => {
    expect([round(0.5, 0), round(2.5, 0)]).toEqual([1, 3]);
    expect([numpyRound(0.5, 0), numpyRound(2.5, 0)]).toEqual([0, 2]);
    expect(round(1 / 3)).toBe(0.333333);
  });
});
