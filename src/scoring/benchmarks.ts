/**
 * Benchmark-specific scorings: ResearchRubrics compliance (ternary and its binary view),
 * RuscaRL's reward, RaR's explicit reward, HealthBench's length-adjusted score. PRBench,
 * ProfBench, BiGGen and DeepResearch Bench II have files of their own.
 */
import { clippedRatio, earnedFraction } from './points.js';
import { createTaggedAggregator, scoreItem, summarizeScores, type TaggedScoringDefinition } from './tagged.js';
import type { AggregateOptions, Aggregator, Metrics, ScoredCriterion, ScoredItem, Scoring } from './types.js';

function tagged(definition: TaggedScoringDefinition, description: string): Scoring {
  return {
    name: definition.name,
    description,
    itemScore: (item) => scoreItem(definition, item),
    createAggregator: (options) => createTaggedAggregator(definition, options),
  };
}

/**
 * ResearchRubrics compliance (scaleapi/researchrubrics, `calculate_compliance_score.py`):
 * Σ w·s ÷ Σ positive w with Satisfied 1 / Partially 0.5 / Not 0; a rubric with no positive
 * weight scores 0, as the reference's `if denominator > 0 else 0.0` does.
 */
export const complianceScoring = tagged(
  { name: 'compliance', itemScore: clippedRatio, clipAggregate: false, scoreWithoutPositive: 0 },
  'ResearchRubrics compliance: Σ weight × (1 | 0.5 | 0) ÷ Σ positive weight; 0 without positive weight',
);

/** The binary view: a partially satisfied criterion counts as not satisfied. */
export const complianceBinaryScoring = tagged(
  {
    name: 'compliance_binary',
    itemScore: (criteria) => clippedRatio(criteria.map((criterion) => ({ ...criterion, value: criterion.met ? 1 : 0 }))),
    clipAggregate: false,
    scoreWithoutPositive: 0,
  },
  'ResearchRubrics binary compliance: Partially Satisfied counts as Not Satisfied; 0 without positive weight',
);

/**
 * RuscaRL (`health_bench/healthbench_reward_fn.py`, `calculate_score`): Σ points of met
 * criteria ÷ Σ positive points per item, 0 when there are no positive points; no clipping.
 */
export const ruscarlScoring = tagged(
  { name: 'ruscarl', itemScore: clippedRatio, clipAggregate: false, scoreWithoutPositive: 0 },
  'RuscaRL reward: Σ points met ÷ Σ positive points per item (0 without positive points); plain means',
);

/**
 * RaR explicit reward (Rubrics as Rewards, Eq. 1): Σ w·c ÷ Σ w over ALL weights, pitfalls
 * (negative weights) included in the denominator. The formula is undefined for Σ w = 0 and
 * flips sign for Σ w < 0, so such an item is unscorable rather than given a number.
 */
export function rarExplicitRatio(criteria: readonly ScoredCriterion[]): number | null {
  let achieved = 0;
  let total = 0;
  for (const criterion of criteria) {
    total += criterion.points;
    achieved += criterion.points * earnedFraction(criterion);
  }
  return total > 0 ? achieved / total : null;
}

export const rarExplicitScoring = tagged(
  { name: 'rar_explicit', itemScore: rarExplicitRatio, clipAggregate: false },
  'RaR explicit (Eq. 1): Σ weight × met ÷ Σ of all weights (negative included); plain means',
);

/**
 * HealthBench length adjustment (simple-evals, newer upstream): an item's score moves by
 * `penaltyPer500` for every 500 characters its response is longer (or shorter) than
 * `center`; the aggregate is the clipped mean as usual. Coefficients per variant.
 */
export const lengthAdjustmentCoefficients = { regular: 0.0299, hard: 0.0392, consensus: 0.002, professional: 0.0147 } as const;
export const lengthAdjustmentCenter = 2000;

export function lengthAdjustedScoring(variant: keyof typeof lengthAdjustmentCoefficients | number = 'regular', center = lengthAdjustmentCenter): Scoring {
  const penaltyPer500 = typeof variant === 'number' ? variant : lengthAdjustmentCoefficients[variant];
  const name = typeof variant === 'number' ? `healthbench_length_adjusted:${variant}` : variant === 'regular' ? 'healthbench_length_adjusted' : `healthbench_length_adjusted:${variant}`;
  const plain: TaggedScoringDefinition = { name: 'healthbench', itemScore: clippedRatio, clipAggregate: true };
  const adjust = (item: ScoredItem): number | null => {
    const score = scoreItem(plain, item);
    if (score === null || item.responseCharacters === undefined) return null;
    return score - penaltyPer500 * ((item.responseCharacters - center) / 500);
  };
  return {
    name,
    description: `HealthBench score adjusted by ${penaltyPer500} per 500 characters of response length beyond ${center}; tags unadjusted`,
    itemScore: adjust,
    createAggregator(options: AggregateOptions = {}): Aggregator {
      const tags = createTaggedAggregator(plain, options);
      const adjusted: number[] = [];
      let missingLength = 0;
      return {
        add(item) {
          tags.add(item);
          if (item.status !== 'ok') return;
          const value = adjust(item);
          if (value !== null) adjusted.push(value);
          else if (item.responseCharacters === undefined) missingLength += 1;
        },
        finish(): Metrics {
          const metrics = tags.finish();
          return {
            ...metrics,
            scoring: name,
            overall: adjusted.length > 0 ? summarizeScores(adjusted, true, options) : null,
            extra: { unadjusted: metrics.overall, penalty_per_500_chars: penaltyPer500, center_chars: center, items_without_length: missingLength },
          };
        },
      };
    },
  };
}
