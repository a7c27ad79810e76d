/**
 * Paired comparisons: the mean difference between two systems scored on the same items, its
 * standard error and normal-approximation interval and p-value, and the number of items a
 * paired comparison needs to detect a given difference with a given power. Every figure uses
 * the normal approximation (z, not Student's t): state it beside the numbers.
 */
import { normalQuantile, twoSidedNormalP } from './normal.js';

export interface PairedDelta {
  /** Pairs compared. */
  n: number;
  /** Mean of first − second. */
  delta: number;
  /** Sample standard deviation of the differences (n − 1 in the denominator); null below two pairs. */
  stdDifference: number | null;
  /** stdDifference ÷ √n. */
  standardError: number | null;
  /** delta ± z·SE at the given confidence (normal approximation). */
  interval: [number, number] | null;
  /** delta ÷ SE; null when SE is 0 or undefined. */
  z: number | null;
  /** Two-sided p-value of z under the standard normal. */
  pValue: number | null;
}

/** The paired difference first − second over the same items, in order. */
export function pairedDelta(first: readonly number[], second: readonly number[], confidence = 0.95): PairedDelta {
  if (first.length !== second.length) throw new RangeError('pairedDelta: both systems must be scored on the same items');
  const n = first.length;
  if (n === 0) return { n, delta: Number.NaN, stdDifference: null, standardError: null, interval: null, z: null, pValue: null };
  const differences = first.map((value, index) => value - second[index]);
  let sum = 0;
  for (const difference of differences) sum += difference;
  const delta = sum / n;
  if (n < 2) return { n, delta, stdDifference: null, standardError: null, interval: null, z: null, pValue: null };
  let squares = 0;
  for (const difference of differences) squares += (difference - delta) ** 2;
  const stdDifference = Math.sqrt(squares / (n - 1));
  const standardError = stdDifference / Math.sqrt(n);
  const critical = normalQuantile(1 - (1 - confidence) / 2);
  const interval: [number, number] = [delta - critical * standardError, delta + critical * standardError];
  if (standardError === 0) return { n, delta, stdDifference, standardError, interval, z: null, pValue: null };
  const z = delta / standardError;
  return { n, delta, stdDifference, standardError, interval, z, pValue: twoSidedNormalP(z) };
}

export interface SampleSizeOptions {
  /** The smallest difference worth detecting (same units as the scores; its sign is ignored). */
  effect: number;
  /** Standard deviation of the paired differences (from a pilot run). */
  stdDifference: number;
  /** Two-sided significance level (default 0.05). */
  alpha?: number;
  /** Probability of detecting the effect when it is there (default 0.8). */
  power?: number;
}

/**
 * Pairs needed for a two-sided paired z-test: n = ((z₁₋α/₂ + z_power) · σ_d ÷ |effect|)².
 * `exact` is that value, `n` its ceiling (at least 2); null for a zero effect.
 */
export function minimumPairedSampleSize(options: SampleSizeOptions): { n: number; exact: number } | null {
  const alpha = options.alpha ?? 0.05;
  const power = options.power ?? 0.8;
  if (!(alpha > 0 && alpha < 1) || !(power > 0 && power < 1)) throw new RangeError('minimumPairedSampleSize: alpha and power must be in (0, 1)');
  if (options.effect === 0 || !Number.isFinite(options.effect)) return null;
  const exact = (((normalQuantile(1 - alpha / 2) + normalQuantile(power)) * options.stdDifference) / Math.abs(options.effect)) ** 2;
  return { n: Math.max(2, Math.ceil(exact)), exact };
}
