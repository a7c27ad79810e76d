/**
 * IFEval scoring: an item's score is the share of its instructions followed (every
 * instruction is worth 1); the aggregate adds IFEval's prompt-level and
 * instruction-level accuracies with per-instruction and per-group breakdowns.
 */
import { ifevalMetrics } from '../checks/ifeval-metrics.js';
import { clippedRatio } from './points.js';
import { createTaggedAggregator, scoreItem, type TaggedScoringDefinition } from './tagged.js';
import type { AggregateOptions, Aggregator, Metrics, Scoring } from './types.js';

const definition: TaggedScoringDefinition = { name: 'ifeval', itemScore: clippedRatio, clipAggregate: false };

export const ifevalScoring: Scoring = {
  name: 'ifeval',
  description: 'IFEval: share of instructions followed per prompt; prompt-level and instruction-level accuracy',
  itemScore: (item) => scoreItem(definition, item),
  createAggregator(options: AggregateOptions = {}): Aggregator {
    const tagged = createTaggedAggregator(definition, options);
    const prompts: Array<{ instructionIds: string[]; followed: boolean[] }> = [];
    return {
      add(item) {
        tagged.add(item);
        if (item.status !== 'ok') return;
        // A conditional instruction not applicable is no instruction of the prompt (a gated item keeps every instruction, unfollowed).
        const graded = item.gated ? item.criteria : item.criteria.filter((criterion) => criterion.status !== 'skipped');
        if (graded.length === 0) return;
        prompts.push({ instructionIds: graded.map((criterion) => criterion.id), followed: graded.map((criterion) => criterion.met === true) });
      },
      finish(): Metrics {
        const metrics = tagged.finish();
        return prompts.length > 0 ? { ...metrics, extra: { ifeval: ifevalMetrics(prompts) } } : metrics;
      },
    };
  },
};
