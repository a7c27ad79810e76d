/**
 * The HealthBench aggregation scheme, parameterised by the per-item score so the other
 * point-based scorings share it: item tags inherit the item score; each criterion tag
 * gets the item score computed over just the criteria carrying it (where that has a
 * positive total); every aggregate is a mean with a seeded bootstrap.
 */
import { bootstrap, defaultBootstrapSamples, defaultBootstrapSeed } from '../statistics/bootstrap.js';
import { clip, mean } from '../statistics/descriptive.js';
import { createStatusTally } from '../statistics/status-tally.js';
import type { AggregateOptions, Aggregator, Metrics, ScoredCriterion, ScoredItem, TagMetric } from './types.js';
import { dictionary } from '../util/dictionary.js';

export interface TaggedScoringDefinition {
  name: string;
  itemScore(criteria: readonly ScoredCriterion[]): number | null;
  /** HealthBench clips every aggregate mean to [0, 1]. */
  clipAggregate: boolean;
  /**
   * The item score when its graded criteria carry no positive points (ResearchRubrics and
   * RuscaRL score such an item 0). Absent: the item is unscorable. Tag scores never use it.
   */
  scoreWithoutPositive?: number;
}

/** Only criteria that were graded count; a gated item keeps its rule-given 0. */
function gradedCriteria(item: ScoredItem): ScoredCriterion[] {
  return item.criteria.filter((criterion) => criterion.status === 'ok');
}

export function scoreItem(definition: TaggedScoringDefinition, item: ScoredItem): number | null {
  if (item.status !== 'ok') return null;
  if (item.gated) return 0;
  return definition.itemScore(gradedCriteria(item)) ?? definition.scoreWithoutPositive ?? null;
}

export function createTaggedAggregator(definition: TaggedScoringDefinition, options: AggregateOptions = {}): Aggregator {
  // Insertion order of names follows first appearance, as in the reference implementation.
  const valuesByName = new Map<string, number[]>();
  const push = (name: string, value: number) => {
    let values = valuesByName.get(name);
    if (!values) valuesByName.set(name, (values = []));
    values.push(value);
  };
  const overall: number[] = [];
  const tally = createStatusTally();

  function add(item: ScoredItem): void {
    if (!tally.admit(item.status)) return;
    const score = scoreItem(definition, item);
    if (score === null) return tally.unscorable();
    overall.push(score);
    const tagScores = new Map<string, number>();
    for (const tag of item.tags ?? []) tagScores.set(tag, score);
    if (!item.gated) {
      const byTag = new Map<string, ScoredCriterion[]>();
      for (const criterion of gradedCriteria(item)) {
        for (const tag of criterion.tags) {
          let list = byTag.get(tag);
          if (!list) byTag.set(tag, (list = []));
          list.push(criterion);
        }
      }
      for (const [tag, criteria] of byTag) {
        const tagScore = definition.itemScore(criteria);
        if (tagScore !== null) tagScores.set(tag, tagScore);
      }
    }
    for (const [tag, value] of tagScores) push(tag, value);
  }

  function finish(): Metrics {
    const byTag = dictionary<TagMetric>();
    for (const [name, values] of valuesByName) byTag[name] = summarizeScores(values, definition.clipAggregate, options);
    return {
      scoring: definition.name,
      overall: overall.length > 0 ? summarizeScores(overall, definition.clipAggregate, options) : null,
      by_tag: byTag,
      ...tally.counts(),
    };
  }

  return { add, finish };
}

/** Mean (optionally clipped to [0, 1]) of item scores, with a seeded bootstrap. */
/** One function for every summary: a fresh closure per call would make the bootstrap's optimised loop drop its code each time. */
const clippedMean = (sample: number[]): number => clip(mean(sample), 0, 1);

export function summarizeScores(values: number[], clipToUnit: boolean, options: AggregateOptions = {}): TagMetric {
  const statistic = clipToUnit ? clippedMean : mean;
  const spread = bootstrap(values, statistic, options.bootstrapSamples ?? defaultBootstrapSamples, options.seed ?? defaultBootstrapSeed);
  return { score: statistic(values), n_samples: values.length, bootstrap_std: spread.std, ci95: spread.ci95 };
}
