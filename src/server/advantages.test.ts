import { describe, expect, it } from 'vitest';
import { groupAdvantages } from './advantages.js';

/** torch.std's default (unbiased, n − 1), written out for the expected values. */
function sampleStd(values: number[]): number {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1));
}

describe('groupAdvantages', () => {
  it('GRPO: (r − mean) ÷ (sample std + eps), failed members null and left out of the statistics', () => {
    // Valid rewards 1, 0.5, 0: mean 0.5, sample std √(0.5 / 2) = 0.5.
    const advantages = groupAdvantages([1, 0.5, null, 0], 'grpo', 0);
    expect(advantages).toEqual([1, 0, null, -1]);
  });

  it('matches TRL (eps 1e-4), verl / slime (1e-6) and OpenRLHF group_norm (1e-9) on a group of 8', () => {
    const rewards = [0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 1];
    const mean = rewards.reduce((sum, value) => sum + value, 0) / rewards.length;
    const std = sampleStd(rewards);
    for (const eps of [1e-4, 1e-6, 1e-9]) {
      const advantages = groupAdvantages(rewards, 'grpo', eps);
      advantages.forEach((advantage, index) => expect(advantage).toBeCloseTo((rewards[index] - mean) / (std + eps), 12));
    }
    // The population std would give advantages larger by √(8/7): the gap the trainers' logs would show.
    expect(groupAdvantages(rewards, 'grpo', 0)[7]).toBeCloseTo((1 - mean) / std, 12);
    expect((1 - mean) / std).toBeLessThan((1 - mean) / Math.sqrt(rewards.reduce((sum, value) => sum + (value - mean) ** 2, 0) / 8));
  });

  it('eps is added to the std, in the denominator', () => {
    // Rewards 2 and 0: mean 1, sample std √2; with eps 1: 1 ÷ (√2 + 1).
    const [high, low] = groupAdvantages([2, 0], 'grpo', 1) as number[];
    expect(high).toBeCloseTo(1 / (Math.SQRT2 + 1), 12);
    expect(low).toBeCloseTo(-1 / (Math.SQRT2 + 1), 12);
  });

  it('Dr.GRPO: r − mean without the std', () => {
    expect(groupAdvantages([1, 0.5, null, 0], 'dr_grpo')).toEqual([0.5, 0, null, -0.5]);
    expect(groupAdvantages([0.75, 0.25], 'dr_grpo')).toEqual([0.25, -0.25]);
  });

  it('equal rewards, or a single real reward, give zero advantages, not a division by zero', () => {
    expect(groupAdvantages([0.5, 0.5, 0.5], 'grpo', 0)).toEqual([0, 0, 0]);
    expect(groupAdvantages([0.5, null], 'grpo')).toEqual([0, null]);
  });

  it('a group with no real reward has no advantages', () => {
    expect(groupAdvantages([null, null], 'grpo')).toEqual([null, null]);
  });

  it('refuses a negative or non-finite eps', () => {
    expect(() => groupAdvantages([1], 'grpo', -1)).toThrowError(/eps/);
    expect(() => groupAdvantages([1], 'grpo', Number.NaN)).toThrowError(/eps/);
  });
});
