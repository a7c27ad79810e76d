import { describe, expect, it } from 'vitest';
import { gdpoAdvantages, groupAdvantages } from './advantages.js';

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

describe('gdpoAdvantages', () => {
  const one = { 'axis:a': 1, 'axis:b': 1 };
  it('the published example: GRPO gives both groups ±0.707, GDPO ±0.548 and ±1.095', () => {
    // Group A: only component a varies; group B: a and b both vary. Two responses each.
    const groupA = { real: [true, true], components: { 'axis:a': [1, 0], 'axis:b': [0, 0] }, weights: one };
    const groupB = { real: [true, true], components: { 'axis:a': [1, 0], 'axis:b': [1, 0] }, weights: one };
    const grpoA = groupAdvantages([1, 0], 'grpo', 0);
    const grpoB = groupAdvantages([2, 0], 'grpo', 0);
    expect(grpoA[0]).toBeCloseTo(Math.SQRT1_2, 12);
    expect(grpoB[0]).toBeCloseTo(Math.SQRT1_2, 12);
    const [a, b] = gdpoAdvantages([groupA, groupB], 0);
    // Per component: ±1/√2 (sample std √½); sums ±1/√2 (A) and ±√2 (B); batch sample std √(5/3).
    const batchStd = Math.sqrt(5 / 3);
    expect(a[0]).toBeCloseTo(Math.SQRT1_2 / batchStd, 12);
    expect(b[0]).toBeCloseTo(Math.SQRT2 / batchStd, 12);
    expect(a[0]).toBeCloseTo(0.548, 3);
    expect(b[0]).toBeCloseTo(1.095, 3);
    expect(a[1]).toBeCloseTo(-0.548, 3);
    expect(b[1]).toBeCloseTo(-1.095, 3);
  });

  it('a constant component adds nothing and the others keep their signal; weights scale a component', () => {
    const constant = { real: [true, true, true, true], components: { 'axis:a': [1, 0, 1, 0], 'axis:b': [1, 1, 1, 1] }, weights: one };
    const [advantages] = gdpoAdvantages([constant], 0);
    // a alone: ±0.5 ÷ √(1/3) = ±√3/2 per member, b 0; the sums' sample std is √(4·¾ ÷ 3) = 1, so they stay ±√3/2.
    expect(advantages).toEqual([1, -1, 1, -1].map((sign) => expect.closeTo((sign * Math.sqrt(3)) / 2, 12)));
    const weighted = { real: [true, true], components: { 'axis:a': [1, 0], 'axis:b': [0, 1] }, weights: { 'axis:a': 3, 'axis:b': 1 } };
    const [result] = gdpoAdvantages([weighted], 0);
    // 3·(±1/√2) + 1·(∓1/√2) = ±√2; whitened over two members: ±1/√2.
    expect(result[0]).toBeCloseTo(Math.SQRT1_2, 12);
    expect(result[1]).toBeCloseTo(-Math.SQRT1_2, 12);
  });

  it('members without a real reward get null and take no part; a null component value is left out of its group', () => {
    const group = { real: [true, false, true, true], components: { 'axis:a': [1, null, 0, null], 'axis:b': [0, null, 1, 1] }, weights: one };
    const [advantages] = gdpoAdvantages([group], 0);
    expect(advantages[1]).toBeNull();
    // a over members 0 and 2: ±1/√2; b over 0, 2, 3: (0, 1, 1) → −2/√3·…; the failed member never shifts a mean.
    const aPart = [Math.SQRT1_2, -Math.SQRT1_2, 0];
    const bMean = 2 / 3;
    const bStd = Math.sqrt(((0 - bMean) ** 2 + 2 * (1 - bMean) ** 2) / 2);
    const sums = [aPart[0] + (0 - bMean) / bStd, aPart[1] + (1 - bMean) / bStd, aPart[2] + (1 - bMean) / bStd];
    const sumMean = (sums[0] + sums[1] + sums[2]) / 3;
    const sumStd = Math.sqrt(sums.reduce((total, value) => total + (value - sumMean) ** 2, 0) / 2);
    expect(advantages[0]).toBeCloseTo((sums[0] - sumMean) / sumStd, 12);
    expect(advantages[2]).toBeCloseTo((sums[1] - sumMean) / sumStd, 12);
    expect(advantages[3]).toBeCloseTo((sums[2] - sumMean) / sumStd, 12);
  });
});

describe('gdpoAdvantages: unscorable members', () => {
  it('a member with a real reward but no component scored gets 0 and stays out of the batch statistics', () => {
    const one = { 'axis:a': 1 };
    const [withIt] = gdpoAdvantages([{ real: [true, true, true], components: { 'axis:a': [1, 0, null] }, weights: one }], 0);
    const [without] = gdpoAdvantages([{ real: [true, true], components: { 'axis:a': [1, 0] }, weights: one }], 0);
    expect(withIt[2]).toBe(0);
    expect(withIt.slice(0, 2)).toEqual(without);
  });
});
