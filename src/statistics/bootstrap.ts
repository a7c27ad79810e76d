/**
 * The two seeded bootstraps. `bootstrap` resamples values and gives a statistic's standard
 * error and 95% interval, as the scorings' reference implementations report them (their
 * seed, their generator); `bootstrapIntervals` resamples units (items, pairs) for several
 * statistics at once and gives percentile intervals at any coverage (the meta-evaluations').
 * They draw from different generators, so each keeps the numbers its figures were pinned to.
 */
import { sha256Hex } from '../util/hash.js';
import { randomInteger, SeededGenerator, seededRandom } from '../util/random.js';
import { populationStd, quantileOfSorted } from './descriptive.js';

export const defaultBootstrapSamples = 1000;
export const defaultBootstrapSeed = 20_250_507;

export interface BootstrapResult {
  std: number;
  ci95: [number, number];
}

/**
 * Resamples `values` with replacement and applies `statistic` to each resample: the
 * spread of those statistics estimates the statistic's standard error. Seeded.
 */
export function bootstrap(
  values: readonly number[],
  statistic: (resample: number[]) => number,
  samples = defaultBootstrapSamples,
  seed = defaultBootstrapSeed,
  /** Which value fills position `index` of a resample; default uniform over all (stratified schemes override). */
  pickIndex?: (random: () => number, length: number, index: number) => number,
): BootstrapResult {
  if (values.length === 0 || samples === 0) return { std: 0, ci95: [Number.NaN, Number.NaN] };
  const generator = new SeededGenerator(seed);
  const statistics: number[] = new Array(samples);
  const resample: number[] = new Array(values.length);
  // Uniform resampling (the common case) draws each resample's indices in one tight loop:
  // the same numbers as one draw per position, at a fraction of the cost (a million draws per call).
  const indices = pickIndex ? undefined : new Int32Array(values.length);
  const random = () => generator.next();
  for (let sample = 0; sample < samples; sample += 1) {
    if (indices) {
      generator.fillIndices(indices, values.length);
      for (let index = 0; index < values.length; index += 1) resample[index] = values[indices[index]];
    } else {
      for (let index = 0; index < values.length; index += 1) resample[index] = values[pickIndex!(random, values.length, index)];
    }
    statistics[sample] = statistic(resample);
  }
  const sorted = statistics.slice().sort((left, right) => left - right);
  return { std: populationStd(statistics), ci95: [quantileOfSorted(sorted, 0.025), quantileOfSorted(sorted, 0.975)] };
}

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
