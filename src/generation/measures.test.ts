import { describe, expect, it } from 'vitest';
import { populationStd } from '../statistics/descriptive.js';
import { connectedComponents, separation, textCosine, textJaccard, wordNgrams } from './measures.js';

describe('separation', () => {
  it('reports spread, ties at the top and the top-2 gap, leaving out failed gradings', () => {
    const result = separation([0.5, 1, null, 0.25, 1]);
    expect(result.n).toBe(4);
    expect(result.mean).toBeCloseTo(0.6875, 6);
    expect(result.std).toBeCloseTo(populationStd([0.5, 1, 0.25, 1]), 6);
    expect(result.range).toBe(0.75);
    expect(result.top_ties).toBe(2);
    expect(result.top2_gap).toBe(0);
  });

  it('has a positive gap and a unique top when the best response stands out', () => {
    const result = separation([0.2, 0.9, 0.4]);
    expect(result.top_ties).toBe(1);
    expect(result.top2_gap).toBeCloseTo(0.5, 9);
  });

  it('treats sums that differ only in the last bit as ties', () => {
    expect(separation([0.1 + 0.2, 0.3]).top_ties).toBe(2);
  });

  it('is empty without scores', () => {
    expect(separation([null, null])).toEqual({ n: 0, mean: null, std: null, range: null, top_ties: 0, top2_gap: null });
  });
});

describe('text similarity', () => {
  it('uses word uni- and bigrams, ignoring case and punctuation', () => {
    expect([...wordNgrams('The cat, sat.')]).toEqual(['the', 'cat', 'sat', 'the cat', 'cat sat']);
    expect(textJaccard('The response cites a source.', 'the response CITES a source')).toBe(1);
    expect(textJaccard('apples and pears', 'stock market crash')).toBe(0);
    const partial = textJaccard('The response names Ottawa as the capital', 'The response names Paris as the capital');
    expect(partial).toBeGreaterThan(0.3);
    expect(partial).toBeLessThan(0.8);
  });

  it('cosine is 1 for the same words and between 0 and 1 for partial overlap', () => {
    expect(textCosine('a b c', 'a b c')).toBeCloseTo(1, 12);
    const value = textCosine('one two three', 'one two four');
    expect(value).toBeGreaterThan(0);
    expect(value).toBeLessThan(1);
  });
});

describe('connectedComponents', () => {
  it('groups linked indices in a stable order', () => {
    expect(connectedComponents(6, [[4, 1], [1, 3], [0, 5]])).toEqual([[0, 5], [1, 3, 4], [2]]);
  });
});
