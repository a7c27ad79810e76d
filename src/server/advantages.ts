/**
 * Group-relative advantages over the responses to one prompt:
 *   grpo     (r − mean) ÷ (std + eps), population std (GRPO as in verl / OpenRLHF group_norm)
 *   dr_grpo  r − mean, no std division (Dr. GRPO)
 * Only members with a real reward take part; failed members get `null`, so a judge failure
 * can neither shift the group mean nor earn an advantage of its own.
 */
import { RubricateError } from '../errors.js';

export type AdvantageEstimator = 'grpo' | 'dr_grpo';

export const advantageEstimators: readonly AdvantageEstimator[] = ['grpo', 'dr_grpo'];

export const defaultAdvantageEpsilon = 1e-6;

export function groupAdvantages(rewards: ReadonlyArray<number | null>, estimator: AdvantageEstimator, epsilon = defaultAdvantageEpsilon): Array<number | null> {
  if (!(epsilon >= 0) || !Number.isFinite(epsilon)) throw new RubricateError('INPUT_INVALID', `eps must be a finite number ≥ 0, got ${epsilon}`, { field: 'eps' });
  const valid = rewards.filter((reward): reward is number => reward !== null);
  if (valid.length === 0) return rewards.map(() => null);
  let sum = 0;
  for (const reward of valid) sum += reward;
  const mean = sum / valid.length;
  let squares = 0;
  for (const reward of valid) squares += (reward - mean) ** 2;
  const std = Math.sqrt(squares / valid.length);
  return rewards.map((reward) => {
    if (reward === null) return null;
    return estimator === 'dr_grpo' ? reward - mean : (reward - mean) / (std + epsilon);
  });
}
