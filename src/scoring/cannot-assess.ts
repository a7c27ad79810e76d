/**
 * Abstentions in the metrics (`--abstain`): criteria the judge could not assess, and the items
 * that hold them, counted apart from errors. The policy has already set what each one scores
 * (on the results line); this only counts them, so a run without abstentions has the same
 * metrics as before, key for key.
 */
import type { Aggregator, Scoring } from './types.js';

export function countingCannotAssess(scoring: Scoring): Scoring {
  return {
    ...scoring,
    createAggregator(options): Aggregator {
      const inner = scoring.createAggregator(options);
      const counted = { items: 0, criteria: 0 };
      return {
        add(item) {
          const criteria = item.criteria.filter((criterion) => criterion.cannotAssess).length;
          if (criteria > 0) {
            counted.items += 1;
            counted.criteria += criteria;
          }
          inner.add(item);
        },
        finish() {
          const metrics = inner.finish();
          return counted.criteria > 0 ? { ...metrics, cannot_assess: counted } : metrics;
        },
      };
    },
  };
}
