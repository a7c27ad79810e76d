import { describe, expect, it } from 'vitest';
import type { Criterion } from '../rubric/schema.js';
import { listwiseLabelTokens, listwiseOutputBudget, splitGroupToFit, verdictEntryTokens } from './budget.js';

const criteria: Criterion[] = Array.from({ length: 6 }, (_, index) => ({ id: `c${index}`, text: `criterion ${index}`, points: 1, tags: [], kind: 'principle' }));
const entry = verdictEntryTokens(criteria[0], 1024);
const base = { maxCriteriaPerCall: Number.POSITIVE_INFINITY, tokensPerVerdict: 1024, sharedPromptTokens: 500, criterionPromptTokens: () => 20 };

describe('listwise groups sized to the judge', () => {
  it('keeps the whole group in one call when the limits are unknown', () => {
    expect(splitGroupToFit(criteria, { ...base, responsePromptTokens: [300, 300, 300, 300] })).toEqual([{ responses: [0, 1, 2, 3], criteria }]);
    expect(listwiseOutputBudget(criteria, 4, 1024)).toBe(64 + 4 * (listwiseLabelTokens + 6 * entry));
  });

  it('splits criteria first: every call still shows every response', () => {
    // Room for the verdicts of 4 responses on 2 criteria, not 3.
    const maxOutputTokens = Math.ceil((64 + 4 * listwiseLabelTokens + 2 * 4 * entry) / 0.75) + 1;
    const calls = splitGroupToFit(criteria, { ...base, limits: { maxOutputTokens }, responsePromptTokens: [300, 300, 300, 300] });
    expect(calls.map((call) => [call.responses, call.criteria.map((criterion) => criterion.id)])).toEqual([
      [[0, 1, 2, 3], ['c0', 'c1']],
      [[0, 1, 2, 3], ['c2', 'c3']],
      [[0, 1, 2, 3], ['c4', 'c5']],
    ]);
    expect(calls.flatMap((call) => call.criteria)).toHaveLength(6);
  });

  it('splits responses when the context cannot hold them all even on one criterion, covering every (response, criterion) once', () => {
    // Two long responses and one criterion's verdicts fill the context window; a third does not fit.
    const contextWindow = 500 + 20 + 2 * 3000 + 64 + 2 * (listwiseLabelTokens + entry) + 10;
    const calls = splitGroupToFit(criteria, { ...base, limits: { contextWindow }, responsePromptTokens: [3000, 3000, 3000] });
    expect([...new Set(calls.map((call) => call.responses.join(',')))]).toEqual(['0,1', '2']);
    const covered = calls.flatMap((call) => call.responses.flatMap((response) => call.criteria.map((criterion) => `${response}:${criterion.id}`)));
    expect(covered.sort()).toEqual([0, 1, 2].flatMap((response) => criteria.map((criterion) => `${response}:${criterion.id}`)).sort());
  });

  it('a response too long for the context alone still gets its calls (the server says why)', () => {
    const calls = splitGroupToFit(criteria.slice(0, 1), { ...base, limits: { contextWindow: 1000 }, responsePromptTokens: [5000, 5000] });
    expect(calls.map((call) => call.responses)).toEqual([[0], [1]]);
  });
});
