/**
 * Percentile bootstrap over resampling units (items, pairs). Seeded, so the same inputs and
 * options always give the same interval.
 */
import { sha256Hex } from '../util/hash.js';
import { randomInteger, seededRandom } from '../util/random.js';
import { quantileOfSorted } from './statistics.js';

export interface BootstrapOptions {
  /** Number of resamples; 1000 by default. 0 turns intervals off. */
  resamples?: number;
  /** Seed of the resampling stream; 0 by default. */
  seed?: number;
  /** Two-sided coverage; 0.95 by default. */
  confidence?: number;
}

export interface ConfidenceInterval {
  lower: number;
  upper: number;
  confidence: number;
  /** Resamples on which the statistic was defined (the interval is taken over these). */
  resamples: number;
}

export const defaultBootstrap = { resamples: 1000, seed: 0, confidence: 0.95 } as const;

export function resolveBootstrapOptions(options: BootstrapOptions = {}): Required<BootstrapOptions> {
  const resamples = options.resamples ?? defaultBootstrap.resamples;
  const confidence = options.confidence ?? defaultBootstrap.confidence;
  if (!Number.isInteger(resamples) || resamples < 0) throw new RangeError('bootstrap resamples must be a non-negative integer');
  if (!(confidence > 0 && confidence < 1)) throw new RangeError('bootstrap confidence must be between 0 and 1');
  return { resamples, seed: options.seed ?? defaultBootstrap.seed, confidence };
}

/**
 * A seed for one sub-analysis (a group's breakdown), derived from the base seed and a name
 * rather than from processing order, so a group's interval does not change when other groups
 * are added or removed.
 */
export function deriveSeed(seed: number, name: string): number {
  return Number.parseInt(sha256Hex(`${seed}\u0000${name}`).slice(0, 8), 16);
}

/**
 * Resamples `unitCount` units with replacement `resamples` times; for each resample,
 * `evaluate` gets the drawn unit indices and returns every statistic at once (so they share
 * resamples). A statistic's interval is the percentile interval over the resamples where it
 * was defined (not null); `null` when it never was or when there are no units.
 */
export function bootstrapIntervals<Key extends string>(
  unitCount: number,
  keys: readonly Key[],
  evaluate: (sample: Int32Array) => Record<Key, number | null>,
  options: BootstrapOptions = {},
): Record<Key, ConfidenceInterval | null> {
  const { resamples, seed, confidence } = resolveBootstrapOptions(options);
  const intervals = {} as Record<Key, ConfidenceInterval | null>;
  for (const key of keys) intervals[key] = null;
  if (unitCount === 0 || resamples === 0) return intervals;

  const random = seededRandom(seed);
  const values = new Map<Key, number[]>(keys.map((key) => [key, []]));
  const sample = new Int32Array(unitCount);
  for (let round = 0; round < resamples; round += 1) {
    for (let position = 0; position < unitCount; position += 1) sample[position] = randomInteger(random, unitCount);
    const statistics = evaluate(sample);
    for (const key of keys) {
      const value = statistics[key];
      if (value !== null && Number.isFinite(value)) values.get(key)!.push(value);
    }
  }
  const tail = (1 - confidence) / 2;
  for (const key of keys) {
    const collected = values.get(key)!;
    if (collected.length === 0) continue;
    const sorted = Float64Array.from(collected).sort();
    intervals[key] = {
      lower: quantileOfSorted(sorted, tail),
      upper: quantileOfSorted(sorted, 1 - tail),
      confidence,
      resamples: collected.length,
    };
  }
  return intervals;
}
