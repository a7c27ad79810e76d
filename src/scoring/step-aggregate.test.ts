import { describe, expect, test } from 'vitest';
import { aggregateSteps, stepAggregateName, stepReward } from './step-aggregate.js';

// Step values 0.5, 1, 0, 0.75 (an ordinal criterion's values), folded by hand.
const values = [0.5, 1, 0, 0.75];

describe('process rewards: step folds by hand', () => {
  test('min, mean and last', () => {
    expect(aggregateSteps(values, { rule: 'min' })).toBe(0);
    expect(aggregateSteps(values, { rule: 'mean' })).toBe(2.25 / 4);
    expect(aggregateSteps(values, { rule: 'last' })).toBe(0.75);
  });

  test('discounted: Σ γ^(k−1)·v_k ÷ Σ γ^(k−1), γ = 1 is the mean', () => {
    // γ = 0.5: (0.5 + 0.5·1 + 0.25·0 + 0.125·0.75) ÷ (1 + 0.5 + 0.25 + 0.125) = 1.09375 ÷ 1.875
    expect(aggregateSteps(values, { rule: 'discounted', gamma: 0.5 })).toBeCloseTo(1.09375 / 1.875, 15);
    expect(aggregateSteps(values, { rule: 'discounted', gamma: 1 })).toBeCloseTo(2.25 / 4, 15);
    expect(stepAggregateName({ rule: 'discounted', gamma: 0.9 })).toBe('discounted(γ=0.9)');
    expect(() => aggregateSteps([], { rule: 'mean' })).toThrow(RangeError);
  });

  test("a step's reward is the step criteria's weighted mean there", () => {
    // 2 points at 1, 1 point at 0.5, a −1 penalty at 1: (2 + 0.5 − 1) ÷ 3.
    expect(stepReward([{ points: 2, value: 1 }, { points: 1, value: 0.5 }, { points: -1, value: 1 }])).toBe(1.5 / 3);
    expect(stepReward([{ points: -1, value: 1 }])).toBeNull();
  });
});
