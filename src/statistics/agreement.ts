/**
 * Agreement between raters: Cohen's κ (two raters), Fleiss' κ (a jury, several annotators)
 * and the phi coefficient (two binary vectors). Every function returns `null` where the
 * statistic is undefined (empty input, zero expected disagreement, a constant vector) instead
 * of NaN, so reports stay JSON-serialisable.
 */

export type Category = string | number | boolean;

/** Sort order for category labels: numbers by value, everything else by its string form. */
function compareCategories(left: Category, right: Category): number {
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  const leftText = String(left);
  const rightText = String(right);
  return leftText < rightText ? -1 : leftText > rightText ? 1 : 0;
}

/**
 * Cohen's κ between two raters over the same items, computed the way scikit-learn's
 * `cohen_kappa_score` does: the label set is the union of both raters' labels, and
 * κ = 1 − observed disagreement ÷ chance-expected disagreement. `null` when there are no
 * items or chance disagreement is zero (both raters constant and equal), where sklearn gives NaN.
 */
export function cohenKappa<T extends Category>(first: readonly T[], second: readonly T[]): number | null {
  if (first.length !== second.length) throw new RangeError('cohenKappa: both raters must rate the same items');
  const itemCount = first.length;
  if (itemCount === 0) return null;
  const labels = [...new Set<Category>([...first, ...second])].sort(compareCategories);
  const indexOf = new Map(labels.map((label, index) => [label, index]));
  const size = labels.length;
  const confusion = new Float64Array(size * size);
  for (let index = 0; index < itemCount; index += 1) {
    confusion[indexOf.get(first[index])! * size + indexOf.get(second[index])!] += 1;
  }
  const firstTotals = new Float64Array(size);
  const secondTotals = new Float64Array(size);
  for (let row = 0; row < size; row += 1) {
    for (let column = 0; column < size; column += 1) {
      firstTotals[row] += confusion[row * size + column];
      secondTotals[column] += confusion[row * size + column];
    }
  }
  let observedDisagreement = 0;
  let expectedDisagreement = 0;
  for (let row = 0; row < size; row += 1) {
    for (let column = 0; column < size; column += 1) {
      if (row === column) continue;
      observedDisagreement += confusion[row * size + column];
      expectedDisagreement += (secondTotals[row] * firstTotals[column]) / itemCount;
    }
  }
  if (expectedDisagreement === 0) return null;
  return 1 - observedDisagreement / expectedDisagreement;
}

/**
 * Cohen's κ for two binary raters from their 2×2 table (same value as `cohenKappa`, without
 * building arrays; used inside bootstrap loops). Counts are of (prediction, label) pairs.
 */
export function binaryCohenKappa(counts: {
  truePositive: number;
  falsePositive: number;
  falseNegative: number;
  trueNegative: number;
}): number | null {
  const { truePositive, falsePositive, falseNegative, trueNegative } = counts;
  const total = truePositive + falsePositive + falseNegative + trueNegative;
  if (total === 0) return null;
  const predictedPositive = truePositive + falsePositive;
  const predictedNegative = falseNegative + trueNegative;
  const labelPositive = truePositive + falseNegative;
  const labelNegative = falsePositive + trueNegative;
  const expectedDisagreement = (labelNegative * predictedPositive) / total + (labelPositive * predictedNegative) / total;
  if (expectedDisagreement === 0) return null;
  return 1 - (falsePositive + falseNegative) / expectedDisagreement;
}

/**
 * Fleiss' κ for several raters (a jury, or several human annotators). Each entry holds the
 * categories the raters gave one item. Items may have different numbers of raters: per-item
 * agreement uses that item's own count and category proportions pool every rating (the usual
 * generalisation; with a constant rater count it is exactly Fleiss' formula). Items with fewer
 * than two ratings carry no agreement information and are skipped. `null` when no item has two
 * ratings or chance agreement is 1.
 */
