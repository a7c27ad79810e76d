/**
 * Krippendorff's α: agreement among any number of raters, with missing ratings, on a nominal
 * or interval scale. From the coincidence matrix (Krippendorff, "Computing Krippendorff's
 * Alpha-Reliability", 2011): each unit with m ≥ 2 ratings contributes its ordered pairs of
 * ratings, each weighted 1/(m − 1); with o_ck those weights, n_c = Σ_k o_ck and n = Σ_c n_c,
 *
 *     α = 1 − (n − 1) · Σ_ck o_ck δ²(c, k) ÷ Σ_ck n_c n_k δ²(c, k)
 *
 * where δ² is 1 for two different nominal values (0 for equal ones) and (c − k)² on an
 * interval scale. Units with fewer than two ratings are not pairable and are left out.
 */
import type { Category } from './agreement.js';

export type KrippendorffLevel = 'nominal' | 'interval';

/**
 * α over units, each the ratings it received (null or undefined: a rater who gave none).
 * Interval α needs numbers (booleans count as 1 and 0). `null` when fewer than two pairable
 * ratings exist or the expected disagreement is 0 (every rating the same value).
 */
export function krippendorffAlpha(units: ReadonlyArray<ReadonlyArray<Category | null | undefined>>, level: KrippendorffLevel): number | null {
  const valueIndex = new Map<Category, number>();
  const values: Category[] = [];
  const pairable: number[][] = [];
  for (const unit of units) {
    const present = unit.filter((rating): rating is Category => rating !== null && rating !== undefined);
    if (present.length < 2) continue;
    pairable.push(
      present.map((rating) => {
        const key = level === 'interval' ? numeric(rating) : rating;
        let index = valueIndex.get(key);
        if (index === undefined) {
          index = values.length;
          valueIndex.set(key, index);
          values.push(key);
        }
        return index;
      }),
    );
  }
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
  const distance = (row: number, column: number): number => {
    if (row === column) return 0;
    return level === 'interval' ? ((values[row] as number) - (values[column] as number)) ** 2 : 1;
  };
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

function numeric(rating: Category): number {
  if (typeof rating === 'number' && Number.isFinite(rating)) return rating;
  if (typeof rating === 'boolean') return rating ? 1 : 0;
  throw new RangeError(`krippendorffAlpha: interval α needs numeric ratings, got ${JSON.stringify(rating)}`);
}
