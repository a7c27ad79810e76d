/**
 * Process rewards' folds: the per-step values v_1…v_n of a step-scoped criterion (each in
 * [0, 1], in step order) into the criterion's value.
 *   min         min_k v_k
 *   mean        (Σ v_k) ÷ n
 *   last        v_n
 *   discounted  Σ γ^(k−1)·v_k ÷ Σ γ^(k−1): the discounted return from the first step, divided by
 *               its largest possible value so it stays in [0, 1] (γ = 1 is the mean)
 * A step reward (`stepReward`) is the weighted mean of the step criteria's values at that step:
 * Σ points·v ÷ Σ positive points, as `weighted_mean` scores a response.
 */
import type { StepAggregate } from '../rubric/schema.js';
import { mean } from '../statistics/descriptive.js';
import { clippedRatio } from './points.js';

export function aggregateSteps(values: readonly number[], aggregate: StepAggregate): number {
  if (values.length === 0) throw new RangeError('no step values to fold');
  switch (aggregate.rule) {
    case 'min':
      return Math.min(...values);
    case 'mean':
      return mean(values);
    case 'last':
      return values[values.length - 1];
    case 'discounted': {
      let weighted = 0;
      let total = 0;
      let weight = 1;
      for (const value of values) {
        weighted += weight * value;
        total += weight;
        weight *= aggregate.gamma;
      }
      return weighted / total;
    }
  }
}

/** One step's reward from the step criteria's values there; null without positive points. */
export function stepReward(criteria: ReadonlyArray<{ points: number; value: number }>): number | null {
  return clippedRatio(criteria.map((criterion) => ({ id: '', points: criterion.points, tags: [], status: 'ok' as const, met: criterion.value >= 0.5, value: criterion.value })));
}

/** How a fold is written in explanations and results (`discounted(γ=0.9)`). */
export function stepAggregateName(aggregate: StepAggregate): string {
  return aggregate.rule === 'discounted' ? `discounted(γ=${aggregate.gamma})` : aggregate.rule;
}
