/**
 * Krippendorff's α: agreement among any number of raters, with missing ratings, on a nominal,
 * ordinal or interval scale. From the coincidence matrix (Krippendorff, "Computing
 * Krippendorff's Alpha-Reliability", 2011): each unit with m ≥ 2 ratings contributes its
 * ordered pairs of ratings, each weighted 1/(m − 1); with o_ck those weights, n_c = Σ_k o_ck
 * and n = Σ_c n_c,
 *
 *     α = 1 − (n − 1) · Σ_ck o_ck δ²(c, k) ÷ Σ_ck n_c n_k δ²(c, k)
 *
 * where δ² is 1 for two different nominal values (0 for equal ones), (c − k)² on an interval
 * scale, and on an ordinal scale (Σ_{g from c to k} n_g − (n_c + n_k)/2)²: the ranks between
 * two values, counted in pairable ratings. Units with fewer than two ratings are not pairable
 * and are left out, so a value no pairable unit holds adds nothing (the `krippendorff`
 * package's `value_domain` changes no ordinal α).
 */
import type { Category } from './agreement.js';

export type KrippendorffLevel = 'nominal' | 'ordinal' | 'interval';

/**
 * α over units, each the ratings it received (null or undefined: a rater who gave none).
 * Ordinal and interval α need numbers (booleans count as 1 and 0). `null` when fewer than two
 * pairable ratings exist or the expected disagreement is 0 (every rating the same value).
 */
export function krippendorffAlpha(units: ReadonlyArray<ReadonlyArray<Category | null | undefined>>, level: KrippendorffLevel): number | null {
  const { values, pairable } = indexValues(units, level);
  const size = values.length;
  const coincidences = new Float64Array(size * size);
  for (const unit of pairable) {
    const weight = 1 / (unit.length - 1);
    for (let first = 0; first < unit.length; first += 1) {
      for (let second = 0; second < unit.length; second += 1) {
        if (first !== second) coincidences[unit[first] * size + unit[second]] += weight;
      }
    }
  }
  const marginals = new Float64Array(size);
  let total = 0;
  for (let row = 0; row < size; row += 1) {
    for (let column = 0; column < size; column += 1) marginals[row] += coincidences[row * size + column];
    total += marginals[row];
  }
  if (total < 2) return null;
  const distance = distanceFunction(level, values, marginals);
  let observed = 0;
  let expected = 0;
  for (let row = 0; row < size; row += 1) {
    for (let column = 0; column < size; column += 1) {
      const delta = distance(row, column);
      if (delta === 0) continue;
      observed += coincidences[row * size + column] * delta;
      expected += marginals[row] * marginals[column] * delta;
    }
  }
  if (expected === 0) return null;
  return 1 - ((total - 1) * observed) / expected;
}

/** The distinct values of pairable units (sorted by value for ordinal and interval data), and each unit as value indexes. */
function indexValues(units: ReadonlyArray<ReadonlyArray<Category | null | undefined>>, level: KrippendorffLevel): { values: Category[]; pairable: number[][] } {
  const present: Category[][] = [];
  const distinct = new Set<Category>();
  for (const unit of units) {
    const ratings = unit.filter((rating): rating is Category => rating !== null && rating !== undefined);
    if (ratings.length < 2) continue;
    const keys = level === 'nominal' ? ratings : ratings.map(numeric);
    for (const key of keys) distinct.add(key);
    present.push(keys);
  }
  const values = [...distinct];
  if (level !== 'nominal') values.sort((left, right) => (left as number) - (right as number));
  const valueIndex = new Map(values.map((value, index) => [value, index]));
  return { values, pairable: present.map((unit) => unit.map((value) => valueIndex.get(value)!)) };
}

function distanceFunction(level: KrippendorffLevel, values: readonly Category[], marginals: Float64Array): (row: number, column: number) => number {
  if (level === 'nominal') return (row, column) => (row === column ? 0 : 1);
  if (level === 'interval') return (row, column) => ((values[row] as number) - (values[column] as number)) ** 2;
  // Cumulative marginals: the ratings up to and including each value, in value order.
  const cumulative = new Float64Array(values.length + 1);
  for (let index = 0; index < values.length; index += 1) cumulative[index + 1] = cumulative[index] + marginals[index];
  return (row, column) => {
    if (row === column) return 0;
    const low = Math.min(row, column);
    const high = Math.max(row, column);
    return (cumulative[high + 1] - cumulative[low] - (marginals[low] + marginals[high]) / 2) ** 2;
  };
}

function numeric(rating: Category): number {
  if (typeof rating === 'number' && Number.isFinite(rating)) return rating;
  if (typeof rating === 'boolean') return rating ? 1 : 0;
  throw new RangeError(`krippendorffAlpha: ordinal and interval α need numeric ratings, got ${JSON.stringify(rating)}`);
}
