/**
 * PRBench (scaleapi/PRBench, `evals.py` with `util.get_clipped_points` and
 * `util.get_normalized_points`). Per task: points ÷ Σ positive weights ("clipped", not
 * clipped per task) and (points − Σ negative) ÷ (Σ positive − Σ negative) ("normalized").
 * Reported: `mean_clipped` = max(0, np.mean(per-task ratios)) — the *mean* is clipped, not
 * each task — with `std_clipped` = np.std of the unclipped ratios, and `mean_normalized` /
 * `std_normalized` likewise (no clip).
 */
import { bootstrap, defaultBootstrapSamples, defaultBootstrapSeed } from '../statistics/bootstrap.js';
import { normalizedRatio, pointTotals } from './points.js';
import { numpyMean, numpyStd } from '../statistics/reference-math.js';
import { createTaggedAggregator, scoreItem, type TaggedScoringDefinition } from './tagged.js';
import type { AggregateOptions, Aggregator, Metrics, ScoredCriterion, Scoring } from './types.js';

/** Σ earned points ÷ Σ positive points, unclipped; null without positive points (the reference divides by zero). */
function prbenchRatio(criteria: readonly ScoredCriterion[]): number | null {
  const totals = pointTotals(criteria);
  return totals.positive === 0 ? null : totals.achieved / totals.positive;
}

const definition: TaggedScoringDefinition = { name: 'prbench_clipped', itemScore: prbenchRatio, clipAggregate: false };

/** PRBench's headline statistic: the mean of the per-task ratios, floored at 0. */
const clippedMean = (ratios: number[]) => Math.max(0, numpyMean(ratios));

export const prbenchClippedScoring: Scoring = {
  name: 'prbench_clipped',
  description: 'PRBench: per task Σ earned ÷ Σ positive points; mean_clipped = max(0, mean over tasks), std over tasks; normalized mean and std',
  itemScore: (item) => scoreItem(definition, item),
  createAggregator(options: AggregateOptions = {}): Aggregator {
    const tagged = createTaggedAggregator(definition, options);
    const ratios: number[] = [];
    const normalized: number[] = [];
    return {
      add(item) {
        tagged.add(item);
        if (item.status !== 'ok') return;
        const ratio = scoreItem(definition, item);
        if (ratio === null) return;
        ratios.push(ratio);
        const criteria = item.criteria.filter((criterion) => criterion.status === 'ok');
        const normal = item.gated ? 0 : normalizedRatio(criteria);
        if (normal !== null) normalized.push(normal);
      },
      finish(): Metrics {
        const metrics = tagged.finish();
        if (ratios.length === 0) return metrics;
        const spread = bootstrap(ratios, clippedMean, options.bootstrapSamples ?? defaultBootstrapSamples, options.seed ?? defaultBootstrapSeed);
        return {
          ...metrics,
          overall: { score: clippedMean(ratios), n_samples: ratios.length, bootstrap_std: spread.std, ci95: spread.ci95 },
          extra: {
            prbench: {
              mean_clipped: clippedMean(ratios),
              std_clipped: numpyStd(ratios),
              ...(normalized.length > 0 ? { mean_normalized: numpyMean(normalized), std_normalized: numpyStd(normalized) } : {}),
            },
          },
        };
      },
    };
  },
};
