import { describe, expect, it } from 'vitest';
import { seededRandom } from '../util/random.js';
import { bestThreshold, isotonicPoints, splitByItem } from './align.js';

describe('the train/test split', () => {
  const entries = [...Array.from({ length: 20 }, (_, index) => ({ id: `a${index}`, stratum: 'a' })), ...Array.from({ length: 10 }, (_, index) => ({ id: `b${index}`, stratum: 'b' }))];

  it('is by item, stratified (each stratum holds its share), and the same for the same seed', () => {
    const split = splitByItem(entries, 0.3, seededRandom(7));
    expect(split.test).toHaveLength(9);
    expect(split.test.filter((entry) => entry.stratum === 'a')).toHaveLength(6);
    expect(split.test.filter((entry) => entry.stratum === 'b')).toHaveLength(3);
    expect(new Set([...split.train, ...split.test].map((entry) => entry.id)).size).toBe(30);
    expect(splitByItem(entries, 0.3, seededRandom(7)).test.map((entry) => entry.id)).toEqual(split.test.map((entry) => entry.id));
    expect(splitByItem(entries, 0.3, seededRandom(8)).test.map((entry) => entry.id)).not.toEqual(split.test.map((entry) => entry.id));
  });

  it('keeps at least one item to learn from', () => {
    const split = splitByItem([{ id: 'x', stratum: 's' }], 0.9, seededRandom(0));
    expect(split.train).toHaveLength(1);
  });
});

describe('the calibrator fit', () => {
  it('pools adjacent violators into a non-decreasing map (hand-computed)', () => {
    // Labels by P: 0.1 → 0, 0.2 → 1, 0.3 → 0, 0.4 → 1: the middle pair pools to (0.25, 0.5).
    expect(
      isotonicPoints([
        { probability: 0.3, label: false },
        { probability: 0.1, label: false },
        { probability: 0.4, label: true },
        { probability: 0.2, label: true },
      ]),
    ).toEqual([
      [0.1, 0],
      [0.25, 0.5],
      [0.4, 1],
    ]);
  });

  it('chooses the threshold with the best balanced accuracy, between values', () => {
    expect(bestThreshold([{ value: 0, label: false }, { value: 0, label: false }, { value: 1, label: true }])).toBe(0.5);
    expect(bestThreshold([{ value: 0.2, label: false }, { value: 0.6, label: true }, { value: 0.7, label: true }, { value: 0.9, label: true }])).toBe(0.4);
  });
});
