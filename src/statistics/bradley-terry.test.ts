import { describe, expect, it } from 'vitest';
import { bradleyTerry, type PairOutcome } from './bradley-terry.js';

describe('bradleyTerry', () => {
  it('reproduces the closed form for two players: pA ÷ (pA + pB) = A’s share of wins', () => {
    const outcomes: PairOutcome[] = [
      { first: 0, second: 1, firstScore: 1 },
      { first: 1, second: 0, firstScore: 0 },
      { first: 0, second: 1, firstScore: 0 },
    ];
    const fit = bradleyTerry(2, outcomes)!;
    expect(fit.converged).toBe(true);
    expect(fit.strengths[0]).toBeCloseTo(2 / 3, 10);
    expect(fit.strengths[1]).toBeCloseTo(1 / 3, 10);
  });

  it('gives equal strengths to a cycle and to a tie', () => {
    const cycle = bradleyTerry(3, [
      { first: 0, second: 1, firstScore: 1 },
      { first: 1, second: 2, firstScore: 1 },
      { first: 2, second: 0, firstScore: 1 },
    ])!;
    for (const strength of cycle.strengths) expect(strength).toBeCloseTo(1 / 3, 10);
    expect(bradleyTerry(2, [{ first: 0, second: 1, firstScore: 0.5 }])!.strengths).toEqual([0.5, 0.5]);
  });

  it('satisfies the likelihood equations: each player’s wins equal its expected wins', () => {
    const outcomes: PairOutcome[] = [
      { first: 0, second: 1, firstScore: 1 },
      { first: 0, second: 1, firstScore: 1 },
      { first: 1, second: 0, firstScore: 1 },
      { first: 1, second: 2, firstScore: 1 },
      { first: 2, second: 1, firstScore: 0.5 },
      { first: 0, second: 2, firstScore: 0 },
      { first: 2, second: 0, firstScore: 0 },
    ];
    const { strengths } = bradleyTerry(3, outcomes)!;
    const wins = [0, 0, 0];
    const expected = [0, 0, 0];
    for (const { first, second, firstScore } of outcomes) {
      wins[first] += firstScore;
      wins[second] += 1 - firstScore;
      const chance = strengths[first] / (strengths[first] + strengths[second]);
      expected[first] += chance;
      expected[second] += 1 - chance;
    }
    for (let player = 0; player < 3; player += 1) expect(expected[player]).toBeCloseTo(wins[player], 8);
    expect(strengths.reduce((sum, value) => sum + value, 0)).toBeCloseTo(1, 12);
  });

  it('is undefined (null) when one player never loses or never wins', () => {
    // 0 beats 1 and 2, 1 beats 2: 0 never loses, so its strength would be infinite.
    expect(bradleyTerry(3, [
      { first: 0, second: 1, firstScore: 1 },
      { first: 1, second: 2, firstScore: 1 },
      { first: 0, second: 2, firstScore: 1 },
    ])).toBeNull();
    // A player nobody compared with it.
    expect(bradleyTerry(3, [{ first: 0, second: 1, firstScore: 0.5 }])).toBeNull();
    expect(bradleyTerry(1, [])).toBeNull();
  });
});
