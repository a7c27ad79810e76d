import { describe, expect, it } from 'vitest';
import { normalizeRubric } from '../rubric/normalize.js';
import type { Rubric } from '../rubric/schema.js';
import { test } from '../testing/vitest-fixtures.js';
import { clusterWeights, decomposeExtremeCriteria, describeAction, dropMisalignedAndRedundant, passRates, preferenceEdges, type PairVerdicts } from './decompose-filter.js';
import { answer, fencedBlocks, mentions, taskOf } from './fixtures/fake-generator.js';
import { createRubricGenerator } from './generator.js';

function rubricOf(criteria: Array<[id: string, text: string, points: number]>): Rubric {
  return normalizeRubric({ id: 'r', criteria: criteria.map(([id, text, points]) => ({ id, text, points })) });
}

const T = true;
const F = false;

describe('passRates', () => {
  it('is the share of known verdicts that are met', () => {
    const rubric = rubricOf([['a', 'A', 1], ['b', 'B', 1], ['c', 'C', 1]]);
    const rates = passRates(rubric, new Map([['a', [T, T, F, null]], ['b', [null, null]]]));
    expect(rates.get('a')).toEqual({ rate: 2 / 3, n: 3 });
    expect(rates.has('b')).toBe(false);
    expect(rates.has('c')).toBe(false);
  });
});

describe('dropMisalignedAndRedundant', () => {
  it('drops a criterion that prefers rejected responses (sign-aware for Pitfalls)', () => {
    const rubric = rubricOf([['good', 'Cites a source', 3], ['bad', 'Is long', 3], ['pit', 'Uses jargon', -2], ['pit2', 'Is rude', -2]]);
    const pairs: PairVerdicts[] = [
      { chosen: new Map([['good', T], ['bad', F], ['pit', T], ['pit2', F]]), rejected: new Map([['good', F], ['bad', T], ['pit', F], ['pit2', T]]) },
      { chosen: new Map([['good', T], ['bad', F], ['pit', F], ['pit2', F]]), rejected: new Map([['good', T], ['bad', T], ['pit', F], ['pit2', F]]) },
    ];
    expect(Object.fromEntries(preferenceEdges(rubric, pairs))).toEqual({ good: { edge: 0.5, pairs: 2 }, bad: { edge: -1, pairs: 2 }, pit: { edge: -0.5, pairs: 2 }, pit2: { edge: 0.5, pairs: 2 } });
    const result = dropMisalignedAndRedundant(rubric, new Map(), pairs);
    expect(result.rubric.criteria.map((criterion) => criterion.id)).toEqual(['good', 'pit2']);
    expect(result.actions).toEqual([
      { action: 'dropped', reason: 'misaligned', criterion_id: 'bad', text: 'Is long', edge: -1, pairs: 2 },
      { action: 'dropped', reason: 'misaligned', criterion_id: 'pit', text: 'Uses jargon', edge: -0.5, pairs: 2 },
    ]);
  });

  it('drops near-duplicate wording and criteria whose verdicts track a more important one', () => {
    const rubric = rubricOf([
      ['a', 'The response names Ottawa as the capital of Canada.', 3],
      ['b', 'The response names Ottawa as the capital of Canada', 5],
      ['c', 'The response explains the history.', 3],
      ['d', 'The response gives dates.', 1],
      ['e', 'The response omits dates.', -1],
      ['f', 'The response is polite.', 1],
    ]);
    const verdicts = new Map([
      ['a', [T, F, T, F, T]],
      ['b', [T, F, T, F, T]],
      ['c', [T, T, F, F, T]],
      ['d', [T, T, F, F, T]],
      // The mirror of d: met exactly when d is not; as a Pitfall its good outcome equals d's.
      ['e', [F, F, T, T, F]],
      ['f', [T, F, F, T, F]],
    ]);
    const result = dropMisalignedAndRedundant(rubric, verdicts, []);
    expect(result.rubric.criteria.map((criterion) => criterion.id)).toEqual(['b', 'c', 'f']);
    expect(result.actions.map((action) => [action.criterion_id, action.action === 'dropped' ? action.reason : '', 'kept_id' in action ? action.kept_id : ''])).toEqual([
      ['a', 'duplicate_text', 'b'],
      ['d', 'correlated_verdicts', 'c'],
      ['e', 'correlated_verdicts', 'c'],
    ]);
    expect(result.rubric.id).toBe('r');
  });

  it('makes no correlation decision on too few responses', () => {
    const rubric = rubricOf([['c', 'Explains.', 3], ['d', 'Dates.', 1]]);
    const result = dropMisalignedAndRedundant(rubric, new Map([['c', [T, F, T]], ['d', [T, F, T]]]), []);
    expect(result.actions).toEqual([]);
    expect(result.rubric).toBe(rubric);
  });
});

