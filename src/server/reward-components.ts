/**
 * Named reward components: a response's score split by what it was scored on, for trainers that
 * weigh or normalise objectives apart (NeMo Gym's `reward_components`, GDPO).
 *
 * Which components a rubric has:
 *   declared  the rubric's `reward_components: {name: weight}`; a name is a tag (the criteria
 *             carrying it, e.g. `axis:accuracy`) or `criterion:<id>` (one criterion or check).
 *   default   one per `axis:` tag when any criterion carries one, else one per criterion
 *             (`criterion:<id>`), each of weight 1. The reward is then the scoring's, unchanged.
 * A component's value is the item score (the scoring in use) over its criteria alone (a
 * component of penalties only: minus the share of its penalty points incurred); it is
 * `null`, never 0, when the item failed or none of its criteria was graded (skipped by a gate).
 * With declared components the reward is their weighted sum Σ wᵢ·vᵢ ÷ Σ wᵢ over the components
 * that have a value (weights renormalised over those); a gated item keeps the gate's reward.
 */
import { toScoredItem, type GradedCriterion } from '../results/results.js';
import type { Rubric } from '../rubric/schema.js';
import { pointTotals } from '../scoring/points.js';
import type { Scoring } from '../scoring/types.js';
import type { RewardResult } from './rewards.js';

export const axisTagPrefix = 'axis:';
const criterionPrefix = 'criterion:';

/** The components of a rubric, name → weight, in the rubric's order. */
export function componentWeights(rubric: Rubric): Record<string, number> {
  if (rubric.rewardComponents) return rubric.rewardComponents;
  const weights: Record<string, number> = {};
  let axes = false;
  for (const criterion of rubric.criteria) {
    for (const tag of criterion.tags) {
      if (tag.startsWith(axisTagPrefix)) {
        weights[tag] = 1;
        axes = true;
      }
    }
  }
  if (!axes) for (const criterion of rubric.criteria) weights[`${criterionPrefix}${criterion.id}`] = 1;
  return weights;
}

/** The criteria of each named component, in one pass over the criteria (a criterion may sit in several). */
function criteriaByComponent(criteria: readonly GradedCriterion[], names: readonly string[]): Map<string, GradedCriterion[]> {
  const groups = new Map<string, GradedCriterion[]>(names.map((name) => [name, []]));
  for (const criterion of criteria) {
    groups.get(`${criterionPrefix}${criterion.id}`)?.push(criterion);
    for (const tag of criterion.tags) {
      // As named: `criterion:<id>` picks by id, never by tag; a repeated tag counts the criterion once.
      const group = tag.startsWith(criterionPrefix) ? undefined : groups.get(tag);
      if (group && group[group.length - 1] !== criterion) group.push(criterion);
    }
  }
  return groups;
}

/**
 * A component of penalties only (negative points) has no item score (nothing positive to divide
 * by): its value is then minus the share of its penalty points incurred, in [−1, 0].
 */
function penaltyShare(criteria: readonly GradedCriterion[]): number | null {
  const totals = pointTotals(criteria.filter((criterion) => criterion.status === 'ok'));
  if (totals.positive > 0 || totals.negative === 0) return null;
  return -totals.achieved / totals.negative;
}

/** Each component's value for one result: null where it was not scored. */
export function componentValues(result: RewardResult, names: readonly string[], scoring: Scoring): Record<string, number | null> {
  const values: Record<string, number | null> = {};
  const groups = criteriaByComponent(result.criteria, names);
  for (const name of names) {
    const criteria = groups.get(name) ?? [];
    if (result.status !== 'ok' || result.fallback || !criteria.some((criterion) => criterion.status === 'ok')) {
      values[name] = null;
      continue;
    }
    const score = scoring.itemScore(toScoredItem({ id: result.id, status: 'ok', criteria })) ?? penaltyShare(criteria);
    values[name] = score !== null && Number.isFinite(score) ? score : null;
  }
  return values;
}

/** Σ wᵢ·vᵢ ÷ Σ wᵢ over the components with a value; null when none has one. */
export function weightedComponentSum(values: Record<string, number | null>, weights: Record<string, number>): number | null {
  let total = 0;
  let weightSum = 0;
  for (const [name, weight] of Object.entries(weights)) {
    const value = values[name];
    if (value === null || value === undefined) continue;
    total += weight * value;
    weightSum += weight;
  }
  return weightSum > 0 ? total / weightSum : null;
}

/**
 * Adds `reward_components` (and, where declared, `reward_weights`) to each result, and makes a
 * declared weighted sum the reward. Runs before any fallback is applied: a failed item has no
 * components and keeps its null reward.
 */
export function attachComponents(results: RewardResult[], rubrics: ReadonlyArray<Rubric>, scoring: Scoring): void {
  results.forEach((result, index) => {
    const rubric = rubrics[index];
    const weights = componentWeights(rubric);
    const values = componentValues(result, Object.keys(weights), scoring);
    result.reward_components = values;
    if (!rubric.rewardComponents) return;
    result.reward_weights = weights;
    if (result.status !== 'ok' || result.gated) return;
    const sum = weightedComponentSum(values, weights);
    if (sum !== null) result.reward = sum;
  });
}
