/**
 * MultiChallenge's rubric aggregation, as NeMo Gym's `multichallenge` resources server computes
 * its reward (`_aggregate_scores`): each question scores 1 when the judge's yes/no matches its
 * passing answer (a criterion tagged `pass_criteria:NO` passes when not met), else 0; the item's
 * reward is, by the server's `aggregation_mode`:
 *
 * - `mean` (its default): Σ scores ÷ count;   - `min`: the lowest;   - `max`: the highest;
 * - `all`: 1 when every score is ≥ 0.99, else 0;   - `any`: 1 when one is;
 * - `weighted`: Σ score × weight ÷ Σ weight, 0 when the weights add up to 0 (weights are the criteria's points).
 *
 * `multichallenge` is the mean; `multichallenge:min` and the others name the mode. The run's score
 * is the mean reward, with a bootstrap, overall and per item tag (`topic:`, `challenge:`). Unlike
 * the reference, which counts an unreadable judge reply as NO, an item with a criterion in error
 * has no score (it is counted in `n_error`).
 */
import { createStatusTally } from '../statistics/status-tally.js';
import { dictionary } from '../util/dictionary.js';
import type { AggregateOptions, Aggregator, Metrics, ScoredCriterion, ScoredItem, Scoring, TagMetric } from './types.js';
import { summarizeScores } from './tagged.js';

export const multichallengeModes = ['mean', 'min', 'max', 'all', 'any', 'weighted'] as const;
export type MultichallengeMode = (typeof multichallengeModes)[number];

/** The tag of a question whose passing answer is NO (the importer sets it). */
export const passesOnNoTag = 'pass_criteria:NO';

/** 1 when the verdict is the question's passing answer. */
function questionScore(criterion: ScoredCriterion): number {
  const passesOnNoAnswer = criterion.tags.includes(passesOnNoTag);
  return criterion.met === !passesOnNoAnswer ? 1 : 0;
}

/** The reward of one item's question scores under a mode. */
export function aggregateQuestions(scores: readonly number[], weights: readonly number[], mode: MultichallengeMode): number {
  if (scores.length === 0) return 0;
  if (mode === 'mean') return scores.reduce((sum, score) => sum + score, 0) / scores.length;
  if (mode === 'min') return Math.min(...scores);
  if (mode === 'max') return Math.max(...scores);
  if (mode === 'all') return scores.every((score) => score >= 0.99) ? 1 : 0;
  if (mode === 'any') return scores.some((score) => score >= 0.99) ? 1 : 0;
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  if (total === 0) return 0;
  let weighted = 0;
  for (let index = 0; index < scores.length; index += 1) weighted += scores[index] * weights[index];
  return weighted / total;
}

function itemReward(item: ScoredItem, mode: MultichallengeMode): number | null {
  if (item.status !== 'ok') return null;
  const graded = item.criteria.filter((criterion) => criterion.status === 'ok');
  if (graded.length === 0) return null;
  return aggregateQuestions(graded.map(questionScore), graded.map((criterion) => criterion.points), mode);
}

export function multichallengeScoring(mode: MultichallengeMode): Scoring {
  const name = mode === 'mean' ? 'multichallenge' : `multichallenge:${mode}`;
  return {
    name,
    description: `MultiChallenge (NeMo Gym): each yes/no question scores 1 when it gets its passing answer; the item's reward is their ${mode}; the run's score the mean reward`,
    itemScore: (item) => itemReward(item, mode),
    createAggregator(options: AggregateOptions = {}): Aggregator {
      const rewards: number[] = [];
      const byTag = new Map<string, number[]>();
      const tally = createStatusTally();
      return {
        add(item) {
          if (!tally.admit(item.status)) return;
          const reward = itemReward(item, mode);
          if (reward === null) return tally.unscorable();
          rewards.push(reward);
          for (const tag of item.tags ?? []) {
            const list = byTag.get(tag) ?? [];
            list.push(reward);
            byTag.set(tag, list);
          }
        },
        finish(): Metrics {
          const tags = dictionary<TagMetric>();
          for (const [tag, values] of byTag) tags[tag] = summarizeScores(values, false, options);
          return { scoring: name, overall: rewards.length > 0 ? summarizeScores(rewards, false, options) : null, by_tag: tags, ...tally.counts() };
        },
      };
    },
  };
}
