/**
 * The plain descriptive statistics every layer uses: mean, population spread, quantiles,
 * clipping, ratios and report rounding. NumPy's own arithmetic (pairwise sums, its rounding)
 * is in `reference-math.ts`, for the scorings that must match it bit for bit.
 */

/**
 * The mean, summed with one accumulator left to right: Python's `sum(values) / len(values)`
 * to the bit (NaN when empty).
 */
export function mean(values: readonly number[]): number {
  let total = 0;
  // Indexed, not for…of: bootstraps call this a thousand times per figure, and before the JIT
  // optimises it an iterator loop allocates a result object per value.
  for (let index = 0; index < values.length; index += 1) total += values[index];
  return total / values.length;
}

/** Population standard deviation (ddof = 0: the spread of these values, not an estimate of a wider one); NaN when empty. */
export function populationStd(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const centre = mean(values);
  let total = 0;
  for (let index = 0; index < values.length; index += 1) total += (values[index] - centre) ** 2;
  return Math.sqrt(total / values.length);
}

/** Population variance of 0/1 (or fractional) verdict values. */
export function populationVariance(values: readonly number[]): number {
  const std = populationStd(values);
  return std * std;
}

export function clip(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

/** `numerator / denominator`, or null (undefined, never 0 or NaN) over a zero denominator. */
export function ratio(numerator: number, denominator: number): number | null {
  return denominator > 0 ? numerator / denominator : null;
}

/**
 * Quantile with linear interpolation between order statistics (NumPy's default method):
 * position h = (n − 1)·q in the sorted values. `sortedValues` must be sorted ascending.
 */
export function quantileOfSorted(sortedValues: ArrayLike<number>, quantile: number): number {
  const count = sortedValues.length;
  if (count === 0) throw new RangeError('quantileOfSorted: no values');
  const position = (count - 1) * quantile;
  const lowerIndex = Math.floor(position);
  const upperIndex = Math.min(lowerIndex + 1, count - 1);
  const fraction = position - lowerIndex;
  const lower = sortedValues[lowerIndex];
  const upper = sortedValues[upperIndex];
  return fraction === 0 ? lower : lower + fraction * (upper - lower);
}

/**
 * Rounds report figures (6 decimals by default) so reruns print identical numbers. Halves go
 * up (`Math.round`), unlike `numpyRound`, which reproduces NumPy's half-to-even for parity.
 */
export function round(value: number, digits = 6): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
