/**
 * Group-relative advantages over the responses to one prompt, computed as the trainers do:
 *   grpo     (r − mean) ÷ (std + eps), with the sample standard deviation (n − 1 divisor) and
 *            eps added to the std, as in TRL (`scale_rewards="group"`, eps 1e-4), verl GRPO
 *            (eps 1e-6), OpenRLHF `group_norm` (eps 1e-9) and slime (eps 1e-6). The default eps
 *            is verl's and slime's; pass TRL's or OpenRLHF's to match those exactly.
 *   dr_grpo  r − mean, no std division: Dr. GRPO, OpenRLHF `dr_grpo`, TRL `scale_rewards="none"`.
 * Only members with a real reward take part; failed members get `null`, so a judge failure
 * can neither shift the group mean nor earn an advantage of its own. A single real reward has
 * no spread: its advantage is 0 (r − mean), where the trainers' std would be undefined (NaN).
 */
import { RubricateError } from '../errors.js';
import { mean } from '../statistics/descriptive.js';

export type AdvantageEstimator = 'grpo' | 'dr_grpo';

export const advantageEstimators: readonly AdvantageEstimator[] = ['grpo', 'dr_grpo'];

export const defaultAdvantageEpsilon = 1e-6;

export function groupAdvantages(rewards: ReadonlyArray<number | null>, estimator: AdvantageEstimator, epsilon = defaultAdvantageEpsilon): Array<number | null> {
  if (!(epsilon >= 0) || !Number.isFinite(epsilon)) throw new RubricateError('INPUT_INVALID', `eps must be a finite number ≥ 0, got ${epsilon}`, { field: 'eps' });
  const valid = rewards.filter((reward): reward is number => reward !== null);
  if (valid.length === 0) return rewards.map(() => null);
  const average = mean(valid);
  let squares = 0;
  for (const reward of valid) squares += (reward - average) ** 2;
  // Sample (Bessel-corrected) std, as torch.std's default; one member has no spread.
  const std = valid.length > 1 ? Math.sqrt(squares / (valid.length - 1)) : 0;
  return rewards.map((reward) => {
    if (reward === null) return null;
    if (estimator === 'dr_grpo') return reward - average;
    const centred = reward - average;
    // Equal rewards (or one member) give 0 even with eps 0, never 0 ÷ 0.
    return centred === 0 ? 0 : centred / (std + epsilon);
  });
}
