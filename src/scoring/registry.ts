/**
 * Scorings by name, one entry each (as Vitest registers reporters). A scoring is a pure
 * function of graded items; `rubricate score` re-applies any of them to a results file.
 */
import { RubricateError } from '../errors.js';
import { complianceBinaryScoring, complianceScoring, lengthAdjustedScoring, rarExplicitScoring, ruscarlScoring } from './benchmarks.js';
import { biggenScoring } from './biggen.js';
import { drb2Scoring } from './drb2.js';
import { prbenchClippedScoring } from './prbench.js';
import { profbenchScoring } from './profbench.js';
import { ifevalScoring } from './ifeval.js';
import { clippedRatio, normalizedRatio } from './points.js';
import { createTaggedAggregator, scoreItem, type TaggedScoringDefinition } from './tagged.js';
import type { AggregateOptions, Metrics, ScoredItem, Scoring } from './types.js';

function taggedScoring(definition: TaggedScoringDefinition, description: string): Scoring {
  return {
    name: definition.name,
    description,
    itemScore: (item) => scoreItem(definition, item),
    createAggregator: (options) => createTaggedAggregator(definition, options),
  };
}

export const healthbenchScoring = taggedScoring(
  { name: 'healthbench', itemScore: clippedRatio, clipAggregate: true },
  'HealthBench (simple-evals): Σ points met ÷ Σ positive points per item; per-tag the same over tagged criteria; means clipped to [0, 1], bootstrap std',
);

export const weightedMeanScoring = taggedScoring(
  { name: 'weighted_mean', itemScore: clippedRatio, clipAggregate: false },
  'Σ weight × score ÷ Σ positive weight per item (ResearchRubrics compliance, RaR explicit); plain means',
);

export const normalizedScoring = taggedScoring(
  { name: 'normalized', itemScore: normalizedRatio, clipAggregate: false },
  '(points − Σ negative) ÷ (Σ positive − Σ negative) per item, in [0, 1] (PRBench normalised)',
);

const scorings = new Map<string, Scoring>();

export function registerScoring(scoring: Scoring): void {
  scorings.set(scoring.name, scoring);
}

for (const scoring of [
  healthbenchScoring,
  weightedMeanScoring,
  normalizedScoring,
  complianceScoring,
  complianceBinaryScoring,
  prbenchClippedScoring,
  profbenchScoring,
  lengthAdjustedScoring('regular'),
  lengthAdjustedScoring('hard'),
  lengthAdjustedScoring('consensus'),
  lengthAdjustedScoring('professional'),
  ifevalScoring,
  ruscarlScoring,
  rarExplicitScoring,
  biggenScoring,
  drb2Scoring,
]) {
  registerScoring(scoring);
}

export function getScoring(name: string): Scoring {
  // `healthbench_length_adjusted:0.02` takes an explicit penalty per 500 characters.
  const custom = /^healthbench_length_adjusted:(\d*\.?\d+)$/.exec(name);
  if (custom && !scorings.has(name)) return lengthAdjustedScoring(Number(custom[1]));
  const scoring = scorings.get(name);
  if (!scoring) {
    throw new RubricateError('CONFIG_INVALID', `unknown scoring "${name}" (known: ${[...scorings.keys()].join(', ')})`, { field: 'scoring' });
  }
  return scoring;
}

export function scoringNames(): string[] {
  return [...scorings.keys()];
}

/** Aggregates a finite collection in one go (tests, small runs). */
export function aggregate(scoring: Scoring, items: Iterable<ScoredItem>, options?: AggregateOptions): Metrics {
  const aggregator = scoring.createAggregator(options);
  for (const item of items) aggregator.add(item);
  return aggregator.finish();
}
