/**
 * `--failed-as-zero`: count a failed judge call as "not met", the way ResearchRubrics
 * (a failed evaluation scores 0), RuscaRL (`criteria_met: False` after its retries) and
 * AdvancedIF do, for users who must reproduce a leaderboard. Never the default: by default
 * an item with a failed criterion has no score. When used, the metrics say how many items
 * and criteria were counted this way; the results lines themselves are left as they are.
 */
import type { Aggregator, ScoredItem, Scoring } from './types.js';

/** The item with every failed criterion turned into a graded "not met"; null when nothing failed. */
export function failedAsNotMet(item: ScoredItem): { item: ScoredItem; criteria: number } | null {
  if (item.status !== 'error') return null;
  let converted = 0;
  const criteria = item.criteria.map((criterion) => {
    if (criterion.status !== 'error') return criterion;
    converted += 1;
    return { ...criterion, status: 'ok' as const, met: false, value: 0, label: undefined };
  });
  // An item that failed as a whole (no criterion in error) stays an error.
  if (converted === 0) return null;
  return { item: { ...item, status: 'ok', criteria }, criteria: converted };
}

/**
 * The scoring, counting failed judge calls as "not met" and reporting how many were.
 *
 * @example
 * ```ts
 * import { getScoring, scoreFile, withFailedAsZero } from 'rubricate';
 * const { metrics } = await scoreFile('results.jsonl', { scoring: withFailedAsZero(getScoring('weighted_mean')) });
 * ```
 */
export function withFailedAsZero(scoring: Scoring): Scoring {
  return {
    ...scoring,
    description: `${scoring.description} (failed judge calls counted as not met)`,
    // A results line keeps its truthful status and no score; only the metrics count the failures.
    itemScore: (item) => scoring.itemScore(item),
    createAggregator(options): Aggregator {
      const inner = scoring.createAggregator(options);
      const counted = { items: 0, criteria: 0 };
      return {
        add(item) {
          const converted = failedAsNotMet(item);
          if (converted) {
            counted.items += 1;
            counted.criteria += converted.criteria;
          }
          inner.add(converted?.item ?? item);
        },
        finish() {
          return { ...inner.finish(), failed_as_zero: counted };
        },
      };
    },
  };
}