export function fleissKappa<T extends Category>(ratingsPerItem: ReadonlyArray<readonly T[]>): number | null {
  const categoryTotals = new Map<Category, number>();
  let totalRatings = 0;
  let agreementSum = 0;
  let itemCount = 0;
  for (const ratings of ratingsPerItem) {
    if (ratings.length < 2) continue;
    const counts = new Map<Category, number>();
    for (const rating of ratings) counts.set(rating, (counts.get(rating) ?? 0) + 1);
    let agreeingPairs = 0;
    for (const [category, count] of counts) {
      agreeingPairs += count * (count - 1);
      categoryTotals.set(category, (categoryTotals.get(category) ?? 0) + count);
    }
    agreementSum += agreeingPairs / (ratings.length * (ratings.length - 1));
    totalRatings += ratings.length;
    itemCount += 1;
  }
  if (itemCount === 0) return null;
  const meanAgreement = agreementSum / itemCount;
  let chanceAgreement = 0;
  for (const count of categoryTotals.values()) chanceAgreement += (count / totalRatings) ** 2;
  if (chanceAgreement === 1) return null;
  return (meanAgreement - chanceAgreement) / (1 - chanceAgreement);
}

/**
 * Phi coefficient (Pearson correlation of two binary vectors). Undefined (null) when either
 * vector is constant or fewer than two positions are known on both.
 */
export function phiCoefficient(first: ReadonlyArray<boolean | null>, second: ReadonlyArray<boolean | null>): number | null {
  let both = 0;
  let onlyFirst = 0;
  let onlySecond = 0;
  let neither = 0;
  const length = Math.min(first.length, second.length);
  for (let index = 0; index < length; index += 1) {
    const a = first[index];
    const b = second[index];
    if (a === null || b === null || a === undefined || b === undefined) continue;
    if (a && b) both += 1;
    else if (a) onlyFirst += 1;
    else if (b) onlySecond += 1;
    else neither += 1;
  }
  const n = both + onlyFirst + onlySecond + neither;
  if (n < 2) return null;
  const firstTrue = both + onlyFirst;
  const firstFalse = onlySecond + neither;
  const secondTrue = both + onlySecond;
  const secondFalse = onlyFirst + neither;
  const denominator = Math.sqrt(firstTrue * firstFalse * secondTrue * secondFalse);
  if (denominator === 0) return null;
  return (both * neither - onlyFirst * onlySecond) / denominator;
}

/**
 * Cohen's weighted κ (Cohen 1968) on an ordered scale: κ_w = 1 − Σ w_ij o_ij ÷ Σ w_ij e_ij,
 * with o the observed table, e the table expected by chance from its margins, and w_ij the
 * distance between the scale's positions i and j, squared (`quadratic`) or not (`linear`).
 * The scale is `categories` in order when given (every label must be on it), otherwise the
 * labels either rater used, sorted: scikit-learn's `cohen_kappa_score(weights=…)`, which
 * weighs by position in that list, not by the labels' values. `null` where chance disagreement
 * is zero or there are no items.
 */
export function weightedCohenKappa<T extends Category>(first: readonly T[], second: readonly T[], weights: 'linear' | 'quadratic', categories?: readonly T[]): number | null {
  if (first.length !== second.length) throw new RangeError('weightedCohenKappa: both raters must rate the same items');
  const itemCount = first.length;
  if (itemCount === 0) return null;
  const labels: readonly Category[] = categories ?? [...new Set<Category>([...first, ...second])].sort(compareCategories);
  const indexOf = new Map(labels.map((label, index) => [label, index]));
  const size = labels.length;
  const confusion = new Float64Array(size * size);
  const firstTotals = new Float64Array(size);
  const secondTotals = new Float64Array(size);
  for (let index = 0; index < itemCount; index += 1) {
    const row = indexOf.get(first[index]);
    const column = indexOf.get(second[index]);
    if (row === undefined || column === undefined) throw new RangeError(`weightedCohenKappa: label ${JSON.stringify(row === undefined ? first[index] : second[index])} is not on the scale`);
    confusion[row * size + column] += 1;
    firstTotals[row] += 1;
    secondTotals[column] += 1;
  }
  let observed = 0;
  let expected = 0;
  for (let row = 0; row < size; row += 1) {
    for (let column = 0; column < size; column += 1) {
      const distance = Math.abs(row - column);
      const weight = weights === 'quadratic' ? distance * distance : distance;
      observed += weight * confusion[row * size + column];
      expected += (weight * firstTotals[row] * secondTotals[column]) / itemCount;
    }
  }
  if (expected === 0) return null;
  return 1 - observed / expected;
}
