/**
 * Reward shaping over the responses to one prompt, each step opt-in and recorded in the
 * answer, applied in this order to the members with a real reward (failed and fallback
 * members are left as they are and take no part in any group statistic):
 *
 *   1. outcome mixing (CaRR):  r ← (1 − λ)·outcome + λ·r,  outcome ∈ [0, 1] given per response;
 *   2. group-relative length penalty (Kimi k1.5's, arXiv:2501.12599): with the group's
 *      shortest and longest lengths, λᵢ = 0.5 − (lenᵢ − min) ÷ (max − min), and
 *      r ← r + w·λᵢ for a passing response, r ← r + w·min(0, λᵢ) for one that does not pass
 *      (Kimi: correct / incorrect; here: outcome ≥ 0.5 when outcomes are given, else the
 *      rubric reward ≥ the threshold, default 0.5); 0 for everyone when all lengths are equal;
 *   3. veto by hard rules (Rubicon's gatekeeper criteria): a response whose hard-rule criterion
 *      was graded not met gets the veto value (default 0), whatever its other criteria say.
 *
 * `zero_variance` says whether the shaped rewards of the group are all equal: GRPO's
 * advantages are then all 0 and the group teaches nothing (prime-rl filters such groups).
 * Advantages, when asked, are computed from the shaped rewards.
 */
import { z } from 'zod';

export const shapingSchema = z.strictObject({
  outcome_mix: z.strictObject({ lambda: z.number().min(0).max(1) }).optional(),
  length_penalty: z
    .strictObject({
      /** Weight w of the length term (Kimi adds it to the reward as is: w = 1). */
      weight: z.number().min(0).default(1),
      /** A response passes at or above this rubric reward (without outcomes). */
      pass_threshold: z.number().default(0.5),
    })
    .optional(),
  veto: z.strictObject({ value: z.number().default(0) }).optional(),
  /** Per-axis rewards: each response's score over its criteria tagged `<prefix><axis>` (MR-RML's reward vectors). */
  axes: z.strictObject({ prefix: z.string().min(1).default('axis:') }).optional(),
});

export type Shaping = z.output<typeof shapingSchema>;

export interface ShapingMember {
  /** The raw reward; null when the member failed (or its reward is a fallback). */
  reward: number | null;
  /** Response length (tokens as the trainer counts them, else characters). */
  length: number;
  /** The task outcome in [0, 1], when the trainer gives one. */
  outcome?: number | null;
  /** A hard-rule criterion of the rubric was graded not met. */
  hardRuleFailed: boolean;
}

export interface ShapedGroup {
  rewards: Array<number | null>;
  zeroVariance: boolean;
  /** What each applied step did, per member (null for members left out), for the answer. */
  record: Record<string, unknown>;
}

/** Equal within rounding: rewards summed from the same points can differ in the last bit. */
const tolerance = 1e-12;

/** Kimi k1.5's length term of each member (null for members without a reward). */
export function lengthTerms(members: readonly ShapingMember[], passes: ReadonlyArray<boolean | null>): Array<number | null> {
  const lengths = members.filter((member, index) => passes[index] !== null).map((member) => member.length);
  const shortest = Math.min(...lengths);
  const longest = Math.max(...lengths);
  return members.map((member, index) => {
    const passed = passes[index];
    if (passed === null) return null;
    if (longest === shortest) return 0;
    const lambda = 0.5 - (member.length - shortest) / (longest - shortest);
    return passed ? lambda : Math.min(0, lambda);
  });
}

/** Whether the real rewards of a group are all equal (a group of one, or none, included). */
export function zeroVariance(rewards: ReadonlyArray<number | null>): boolean {
  const real = rewards.filter((reward): reward is number => reward !== null);
  if (real.length === 0) return true;
  return Math.max(...real) - Math.min(...real) <= tolerance;
}

export function shapeGroup(members: readonly ShapingMember[], shaping: Shaping): ShapedGroup {
  let rewards = members.map((member) => member.reward);
  const record: Record<string, unknown> = {};
  if (shaping.outcome_mix) {
    const { lambda } = shaping.outcome_mix;
    rewards = rewards.map((reward, index) => {
      const outcome = members[index].outcome;
      return reward === null || outcome === null || outcome === undefined ? null : (1 - lambda) * outcome + lambda * reward;
    });
    record.outcome_mix = { lambda, formula: '(1 - lambda) * outcome + lambda * rubric' };
  }
  if (shaping.length_penalty) {
    const { weight, pass_threshold: threshold } = shaping.length_penalty;
    const passes = rewards.map((reward, index) => {
      if (reward === null) return null;
      const outcome = members[index].outcome;
      return outcome !== undefined && outcome !== null ? outcome >= 0.5 : reward >= threshold;
    });
    const terms = lengthTerms(members, passes);
    rewards = rewards.map((reward, index) => (reward === null ? null : reward + weight * terms[index]!));
    record.length_penalty = { weight, pass_threshold: threshold, source: 'Kimi k1.5 length penalty (arXiv:2501.12599)', lengths: members.map((member) => member.length), passed: passes, terms };
  }
  if (shaping.veto) {
    const { value } = shaping.veto;
    const vetoed = members.map((member, index) => (rewards[index] === null ? null : member.hardRuleFailed));
    rewards = rewards.map((reward, index) => (reward === null ? null : vetoed[index] ? value : reward));
    record.veto = { value, vetoed };
  }
  return { rewards, zeroVariance: zeroVariance(rewards), record };
}
