import { describe, expect, it } from 'vitest';
import { groupAdvantages } from './advantages.js';

describe('groupAdvantages', () => {
  it('GRPO: (r − mean) ÷ (population std + eps), failed members null and left out of the statistics', () => {
    // Valid rewards 1, 0.5, 0: mean 0.5, population std √(0.5 / 3) = 0.408248…
    const advantages = groupAdvantages([1, 0.5, null, 0], 'grpo', 0);
    expect(advantages[2]).toBeNull();
    expect(advantages[0]).toBeCloseTo(1.224744871, 8);
    expect(advantages[1]).toBeCloseTo(0, 12);
    expect(advantages[3]).toBeCloseTo(-1.224744871, 8);
  });

  it('eps enters the denominator', () => {
    // Rewards 2 and 0: mean 1, std 1; with eps 1: (2 − 1) ÷ (1 + 1) = 0.5.
    expect(groupAdvantages([2, 0], 'grpo', 1)).toEqual([0.5, -0.5]);
  });

  it('Dr.GRPO: r − mean without the std', () => {
    expect(groupAdvantages([1, 0.5, null, 0], 'dr_grpo')).toEqual([0.5, 0, null, -0.5]);
    expect(groupAdvantages([0.75, 0.25], 'dr_grpo')).toEqual([0.25, -0.25]);
  });

  it('equal rewards give zero advantages, not a division by zero', () => {
    expect(groupAdvantages([0.5, 0.5, 0.5], 'grpo')).toEqual([0, 0, 0]);
  });

  it('a group with no real reward has no advantages', () => {
    expect(groupAdvantages([null, null], 'grpo')).toEqual([null, null]);
  });

  it('refuses a negative or non-finite eps', () => {
    expect(() => groupAdvantages([1], 'grpo', -1)).toThrowError(/eps/);
    expect(() => groupAdvantages([1], 'grpo', Number.NaN)).toThrowError(/eps/);
  });
});
