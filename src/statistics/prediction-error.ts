/**
 * How far predicted scores are from true ones: root mean squared error and mean absolute
 * error (scikit-learn's `mean_squared_error` under a square root, and `mean_absolute_error`).
 * `null` for empty vectors, never NaN.
 */

function checkedLength(truth: readonly number[], predicted: readonly number[], name: string): number {
  if (truth.length !== predicted.length) throw new RangeError(`${name}: both vectors must have the same length`);
  return truth.length;
}

/** √(Σ (truth − predicted)² ÷ n). */
export function rootMeanSquaredError(truth: readonly number[], predicted: readonly number[]): number | null {
  const count = checkedLength(truth, predicted, 'rootMeanSquaredError');
  if (count === 0) return null;
  let total = 0;
  for (let index = 0; index < count; index += 1) total += (truth[index] - predicted[index]) ** 2;
  return Math.sqrt(total / count);
}

/** Σ |truth − predicted| ÷ n. */
export function meanAbsoluteError(truth: readonly number[], predicted: readonly number[]): number | null {
  const count = checkedLength(truth, predicted, 'meanAbsoluteError');
  if (count === 0) return null;
  let total = 0;
  for (let index = 0; index < count; index += 1) total += Math.abs(truth[index] - predicted[index]);
  return total / count;
}
