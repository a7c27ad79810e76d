/**
 * Item scores from signed points. HealthBench: Σ points of met criteria ÷ Σ positive points
 * (negative criteria subtract when met, so a score can be below 0). Normalised (PRBench):
 * (achieved − Σ negative) ÷ (Σ positive − Σ negative), always in [0, 1].
 */
import type { ScoredCriterion } from './types.js';

/** How much of a criterion's points were earned: its value, else 1/0 from `met`. */
export function earnedFraction(criterion: ScoredCriterion): number {
  if (typeof criterion.value === 'number') return criterion.value;
  return criterion.met ? 1 : 0;
}

export interface PointTotals {
  achieved: number;
  positive: number;
  negative: number;
}

/** Sums in criterion order, as the reference implementations do (same float results). */
export function pointTotals(criteria: readonly ScoredCriterion[]): PointTotals {
  let achieved = 0;
  let positive = 0;
  let negative = 0;
  for (const criterion of criteria) {
    if (criterion.points > 0) positive += criterion.points;
    else negative += criterion.points;
    const fraction = earnedFraction(criterion);
    if (fraction !== 0) achieved += fraction === 1 ? criterion.points : criterion.points * fraction;
  }
  return { achieved, positive, negative };
}

/** Σ earned points ÷ Σ positive points; null without positive points. */
export function clippedRatio(criteria: readonly ScoredCriterion[]): number | null {
  const totals = pointTotals(criteria);
  if (totals.positive === 0) return null;
  return totals.achieved / totals.positive;
}

/** (achieved − Σ negative) ÷ (Σ positive − Σ negative); null when the range is empty. */
export function normalizedRatio(criteria: readonly ScoredCriterion[]): number | null {
  const totals = pointTotals(criteria);
  const range = totals.positive - totals.negative;
  if (range === 0) return null;
  return (totals.achieved - totals.negative) / range;
}
