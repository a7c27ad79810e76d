/**
 * Group-relative advantages over the responses to one prompt, computed as the trainers do:
 *   grpo     (r − mean) ÷ (std + eps), with the sample standard deviation (n − 1 divisor) and
 *            eps added to the std, as in TRL (`scale_rewards="group"`, eps 1e-4), verl GRPO
 *            (eps 1e-6), OpenRLHF `group_norm` (eps 1e-9) and slime (eps 1e-6). The default eps
 *            is verl's and slime's; pass TRL's or OpenRLHF's to match those exactly.
 *   dr_grpo  r − mean, no std division: Dr. GRPO, OpenRLHF `dr_grpo`, TRL `scale_rewards="none"`.
 *   gdpo     over a batch of groups (`gdpoAdvantages`): each named reward component normalised
 *            within its group as grpo does, their weighted sum per response, then that sum
 *            whitened over the batch ((A − batch mean) ÷ (batch sample std + eps)), as TRL's GDPO
 *            (`multi_objective_aggregation="normalize_then_sum"`) and the GDPO paper do.
 * Only members with a real reward take part; failed members get `null`, so a judge failure
 * can neither shift the group mean nor earn an advantage of its own. A single real reward has
 * no spread: its advantage is 0 (r − mean), where the trainers' std would be undefined (NaN).
 */
import { RubricateError } from '../errors.js';
import { mean } from '../statistics/descriptive.js';

export type AdvantageEstimator = 'grpo' | 'dr_grpo';

/** Estimators of `/v1/score/groups`: the per-group ones, and GDPO, which needs the batch. */
export type BatchAdvantageEstimator = AdvantageEstimator | 'gdpo';

export const batchAdvantageEstimators: readonly BatchAdvantageEstimator[] = ['grpo', 'dr_grpo', 'gdpo'];

export const advantageEstimators: readonly AdvantageEstimator[] = ['grpo', 'dr_grpo'];

export const defaultAdvantageEpsilon = 1e-6;

/**
 * A group's advantages from its rewards (GRPO, Dr. GRPO); a null reward stays null and takes no part.
 *
 * @example
 * ```ts
 * import { groupAdvantages } from 'rubricate/server';
 * const advantages = groupAdvantages([0.2, 0.9, null, 0.5], 'grpo'); // null stays null
 * ```
 */
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

/** One group's members for GDPO: which have a real reward, and each component's values (null where not scored). */
export interface ComponentGroup {
  real: readonly boolean[];
  components: Readonly<Record<string, ReadonlyArray<number | null>>>;
  weights: Readonly<Record<string, number>>;
}

/**
 * GDPO advantages for a batch of groups, one array per group. A component's null value (not
 * scored) takes no part in its group's mean and std and adds nothing to the member's sum, as
 * NaN rewards under nanmean / nansum; a member without a real reward gets null, and one with no
 * component scored 0, both out of the batch whitening. TRL's eps is 1e-4. A constant component normalises to 0 in its group, so the others
 * keep their whole signal.
 */
export function gdpoAdvantages(groups: readonly ComponentGroup[], epsilon = defaultAdvantageEpsilon): Array<Array<number | null>> {
  // Members with a real reward but no component scored carry no signal: advantage 0, out of the batch statistics (TRL's "unscorable").
  const unscorable = groups.map(({ real, components }) => real.map((isReal, index) => isReal && Object.values(components).every((values) => values[index] === null || values[index] === undefined)));
  const sums = groups.map(({ real, components, weights }, group) => {
    const total: Array<number | null> = real.map((isReal, index) => (isReal && !unscorable[group][index] ? 0 : null));
    for (const [name, weight] of Object.entries(weights)) {
      const values = (components[name] ?? []).map((value, index) => (total[index] !== null ? value : null));
      groupAdvantages(values, 'grpo', epsilon).forEach((advantage, index) => {
        const current = total[index];
        if (current !== null && advantage !== null) total[index] = current + weight * advantage;
      });
    }
    return total;
  });
  const whitened = groupAdvantages(sums.flat(), 'grpo', epsilon);
  let offset = 0;
  return sums.map((group, index) => {
    const slice = whitened.slice(offset, offset + group.length);
    offset += group.length;
    return slice.map((advantage, member) => (unscorable[index][member] ? 0 : advantage));
  });
}
