import { describe, expect, it } from 'vitest';
import { lengthTerms, shapeGroup, shapingSchema, zeroVariance, type ShapingMember } from './shaping.js';

const members = (rewards: Array<number | null>, extra: Partial<ShapingMember>[] = []): ShapingMember[] =>
  rewards.map((reward, index) => ({ reward, length: 100, hardRuleFailed: false, ...extra[index] }));

const shaping = (value: unknown) => shapingSchema.parse(value);

describe('reward shaping', () => {
  it('mixes outcome and rubric rewards as CaRR does: (1 − λ)·outcome + λ·rubric', () => {
    const shaped = shapeGroup(members([0.5, 1, 0], [{ outcome: 1 }, { outcome: 0 }, { outcome: 1 }]), shaping({ outcome_mix: { lambda: 0.25 } }));
    // 0.75·1 + 0.25·0.5, 0.75·0 + 0.25·1, 0.75·1 + 0.25·0.
    expect(shaped.rewards).toEqual([0.875, 0.25, 0.75]);
    expect(shaped.record.outcome_mix).toEqual({ lambda: 0.25, formula: '(1 - lambda) * outcome + lambda * rubric' });
  });

  it('adds Kimi k1.5’s group-relative length term: 0.5 − (len − min) ÷ (max − min), at most 0 for a response that does not pass', () => {
    const group = members([1, 0.8, 0.2, 0.6], [{ length: 100 }, { length: 200 }, { length: 300 }, { length: 500 }]);
    // λ = 0.5, 0.25, 0, −0.5; the third does not pass (0.2 < 0.5), so its term is min(0, 0) = 0.
    const shaped = shapeGroup(group, shaping({ length_penalty: {} }));
    expect(shaped.rewards[0]).toBeCloseTo(1.5, 12);
    expect(shaped.rewards[1]).toBeCloseTo(1.05, 12);
    expect(shaped.rewards[2]).toBeCloseTo(0.2, 12);
    expect(shaped.rewards[3]).toBeCloseTo(0.1, 12);
    expect(shaped.record.length_penalty).toMatchObject({ weight: 1, pass_threshold: 0.5, passed: [true, true, false, true], terms: [0.5, 0.25, 0, -0.5] });
    // A weight scales the term; a response that fails the pass keeps a negative term.
    const weighted = shapeGroup(members([0.2, 0.9], [{ length: 10 }, { length: 30 }]), shaping({ length_penalty: { weight: 0.1 } }));
    expect(weighted.rewards[0]).toBeCloseTo(0.2, 12);
    expect(weighted.rewards[1]).toBeCloseTo(0.9 - 0.05, 12);
  });

  it('passes on the outcome when one is given, and leaves failed members out of the lengths', () => {
    expect(lengthTerms(members([1, null, 0.5], [{ length: 10 }, { length: 1000 }, { length: 20 }]), [true, null, true])).toEqual([0.5, null, -0.5]);
    expect(lengthTerms(members([1, 1], [{ length: 7 }, { length: 7 }]), [true, false])).toEqual([0, 0]);
    const shaped = shapeGroup(members([0.9, 0.9], [{ length: 10, outcome: 0 }, { length: 20, outcome: 1 }]), shaping({ length_penalty: {} }));
    // The first does not pass on its outcome (0): its positive λ 0.5 becomes min(0, 0.5) = 0.
    expect(shaped.rewards).toEqual([0.9, 0.4]);
  });

  it('vetoes a response whose hard rule was not met, after the other steps', () => {
    const group = members([0.8, 0.9, 0.1], [{ length: 10 }, { length: 20, hardRuleFailed: true }, { length: 30 }]);
    const shaped = shapeGroup(group, shaping({ length_penalty: { weight: 0 }, veto: { value: -1 } }));
    expect(shaped.rewards).toEqual([0.8, -1, 0.1]);
    expect(shaped.record.veto).toEqual({ value: -1, vetoed: [false, true, false] });
  });

  it('flags a group whose shaped rewards are all equal', () => {
    expect(zeroVariance([0.5, 0.5, null])).toBe(true);
    expect(zeroVariance([0.1 + 0.2, 0.3])).toBe(true);
    expect(zeroVariance([0.5, 0.6])).toBe(false);
    expect(zeroVariance([null])).toBe(true);
    expect(shapeGroup(members([1, 1, 1]), shaping({})).zeroVariance).toBe(true);
    // Shaping can give a flat group spread (and the reverse).
    expect(shapeGroup(members([1, 1], [{ length: 1 }, { length: 2 }]), shaping({ length_penalty: {} })).zeroVariance).toBe(false);
  });

  it('refuses unknown steps and settings at the edge', () => {
    expect(shapingSchema.safeParse({ length_penalty: { weigth: 1 } }).success).toBe(false);
    expect(shapingSchema.safeParse({ outcome_mix: { lambda: 2 } }).success).toBe(false);
    expect(shapingSchema.safeParse({ clip: true }).success).toBe(false);
  });
});