describe('clusterWeights', () => {
  it('divides the points of each correlated cluster by its size and records the original points', () => {
    const rubric = rubricOf([['a', 'A', 6], ['b', 'B', 3], ['c', 'C', 2], ['d', 'D', -2]]);
    const verdicts = new Map([
      ['a', [T, T, F, F, T, F]],
      ['b', [T, T, F, F, T, T]],
      ['c', [F, T, T, F, F, T]],
      ['d', [F, T, F, T, F, T]],
    ]);
    const result = clusterWeights(rubric, verdicts, { clusterThreshold: 0.6 });
    expect(result.rubric.criteria.map((criterion) => criterion.points)).toEqual([3, 1.5, 2, -2]);
    expect(result.rubric.criteria[0].metadata).toEqual({ points_before_weighting: 6, weight_cluster: ['a', 'b'] });
    expect(result.actions.map(describeAction)).toEqual(['reweighted "A": 6 → 3 (cluster of 2)', 'reweighted "B": 3 → 1.5 (cluster of 2)']);
  });
});

describe('decomposeExtremeCriteria', () => {
  test('asks the generator to split criteria that (almost) every response meets or fails, and replaces them in place', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => {
      expect(taskOf(request)).toBe('decompose');
      const system = request.messages[0].content;
      const parent = /The criterion to refine:\n<criterion-[0-9a-f]{16}>\n\[[^\]]+\] (.*)/.exec(request.userText)![1];
      expect(fencedBlocks(request, 'example').length).toBe(2);
      if (parent.includes('everyone')) {
        expect(system).toContain('met by 100% of them');
        expect(system).toContain('more specific and more demanding');
        return { content: answer([mentions('depth'), mentions('nuance')]) };
      }
      expect(system).toContain('partial steps');
      return { content: answer([mentions('first step'), mentions('second step')]) };
    }, { model: 'writer' });
    const generator = createRubricGenerator({ generator: judge, retryBaseDelayMs: 1 });
    const rubric = rubricOf([['all', 'Met by everyone.', 3], ['mid', 'Split half.', 3], ['none', 'Met by no one.', 1]]);
    const verdicts = new Map([
      ['all', [T, T, T, T, T]],
      ['mid', [T, F, T, F, T]],
      ['none', [F, F, F, F, F]],
    ]);
    const result = await decomposeExtremeCriteria(rubric, verdicts, { generator, prompt: [{ role: 'user', content: 'q' }], responses: ['r1', 'r2', 'r3', 'r4', 'r5'] });
    expect(result.rubric.criteria.map((criterion) => criterion.text)).toEqual([
      'The response mentions "depth".',
      'The response mentions "nuance".',
      'Split half.',
      'The response mentions "first step".',
      'The response mentions "second step".',
    ]);
    expect(result.rubric.criteria[0].metadata).toMatchObject({ decomposed_from: 'all', importance: 'Important' });
    expect(result.actions.map((action) => [action.action, action.criterion_id, 'into' in action ? action.into.length : 0])).toEqual([
      ['decomposed', 'all', 2],
      ['decomposed', 'none', 2],
    ]);
    expect(fake.requests).toHaveLength(2);
  });

  test('reports a failed split and keeps the criterion', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ content: 'cannot' }), { model: 'writer' });
    const generator = createRubricGenerator({ generator: judge, retryBaseDelayMs: 1, maxAttempts: 2 });
    const rubric = rubricOf([['all', 'Met by everyone.', 3]]);
    const result = await decomposeExtremeCriteria(rubric, new Map([['all', [T, T, T, T]]]), { generator, prompt: [{ role: 'user', content: 'q' }], responses: ['a', 'b', 'c', 'd'] });
    expect(result.rubric).toBe(rubric);
    expect(result.actions).toMatchObject([{ action: 'decompose_failed', criterion_id: 'all', pass_rate: 1 }]);
  });
});
