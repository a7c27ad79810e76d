import { describe, expect, it } from 'vitest';
import { codingRate, selectByCodingRate } from './coding-rate.js';

describe('codingRate', () => {
  it('is ½·log(1 + d/ε²) for one unit vector and ½·log det of the hand-computed 2×2 matrix for two', () => {
    // d = 4, ε = 0.5: d/(n·ε²) = 16 for n = 1, 8 for n = 2.
    expect(codingRate([[1, 0, 0, 0]], 0.5)).toBeCloseTo(0.5 * Math.log(17), 12);
    // Orthogonal unit vectors: I + 8·I → det 81.
    expect(codingRate([[1, 0, 0, 0], [0, 1, 0, 0]], 0.5)).toBeCloseTo(0.5 * Math.log(81), 12);
    // Vectors at cos θ = 0.5: Gram [[1, .5], [.5, 1]] → det((1+8)² − 4²) = 65.
    expect(codingRate([[1, 0, 0, 0], [0.5, Math.sqrt(0.75), 0, 0]], 0.5)).toBeCloseTo(0.5 * Math.log(65), 12);
    expect(codingRate([], 0.5)).toBe(0);
  });
});

describe('selectByCodingRate', () => {
  it('never picks a duplicate (its gain is exactly 0), and picks orthogonal vectors with the hand-computed gains', () => {
    const vectors = [
      [1, 1, 0, 0],
      [2, 2, 0, 0], // the first, scaled: a duplicate once unit length
      [0, 0, 1, 0],
      [0, 0, 0, 3],
    ];
    const selection = selectByCodingRate(vectors, { maxSelected: 4, epsilon: 0.5 });
    expect(selection.selected).toEqual([0, 2, 3]);
    // First: ½·log(1 + 16); second: R(two orthogonal) − R(one) = log(1 + 8) − ½·log 17.
    expect(selection.gains[0]).toBeCloseTo(0.5 * Math.log(17), 12);
    expect(selection.gains[1]).toBeCloseTo(Math.log(9) - 0.5 * Math.log(17), 12);
    expect(selection.gains[2]).toBeCloseTo(1.5 * Math.log(1 + 16 / 3) - Math.log(9), 12);
    expect(selection.rate).toBeCloseTo(1.5 * Math.log(1 + 16 / 3), 12);
  });

  it('stops at maxSelected, skips zero vectors and breaks ties by the lower index', () => {
    const vectors = [
      [0, 0, 0],
      [0, 1, 0],
      [1, 0, 0],
      [0, 0, 1],
    ];
    expect(selectByCodingRate(vectors, { maxSelected: 2 }).selected).toEqual([1, 2]);
    expect(selectByCodingRate([[0, 0], [0, 0]], { maxSelected: 2 }).selected).toEqual([]);
  });

  it('stops when the best gain is below minGain', () => {
    // Two nearly parallel vectors: the second adds a little volume, under a threshold set above it.
    const vectors = [
      [1, 0],
      [1, 0.01],
    ];
    expect(selectByCodingRate(vectors, { maxSelected: 2, minGain: 0 }).selected).toEqual([0, 1]);
    expect(selectByCodingRate(vectors, { maxSelected: 2, minGain: 0.01 }).selected).toEqual([0]);
  });
});
