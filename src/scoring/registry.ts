/**
 * Scorings by name, one entry each (as Vitest registers reporters). A scoring is a pure
 * function of graded items; `rubricate score` re-applies any of them to a results file.
 */
import { createRegistry, type RegistryName } from '../util/registry.js';
import { complianceBinaryScoring, complianceScoring, lengthAdjustedScoring, rarExplicitScoring, ruscarlScoring } from './benchmarks.js';
import { biggenScoring } from './biggen.js';
import { drb2Scoring } from './drb2.js';
import { prbenchClippedScoring } from './prbench.js';
import { profbenchScoring } from './profbench.js';
import { ifevalScoring } from './ifeval.js';
import { multichallengeScoring } from './multichallenge.js';
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

const scorings = createRegistry({ what: 'scoring', field: 'scoring' }, {
  healthbench: healthbenchScoring,
  weighted_mean: weightedMeanScoring,
  normalized: normalizedScoring,
  compliance: complianceScoring,
  compliance_binary: complianceBinaryScoring,
  prbench_clipped: prbenchClippedScoring,
  profbench: profbenchScoring,
  healthbench_length_adjusted: lengthAdjustedScoring('regular'),
  'healthbench_length_adjusted:hard': lengthAdjustedScoring('hard'),
  'healthbench_length_adjusted:consensus': lengthAdjustedScoring('consensus'),
  'healthbench_length_adjusted:professional': lengthAdjustedScoring('professional'),
  ifeval: ifevalScoring,
  ruscarl: ruscarlScoring,
  rar_explicit: rarExplicitScoring,
  biggen: biggenScoring,
  drb2: drb2Scoring,
  multichallenge: multichallengeScoring('mean'),
  'multichallenge:min': multichallengeScoring('min'),
  'multichallenge:max': multichallengeScoring('max'),
  'multichallenge:all': multichallengeScoring('all'),
  'multichallenge:any': multichallengeScoring('any'),
  'multichallenge:weighted': multichallengeScoring('weighted'),
});

/** The built-in scorings' names. */
export type ScoringName = RegistryName<typeof scorings>;

/**
 * Adds a scoring under its own name.
 *
 * @example
 * ```ts
 * import { getScoring, registerScoring } from 'rubricate';
 * registerScoring({ ...getScoring('weighted_mean'), name: 'house_mean', description: 'the weighted mean, under our own name' });
 * ```
 */
export function registerScoring(scoring: Scoring): void {
  scorings.register(scoring.name, scoring);
}

/**
 * The scoring of a name; an unknown one is refused with the known names.
 *
 * @example
 * ```ts
 * import { aggregate, getScoring } from 'rubricate';
 * const metrics = aggregate(getScoring('weighted_mean'), [{ id: 'q1', status: 'ok', criteria: [{ id: 'c1', points: 1, tags: [], status: 'ok', met: true }] }]);
 * ```
 */
export function getScoring(name: ScoringName | (string & {})): Scoring {
  // `healthbench_length_adjusted:0.02` takes an explicit penalty per 500 characters.
  const custom = /^healthbench_length_adjusted:(\d*\.?\d+)$/.exec(name);
  if (custom && !scorings.has(name)) return lengthAdjustedScoring(Number(custom[1]));
  return scorings.get(name);
}

/**
 * The names of every scoring, built in and registered.
 *
 * @example
 * ```ts
 * import { scoringNames } from 'rubricate';
 * console.log(scoringNames().join(', '));
 * ```
 */
export function scoringNames(): string[] {
  return scorings.names();
}

/**
 * Aggregates a finite collection in one go (tests, small runs).
 *
 * @example
 * ```ts
 * import { aggregate, getScoring } from 'rubricate';
 * const metrics = aggregate(getScoring('healthbench'), [{ id: 'q1', status: 'ok', criteria: [{ id: 'c1', points: 5, tags: ['axis:accuracy'], status: 'ok', met: true }] }]);
 * ```
 */
export function aggregate(scoring: Scoring, items: Iterable<ScoredItem>, options?: AggregateOptions): Metrics {
  const aggregator = scoring.createAggregator(options);
  for (const item of items) aggregator.add(item);
  return aggregator.finish();
}
