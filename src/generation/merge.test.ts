import { describe, expect, it } from 'vitest';
import { clampPoints, mergeCriteria } from './merge.js';

describe('mergeCriteria', () => {
  it('folds exact and near duplicates of the same direction, keeps the higher points and records every source', () => {
    const result = mergeCriteria(
      [
        { source: 'writer-a', criteria: [{ text: 'The response states the final answer first.', points: 3 }, { text: 'The response invents a citation.', points: -2 }] },
        {
          source: 'writer-b',
          criteria: [
            { text: 'the response states the final answer first', points: 5 },
            { text: 'The response states the final answer first and clearly.', points: 1 },
            { text: 'The response does not invent a citation.', points: 2 },
          ],
        },
      ],
      { range: { min: -5, max: 5 } },
    );
    expect(result.duplicates).toBe(1);
    expect(result.criteria.map((criterion) => [criterion.text, criterion.points])).toEqual([
      ['the response states the final answer first', 5],
      ['The response invents a citation.', -2],
      // Similar wording, but its Jaccard with the first is under 0.9: not a duplicate for a conservative merge.
      ['The response states the final answer first and clearly.', 1],
      // Opposite direction of the pitfall: never folded (lint reports such a pair).
      ['The response does not invent a citation.', 2],
    ]);
    expect(result.criteria[0].metadata?.merge).toEqual({ sources: ['writer-a', 'writer-b'], merged: [{ source: 'writer-a', text: 'The response states the final answer first.', points: 3 }] });
    expect(result.criteria[1].metadata?.merge).toEqual({ sources: ['writer-a'], merged: [] });
  });

  it('clamps points to the declared range without flipping a sign, and says so', () => {
    const result = mergeCriteria([{ source: 'writer', criteria: [{ text: 'Cites a source.', points: 10 }, { text: 'Insults the user.', points: -9 }, { text: 'Answers.', points: 2 }] }], { range: { min: -2, max: 5 } });
    expect(result.criteria.map((criterion) => criterion.points)).toEqual([5, -2, 2]);
    expect(result.clamped).toBe(2);
    expect((result.criteria[0].metadata?.merge as { clamped_from?: number }).clamped_from).toBe(10);
    expect((result.criteria[2].metadata?.merge as { clamped_from?: number }).clamped_from).toBeUndefined();
    expect(clampPoints(-1, { min: -2, max: 5 })).toBe(-1);
  });
});
