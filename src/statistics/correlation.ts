/**
 * Correlations: Matthews' coefficient of two labelings (any number of classes), Spearman's ρ
 * and Kendall's τ-b of two numeric vectors. Each returns `null` where it is undefined (fewer
 * than two pairs, a constant vector) instead of NaN; scipy returns NaN there, and
 * scikit-learn's `matthews_corrcoef` returns 0.
 */
import type { Category } from './agreement.js';
import { normalQuantile } from './normal.js';

/**
 * Matthews' correlation coefficient (Gorodkin's multiclass form, scikit-learn's
 * `matthews_corrcoef`): with C the confusion matrix, t_k and p_k its row (truth) and column
 * (prediction) sums, c its trace and s its total,
 * MCC = (c·s − Σ p_k t_k) ÷ √((s² − Σ p_k²)(s² − Σ t_k²)). For two classes it is the phi coefficient.
 */
export function matthewsCorrelation<T extends Category>(truth: readonly T[], predicted: readonly T[]): number | null {
  if (truth.length !== predicted.length) throw new RangeError('matthewsCorrelation: both labelings must cover the same items');
  const truthTotals = new Map<Category, number>();
  const predictedTotals = new Map<Category, number>();
  let correct = 0;
  for (let index = 0; index < truth.length; index += 1) {
    truthTotals.set(truth[index], (truthTotals.get(truth[index]) ?? 0) + 1);
    predictedTotals.set(predicted[index], (predictedTotals.get(predicted[index]) ?? 0) + 1);
    if (truth[index] === predicted[index]) correct += 1;
  }
  const total = truth.length;
  let crossed = 0;
  for (const [label, count] of predictedTotals) crossed += count * (truthTotals.get(label) ?? 0);
  let predictedSquares = 0;
  for (const count of predictedTotals.values()) predictedSquares += count * count;
  let truthSquares = 0;
  for (const count of truthTotals.values()) truthSquares += count * count;
  const denominator = Math.sqrt((total * total - predictedSquares) * (total * total - truthSquares));
  if (total < 2 || denominator === 0) return null;
  return (correct * total - crossed) / denominator;
}

/** Ranks from 1, ties given the mean of the ranks they span (scipy's `rankdata(method='average')`). */
export function averageRanks(values: readonly number[]): number[] {
  const order = values.map((_, index) => index).sort((left, right) => values[left] - values[right]);
  const ranks = new Array<number>(values.length);
  let start = 0;
  while (start < order.length) {
    let end = start;
    while (end + 1 < order.length && values[order[end + 1]] === values[order[start]]) end += 1;
    const rank = (start + end) / 2 + 1;
    for (let position = start; position <= end; position += 1) ranks[order[position]] = rank;
    start = end + 1;
  }
  return ranks;
}

/** Pearson's r of two vectors (sums of centred products, left to right); null when either is constant. */
export function pearsonCorrelation(first: readonly number[], second: readonly number[]): number | null {
  if (first.length !== second.length) throw new RangeError('pearsonCorrelation: both vectors must have the same length');
  const count = first.length;
  if (count < 2) return null;
  let firstSum = 0;
  let secondSum = 0;
  for (let index = 0; index < count; index += 1) {
    firstSum += first[index];
    secondSum += second[index];
  }
  const firstMean = firstSum / count;
  const secondMean = secondSum / count;
  let products = 0;
  let firstSquares = 0;
  let secondSquares = 0;
  for (let index = 0; index < count; index += 1) {
    const a = first[index] - firstMean;
    const b = second[index] - secondMean;
    products += a * b;
    firstSquares += a * a;
    secondSquares += b * b;
  }
  if (firstSquares === 0 || secondSquares === 0) return null;
  return products / Math.sqrt(firstSquares * secondSquares);
}

/** Spearman's ρ: Pearson's r of the average ranks (scipy's `spearmanr`). */
export function spearmanCorrelation(first: readonly number[], second: readonly number[]): number | null {
  if (first.length !== second.length) throw new RangeError('spearmanCorrelation: both vectors must have the same length');
  return pearsonCorrelation(averageRanks(first), averageRanks(second));
}

/**
 * Kendall's τ-b (scipy's `kendalltau`, its default variant): (n_c − n_d) ÷ √((n₀ − n₁)(n₀ − n₂)),
 * with n_c and n_d the concordant and discordant pairs, n₀ = n(n − 1)/2, and n₁, n₂ the pairs tied
 * in the first and in the second vector. Knight's O(n log n) method: sort by the first vector
 * (then the second), count the swaps a merge sort of the second needs.
 */
