/**
 * How stable a judge is across repeats of the same run (`grade --repeats N`): from each item's
 * verdicts and scores in every repeat, the share of verdicts that flip, how far an item's score
 * moves, which items land on both sides of a threshold, and how far the corpus mean moves.
 * Streaming: it keeps per-criterion counts, per-repeat sums and up to `maximumListed` item ids.
 *
 * Flip rate: for one criterion of one item judged in k ≥ 2 repeats, m of them "met", the share
 * of pairs of repeats that disagree, m(k − m) ÷ (k(k − 1)/2): the probability that two repeats
 * of that verdict differ. Averaged over (item, criterion) pairs, overall and per criterion id.
 * With two repeats it is the share of verdicts the second run changed; a judge that flips each
 * verdict independently with probability p around a fixed answer has flip rate 2p(1 − p).
 */
import { populationStd } from '../statistics/descriptive.js';

/** What stability reads of one item: its verdicts and score in every repeat (null: none in that repeat). */
export interface RepeatedItem {
  id: string;
  criteria: ReadonlyArray<{ id: string; repeats?: ReadonlyArray<boolean | null> }>;
  repeat_scores?: ReadonlyArray<number | null>;
}

export interface FlipRate {
  /** (item, criterion) pairs judged in at least two repeats. */
  pairs: number;
  flip_rate: number | null;
  /** Share of those pairs whose verdict was not the same in every repeat. */
  unstable: number | null;
}

export interface StabilitySummary {
  repeats: number;
  verdicts: FlipRate & { by_criterion: Record<string, FlipRate> };
  items: {
    /** Items scored in every repeat. */
    scored: number;
    /** Spread of an item's score across repeats (max − min): mean and largest over items. */
    score_range: { mean: number | null; max: number | null };
    /** Population standard deviation of an item's score across repeats, averaged over items. */
    mean_score_std: number | null;
  };
  /** Items whose score is below the threshold in some repeat and at or above it in another. */
  threshold: { value: number; crossing: number; examples: string[] } | null;
  /** The plain mean of item scores in each repeat (over the items scored in every repeat), and its spread. */
  corpus_mean: { by_repeat: number[]; range: number | null; std: number | null };
}

const maximumListed = 100;

interface Counts {
  pairs: number;
  flips: number;
  unstable: number;
}

function flipRate(counts: Counts): FlipRate {
  return { pairs: counts.pairs, flip_rate: counts.pairs > 0 ? counts.flips / counts.pairs : null, unstable: counts.pairs > 0 ? counts.unstable / counts.pairs : null };
}

export function createStabilityTally(repeats: number, threshold?: number) {
  const overall: Counts = { pairs: 0, flips: 0, unstable: 0 };
  const byCriterion = new Map<string, Counts>();
  const repeatSums = new Array<number>(repeats).fill(0);
  let scored = 0;
  let rangeSum = 0;
  let rangeMax = Number.NEGATIVE_INFINITY;
  let stdSum = 0;
  let crossing = 0;
  const examples: string[] = [];
  return {
    add(item: RepeatedItem): void {
      for (const criterion of item.criteria) {
        const verdicts = (criterion.repeats ?? []).filter((verdict): verdict is boolean => verdict !== null);
        const judged = verdicts.length;
        if (judged < 2) continue;
        const met = verdicts.filter(Boolean).length;
        const share = (met * (judged - met)) / ((judged * (judged - 1)) / 2);
        let counts = byCriterion.get(criterion.id);
        if (!counts) byCriterion.set(criterion.id, (counts = { pairs: 0, flips: 0, unstable: 0 }));
        for (const target of [overall, counts]) {
          target.pairs += 1;
          target.flips += share;
          if (met > 0 && met < judged) target.unstable += 1;
        }
      }
      const scores = item.repeat_scores ?? [];
      if (scores.length !== repeats || scores.some((score) => score === null)) return;
      const values = scores as number[];
      scored += 1;
      values.forEach((score, index) => (repeatSums[index] += score));
      const low = Math.min(...values);
      const high = Math.max(...values);
      rangeSum += high - low;
      rangeMax = Math.max(rangeMax, high - low);
      // Equal scores have no spread (the mean's rounding would otherwise leave a trace of one).
      if (high > low) stdSum += populationStd(values);
      if (threshold !== undefined && low < threshold && high >= threshold) {
        crossing += 1;
        if (examples.length < maximumListed) examples.push(item.id);
      }
    },
    summary(): StabilitySummary {
      const byRepeat = scored > 0 ? repeatSums.map((sum) => sum / scored) : [];
      return {
        repeats,
        verdicts: { ...flipRate(overall), by_criterion: Object.fromEntries([...byCriterion].map(([id, counts]) => [id, flipRate(counts)])) },
        items: { scored, score_range: { mean: scored > 0 ? rangeSum / scored : null, max: scored > 0 ? rangeMax : null }, mean_score_std: scored > 0 ? stdSum / scored : null },
        threshold: threshold === undefined ? null : { value: threshold, crossing, examples },
        corpus_mean: { by_repeat: byRepeat, range: byRepeat.length > 0 ? Math.max(...byRepeat) - Math.min(...byRepeat) : null, std: byRepeat.length > 0 ? populationStd(byRepeat) : null },
      };
    },
  };
}
