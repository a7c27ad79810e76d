import { describe, expect, it } from 'vitest';
import { suggestedSequences } from './local-judge-benchmark.js';

const plan = (name: string, sequences: number, secondsPerCriterion: number) => ({ plan: sequences > 1 ? `${name}, ${sequences} sequences` : name, sequences, secondsPerCriterion });

describe('the batch width bench-local suggests', () => {
  it('is the width of the fastest plan among those that differ only in sequences, fewer within 5%', () => {
    expect(suggestedSequences([plan('short', 1, 7.5), plan('short', 4, 9.0)])).toBe(1);
    expect(suggestedSequences([plan('short', 1, 7.5), plan('short', 2, 5.0), plan('short', 4, 4.9)])).toBe(2);
    expect(suggestedSequences([plan('full', 1, 12), plan('full', 4, 6), plan('short', 1, 5)])).toBe(4);
  });

  it('says nothing when no plan was run at two widths', () => {
    expect(suggestedSequences([plan('short', 1, 7.5), plan('full', 4, 9.0)])).toBeUndefined();
    expect(suggestedSequences([])).toBeUndefined();
  });
});
