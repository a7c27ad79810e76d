/**
 * Benchmark-specific scorings: ResearchRubrics compliance (ternary and its binary view),
 * PRBench clipped, ProfBench's report score, HealthBench's length-adjusted score.
 */
import { bootstrap, clip, defaultBootstrapSamples, defaultBootstrapSeed, mean } from './bootstrap.js';
import { clippedRatio, pointTotals } from './points.js';
import { createTaggedAggregator, scoreItem, summarizeScores, type TaggedScoringDefinition } from './tagged.js';
import type { AggregateOptions, Aggregator, Metrics, ScoredCriterion, ScoredItem, Scoring, TagMetric } from './types.js';

function tagged(definition: TaggedScoringDefinition, description: string): Scoring {
  return {
    name: definition.name,
    description,
    itemScore: (item) => scoreItem(definition, item),
    createAggregator: (options) => createTaggedAggregator(definition, options),
  };
}

/** ResearchRubrics compliance: Σ w·s ÷ Σ positive w with Satisfied 1 / Partially 0.5 / Not 0. */
export const complianceScoring = tagged(
  { name: 'compliance', itemScore: clippedRatio, clipAggregate: false },
  'ResearchRubrics compliance: Σ weight × (1 | 0.5 | 0) ÷ Σ positive weight',
);

/** The binary view: a partially satisfied criterion counts as not satisfied. */
export const complianceBinaryScoring = tagged(
  {
    name: 'compliance_binary',
    itemScore: (criteria) => clippedRatio(criteria.map((criterion) => ({ ...criterion, value: criterion.met ? 1 : 0 }))),
    clipAggregate: false,
  },
  'ResearchRubrics binary compliance: Partially Satisfied counts as Not Satisfied',
);

/** PRBench clipped: Σ earned points ÷ Σ positive points, clipped to [0, 1] per item. */
export const prbenchClippedScoring = tagged(
  {
    name: 'prbench_clipped',
    itemScore: (criteria) => {
      const ratio = clippedRatio(criteria);
      return ratio === null ? null : clip(ratio, 0, 1);
    },
    clipAggregate: false,
  },
  'PRBench clipped: Σ earned points ÷ Σ positive points, clipped to [0, 1] per item',
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

/**
 * ProfBench report score: per task, achieved ÷ maximum weight (Critical 4, Major 3,
 * Minor 2, Additional 1); per domain the mean of its tasks; overall the mean of the
 * domains. The domain comes from a `domain:` tag or `metadata.domain`.
 */
export const profbenchScoring: Scoring = {
  name: 'profbench',
  description: 'ProfBench: per task achieved ÷ max weight; per domain mean; overall = mean of domain means',
  itemScore(item) {
    if (item.status !== 'ok') return null;
    return profbenchTaskScore(item.criteria.filter((criterion) => criterion.status === 'ok'));
  },
  createAggregator(options: AggregateOptions = {}): Aggregator {
    const byDomain = new Map<string, number[]>();
    const counts = { n: 0, ok: 0, error: 0, invalid: 0, unscorable: 0 };
    return {
      add(item) {
        counts.n += 1;
        if (item.status === 'invalid') return void (counts.invalid += 1);
        if (item.status === 'error') return void (counts.error += 1);
        counts.ok += 1;
        const score = profbenchScoring.itemScore(item);
        if (score === null) return void (counts.unscorable += 1);
        const domain = domainOf(item);
        let scores = byDomain.get(domain);
        if (!scores) byDomain.set(domain, (scores = []));
        scores.push(score);
      },
      finish(): Metrics {
        const domains = [...byDomain.keys()].sort();
        const byTag: Record<string, TagMetric> = {};
        for (const domain of domains) byTag[`domain:${domain}`] = summarizeScores(byDomain.get(domain)!, false, options);
        let overall: TagMetric | null = null;
        if (domains.length > 0) {
          // Stratified bootstrap: resample tasks within each domain, keep the domain weights equal.
          const flat: number[] = [];
          const offsets: number[] = [];
          for (const domain of domains) {
            offsets.push(flat.length);
            flat.push(...byDomain.get(domain)!);
          }
          const statistic = () => mean(domains.map((domain) => mean(byDomain.get(domain)!)));
          const sizes = domains.map((domain) => byDomain.get(domain)!.length);
          const spread = bootstrap(
            flat,
            (resample) => mean(sizes.map((size, index) => mean(resample.slice(offsets[index], offsets[index] + size)))),
            options.bootstrapSamples ?? defaultBootstrapSamples,
            options.seed ?? defaultBootstrapSeed,
            (random, length, index) => {
              const domain = offsets.findLastIndex((offset) => offset <= index);
              return offsets[domain] + Math.floor(random() * sizes[domain]);
            },
          );
          overall = { score: statistic(), n_samples: flat.length, bootstrap_std: spread.std, ci95: spread.ci95 };
        }
        return { scoring: 'profbench', overall, by_tag: byTag, n: counts.n, n_ok: counts.ok, n_error: counts.error, n_invalid: counts.invalid, n_unscorable: counts.unscorable };
      },
    };
  },
};

function profbenchTaskScore(criteria: ScoredCriterion[]): number | null {
  const totals = pointTotals(criteria.filter((criterion) => criterion.points > 0));
  return totals.positive === 0 ? null : totals.achieved / totals.positive;
}

function domainOf(item: ScoredItem): string {
  const tag = item.tags?.find((entry) => entry.startsWith('domain:'));
  if (tag) return tag.slice('domain:'.length);
  const domain = item.metadata?.domain;
  return typeof domain === 'string' ? domain : 'all';
}