export function kendallTauB(first: readonly number[], second: readonly number[]): number | null {
  if (first.length !== second.length) throw new RangeError('kendallTauB: both vectors must have the same length');
  const count = first.length;
  if (count < 2) return null;
  const order = first.map((_, index) => index).sort((left, right) => first[left] - first[right] || second[left] - second[right]);
  const tiedPairs = (sizes: Iterable<number>) => {
    let pairs = 0;
    for (const size of sizes) pairs += (size * (size - 1)) / 2;
    return pairs;
  };
  // Runs of equal first values, and of equal (first, second) pairs, along the sorted order.
  const firstRuns: number[] = [];
  const jointRuns: number[] = [];
  let firstRun = 1;
  let jointRun = 1;
  for (let position = 1; position <= count; position += 1) {
    const sameFirst = position < count && first[order[position]] === first[order[position - 1]];
    const sameBoth = sameFirst && second[order[position]] === second[order[position - 1]];
    if (sameFirst) firstRun += 1;
    else {
      firstRuns.push(firstRun);
      firstRun = 1;
    }
    if (sameBoth) jointRun += 1;
    else {
      jointRuns.push(jointRun);
      jointRun = 1;
    }
  }
  const sorted = order.map((index) => second[index]);
  const swaps = mergeSortSwaps(sorted);
  const secondRuns = new Map<number, number>();
  for (const value of second) secondRuns.set(value, (secondRuns.get(value) ?? 0) + 1);
  const allPairs = (count * (count - 1)) / 2;
  const tiedFirst = tiedPairs(firstRuns);
  const tiedSecond = tiedPairs(secondRuns.values());
  const tiedBoth = tiedPairs(jointRuns);
  // n_c − n_d = n₀ − n₁ − n₂ + n₃ − 2·swaps (Knight, 1966).
  const difference = allPairs - tiedFirst - tiedSecond + tiedBoth - 2 * swaps;
  const denominator = Math.sqrt((allPairs - tiedFirst) * (allPairs - tiedSecond));
  if (denominator === 0) return null;
  return difference / denominator;
}

/** Sorts `values` in place, returning how many inversions (pairs out of order) it had. */
function mergeSortSwaps(values: number[]): number {
  const buffer = new Array<number>(values.length);
  let swaps = 0;
  for (let width = 1; width < values.length; width *= 2) {
    for (let start = 0; start < values.length; start += 2 * width) {
      const middle = Math.min(start + width, values.length);
      const end = Math.min(start + 2 * width, values.length);
      let left = start;
      let right = middle;
      let out = start;
      while (left < middle && right < end) {
        if (values[right] < values[left]) {
          swaps += middle - left;
          buffer[out++] = values[right++];
        } else buffer[out++] = values[left++];
      }
      while (left < middle) buffer[out++] = values[left++];
      while (right < end) buffer[out++] = values[right++];
      for (let index = start; index < end; index += 1) values[index] = buffer[index];
    }
  }
  return swaps;
}

export type CorrelationKind = 'pearson' | 'spearman' | 'kendall';

/**
 * The variance of the Fisher-transformed coefficient, times n minus its offset: Fisher's
 * 1/(n − 3) for Pearson's r, and Fieller, Hartley & Pearson's (1957, Biometrika 44) 1.06/(n − 3)
 * for Spearman's ρ and 0.437/(n − 4) for Kendall's τ.
 */
const fisherVariance: Record<CorrelationKind, { scale: number; offset: number }> = {
  pearson: { scale: 1, offset: 3 },
  spearman: { scale: 1.06, offset: 3 },
  kendall: { scale: 0.437, offset: 4 },
};

/**
 * A confidence interval for a correlation coefficient by Fisher's z: z = atanh(r), its standard
 * error √(scale ÷ (n − offset)) as in `fisherVariance`, the normal quantile q of the two-sided
 * level, and the interval tanh(z ± q·se). `null` for an undefined coefficient or too few pairs;
 * a coefficient of ±1 gives the interval [r, r].
 */
export function correlationInterval(coefficient: number | null, count: number, kind: CorrelationKind, confidence = 0.95): [number, number] | null {
  if (coefficient === null || !(confidence > 0 && confidence < 1)) return null;
  const { scale, offset } = fisherVariance[kind];
  if (count <= offset) return null;
  if (Math.abs(coefficient) >= 1) return [coefficient, coefficient];
  const z = Math.atanh(coefficient);
  const halfWidth = normalQuantile(1 - (1 - confidence) / 2) * Math.sqrt(scale / (count - offset));
  return [Math.tanh(z - halfWidth), Math.tanh(z + halfWidth)];
}

/** A coefficient with its Fisher-z interval and the number of pairs. */
export interface CorrelationEstimate {
  value: number | null;
  interval: [number, number] | null;
  n: number;
}

/** Pearson, Spearman and Kendall τ-b of two vectors, each with its interval at `confidence`. */
export function correlationsWithIntervals(first: readonly number[], second: readonly number[], confidence = 0.95): Record<CorrelationKind, CorrelationEstimate> {
  const count = first.length;
  const estimate = (value: number | null, kind: CorrelationKind): CorrelationEstimate => ({ value, interval: correlationInterval(value, count, kind, confidence), n: count });
  return {
    pearson: estimate(pearsonCorrelation(first, second), 'pearson'),
    spearman: estimate(spearmanCorrelation(first, second), 'spearman'),
    kendall: estimate(kendallTauB(first, second), 'kendall'),
  };
}
