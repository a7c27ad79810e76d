import { describe, expect, test } from 'vitest';
import { carrGroupRewards, connectRubrics, fillRubric, mixCarrReward } from './carr.js';

const identities = new Map<string, string | null>([
  ['E0', 'Fight Night 7'],
  ['E1', 'Lisbon'],
  ['E2', 'Portugal'],
  ['E3', 'Ana Reis'],
  ['E4', 'Rui Costa'],
  ['E5', 'Tagus'],
  ['E6', null],
]);

describe('CaRR rubric arithmetic (hand-worked)', () => {
  test('filling: every placeholder replaced, entities in order of appearance, unfilled when one is missing', () => {
    expect(fillRubric('<E1> and <E0> met in <E1>.', identities)).toMatchObject({
      filled_rubric: 'Lisbon and Fight Night 7 met in Lisbon.',
      entity_values: { E1: 'Lisbon', E0: 'Fight Night 7' },
      all_entity_identified: true,
    });
    expect(Object.keys(fillRubric('<E1> and <E0>', identities).entity_values)).toEqual(['E1', 'E0']);
    expect(fillRubric('<E6> sponsored <E0>.', identities)).toMatchObject({ filled_rubric: '<E6> sponsored Fight Night 7.', all_entity_identified: false, entity_values: { E6: null, E0: 'Fight Night 7' } });
  });

  test('connectivity: only supported rubrics linked to E0 through shared entities count, over all rubrics', () => {
    const rubrics = ['<E0> took place in <E1>.', '<E1> is the capital of <E2>.', '<E3> refereed <E0>.', '<E4> wrote a book about <E5>.', '<E0> was held in 2019.', '<E6> sponsored <E0>.'];
    const scores = rubrics.map((rubric) => fillRubric(rubric, identities));
    // Supported: the first four; the fifth is not; the sixth was never filled.
    [true, true, true, true, false, false].forEach((supported, index) => (scores[index].is_supported = supported));
    // E0 → rubrics 0 and 2 → E1, E3 → rubric 1 → E2. Rubric 3 (E4, E5) is supported but disconnected.
    expect(connectRubrics(scores)).toBe(3 / 6);
    expect(scores.map((score) => score.connected_to_answer)).toEqual([true, true, true, false, false, false]);
    expect(scores.map((score) => score.score)).toEqual([1, 1, 1, 0, 0, 0]);
  });

  test('connectivity runs through chains in any rubric order, and a supported rubric with no entity never counts', () => {
    const scores = ['<E2> borders <E3>.', '<E1> is in <E2>.', '<E0> happened in <E1>.', 'Water is wet.'].map((rubric) => fillRubric(rubric, new Map([['E0', 'a'], ['E1', 'b'], ['E2', 'c'], ['E3', 'd']])));
    for (const score of scores) score.is_supported = true;
    expect(connectRubrics(scores)).toBe(3 / 4);
    expect(scores[3].connected_to_answer).toBe(false);
  });

  test('without E0 among the supported rubrics nothing is connected; the fork\'s no-BFS option counts support alone', () => {
    const scores = ['<E1> is the capital of <E2>.', '<E0> was held in 2019.'].map((rubric) => fillRubric(rubric, identities));
    scores[0].is_supported = true;
    expect(connectRubrics(scores.map((score) => ({ ...score })))).toBe(0);
    expect(connectRubrics(scores, false)).toBe(1 / 2);
    expect(connectRubrics([])).toBe(0);
  });

  test('the outcome mix: (1 − r)·outcome + r·rubric', () => {
    expect(mixCarrReward(1, 0.5, 0.3)).toBeCloseTo(0.85, 12);
    expect(mixCarrReward(0, 0.5, 0.3)).toBeCloseTo(0.15, 12);
    expect(mixCarrReward(1, 0.5, 0)).toBe(1);
  });
});

describe("C-GRPO's group rewards", () => {
  const group = [
    { outcome: 1, rubric: 0.5 },
    { outcome: 0, rubric: 0.25 },
    { outcome: 1, rubric: 0.125 },
    { outcome: 0, rubric: 0 },
  ];
  const rewards = (options: Partial<Parameters<typeof carrGroupRewards>[1]>, members = group) =>
    carrGroupRewards(members, { ratio: 0.3, normalize: 'none', only: 'all', follow: 'release', ...options });
  const expectRewards = (actual: number[], expected: number[]) => {
    expect(actual).toHaveLength(expected.length);
    actual.forEach((value, index) => expect(value).toBeCloseTo(expected[index], 12));
  };

  test('plain mix, and divided by the group max (0.5 here)', () => {
    expectRewards(rewards({}), [0.85, 0.075, 0.7375, 0]);
    expectRewards(rewards({ normalize: 'group-max' }), [1, 0.15, 0.775, 0]);
  });

  test('rubric term only when the outcome is correct: the release mixes the raw rubric reward there, the paper the normalised one', () => {
    expectRewards(rewards({ only: 'correct' }), [0.85, 0, 0.7375, 0]);
    expectRewards(rewards({ only: 'correct', normalize: 'group-max' }), [0.85, 0, 0.7375, 0]);
    expectRewards(rewards({ only: 'correct', normalize: 'group-max', follow: 'paper' }), [1, 0, 0.775, 0]);
  });

  test('rubric term only when the outcome is wrong, and a group whose rubric rewards are all 0', () => {
    expectRewards(rewards({ only: 'incorrect' }), [1, 0.075, 1, 0]);
    expectRewards(rewards({ only: 'incorrect', normalize: 'group-max' }), [1, 0.15, 1, 0]);
    expectRewards(rewards({ normalize: 'group-max' }, [{ outcome: 1, rubric: 0 }, { outcome: 0, rubric: 0 }]), [0.7, 0]);
  });
});
