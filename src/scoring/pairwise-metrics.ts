/**
 * How well a pairwise judge (which of two responses is better) agrees with gold labels, and
 * how much its verdict depends on the order the responses were shown in.
 *
 * Each record holds the judge's verdict with the responses in their original order and,
 * optionally, its verdict with them swapped, both expressed in the original labelling ("the
 * judge preferred the response originally called A"). A record without a swapped verdict
 * counts as `invalid` in the swapped order, which is how both LLMBar (a missing winner is
 * never correct) and JudgeBench (a missing game adds no vote) treat it.
 */
import { RubricateError } from '../errors.js';
import type { PairLabel } from '../rubric/schema.js';
import { bootstrapIntervals, deriveSeed, resolveBootstrapOptions, type BootstrapOptions, type ConfidenceInterval } from '../statistics/bootstrap.js';
import { cohenKappa } from '../statistics/agreement.js';

export type PairVerdict = PairLabel | 'invalid';

export interface PairwiseMetaRecord {
  id?: string;
  gold: PairLabel;
  /** Verdict with the responses in their original order. */
  original: PairVerdict;
  /** Verdict with the responses swapped, mapped back to the original labelling. */
  swapped?: PairVerdict;
  /** Subset or fine-grained source (LLMBar set, JudgeBench `source`). */
  source?: string;
  /** Coarser category (JudgeBench's four reporting groups, a task type). */
  category?: string;
}

export interface PairwiseMetaOptions extends BootstrapOptions {
  /** Add LLMBar's κ fields, computed exactly as its `evaluate.py` does (see `llmbarKappa`). */
  llmbarKappa?: boolean;
  /** Bootstrap intervals for each source and category too; true by default. */
  groupIntervals?: boolean;
}

export interface VerdictCounts {
  A: number;
  B: number;
  tie: number;
  invalid: number;
}

export interface JudgeBenchScore {
  /** Share of pairs whose net vote over both games favours the gold response. */
  score: number | null;
  /** `100 * correct / pairs`, the number JudgeBench's `compute_final_metrics` returns. */
  percent: number | null;
  correct: number;
  incorrect: number;
  /** Net vote zero: the games cancel out, or both are ties or invalid. */
  tie: number;
  allCorrect: number;
  allIncorrect: number;
  someCorrect: number;
  /** The two games disagree (after mapping the second back). */
  inconsistent: number;
  /** At least one game has no valid decision. */
  nulls: number;
}

export interface LlmbarKappa {
  original: number | null;
  swapped: number | null;
  average: number | null;
  agreement: number | null;
}

export interface PairwiseIntervals {
  accuracyOriginal: ConfidenceInterval | null;
  accuracyAverage: ConfidenceInterval | null;
  positionalAgreement: ConfidenceInterval | null;
  judgeBenchScore: ConfidenceInterval | null;
}

export interface PairwiseMetrics {
  pairs: number;
  /** Pairs that have a swapped-order verdict. */
  swappedPairs: number;
  counts: { correctOriginal: number; correctSwapped: number; correctBoth: number; equal: number };
  accuracy: {
    original: number | null;
    swapped: number | null;
    /** LLMBar's `correct_average`: (correct original + correct swapped) / 2 / pairs. */
    average: number | null;
    /** LLMBar's `correct_both`. */
    both: number | null;
  };
  /** LLMBar's `equal`: both orders give the same verdict (two invalid verdicts count as equal, as in LLMBar). */
  positionalAgreement: number | null;
  /** Cohen's κ between verdicts and gold labels over all four verdict values. */
  kappa: { original: number | null; swapped: number | null };
  verdicts: { original: VerdictCounts; swapped: VerdictCounts };
  judgeBench: JudgeBenchScore;
  llmbarKappa?: LlmbarKappa;
  intervals: PairwiseIntervals;
}

export interface PairwiseMetaReport {
  kind: 'pairwise';
  overall: PairwiseMetrics;
  bySource: Record<string, PairwiseMetrics>;
  byCategory: Record<string, PairwiseMetrics>;
  bootstrap: { resamples: number; seed: number; confidence: number; unit: 'pair' };
}

const labels: readonly PairLabel[] = ['A', 'B', 'tie'];
const verdicts: readonly PairVerdict[] = ['A', 'B', 'tie', 'invalid'];
const intervalKeys = ['accuracyOriginal', 'accuracyAverage', 'positionalAgreement', 'judgeBenchScore'] as const;

function validateRecords(records: readonly PairwiseMetaRecord[]): void {
  if (!Array.isArray(records)) throw new RubricateError('INPUT_INVALID', 'pairwise meta-evaluation needs an array of records', { field: 'records' });
  records.forEach((record, index) => {
    const field = `records[${index}]`;
    if (record === null || typeof record !== 'object') throw new RubricateError('INPUT_INVALID', 'record must be an object', { field });
    if (!labels.includes(record.gold)) throw new RubricateError('INPUT_INVALID', 'gold must be A, B or tie', { field: `${field}.gold` });
    if (!verdicts.includes(record.original)) throw new RubricateError('INPUT_INVALID', 'original must be A, B, tie or invalid', { field: `${field}.original` });
    if (record.swapped !== undefined && !verdicts.includes(record.swapped)) {
      throw new RubricateError('INPUT_INVALID', 'swapped must be A, B, tie or invalid', { field: `${field}.swapped` });
    }
  });
}

function swappedOf(record: PairwiseMetaRecord): PairVerdict {
  return record.swapped ?? 'invalid';
}

/** The other response; a tie stays a tie (JudgeBench's `flip_judgment`). */
function opposite(label: PairLabel): PairLabel {
  return label === 'A' ? 'B' : label === 'B' ? 'A' : 'tie';
}

/**
 * JudgeBench's per-pair outcome: each game votes +1 when its decision equals the gold label,
 * −1 when it equals the opposite, 0 otherwise (tie, invalid, or missing); the pair is correct
 * when the net vote is positive and incorrect when negative.
 */
export function judgeBenchOutcome(record: PairwiseMetaRecord): 1 | 0 | -1 {
  let vote = 0;
  for (const verdict of [record.original, swappedOf(record)]) {
    if (verdict === record.gold) vote += 1;
    else if (verdict === opposite(record.gold)) vote -= 1;
  }
  return vote > 0 ? 1 : vote < 0 ? -1 : 0;
}

/** JudgeBench's score and consistency counts, as `compute_final_metrics` computes them. */
export function judgeBenchScore(records: readonly PairwiseMetaRecord[]): JudgeBenchScore {
  const result: JudgeBenchScore = {
    score: null,
    percent: null,
    correct: 0,
    incorrect: 0,
    tie: 0,
    allCorrect: 0,
    allIncorrect: 0,
    someCorrect: 0,
    inconsistent: 0,
    nulls: 0,
  };
  for (const record of records) {
    const swapped = swappedOf(record);
    if (record.original === 'invalid' || swapped === 'invalid') result.nulls += 1;
    const originalCorrect = record.original === record.gold;
    const swappedCorrect = swapped === record.gold;
    if (originalCorrect && swappedCorrect) result.allCorrect += 1;
    else if (!originalCorrect && !swappedCorrect) result.allIncorrect += 1;
    else result.someCorrect += 1;
    if (record.original !== swapped) result.inconsistent += 1;
    const outcome = judgeBenchOutcome(record);
    if (outcome > 0) result.correct += 1;
    else if (outcome < 0) result.incorrect += 1;
    else result.tie += 1;
  }
  if (records.length > 0) {
    result.score = result.correct / records.length;
    result.percent = (100 * result.correct) / records.length;
  }
  return result;
}

/**
 * LLMBar's κ fields, reproducing its `evaluate.py` exactly, including how it encodes values:
 * a verdict becomes 1 when it picks output 1 (A) and 0 otherwise (output 2, tie or invalid),
 * while the gold label stays 1 or 2 (a gold tie, which LLMBar never has, is encoded 0). The
 * κ values are therefore not the textbook κ of verdict against gold; they are kept to match
 * published statistics files. `agreement` is κ between the two orders' encoded verdicts.
 */
export function llmbarKappa(records: readonly PairwiseMetaRecord[]): LlmbarKappa {
  const encodeVerdict = (verdict: PairVerdict): number => (verdict === 'A' ? 1 : 0);
  const encodedGold = records.map((record) => (record.gold === 'A' ? 1 : record.gold === 'B' ? 2 : 0));
  const originalEncoded = records.map((record) => encodeVerdict(record.original));
  const swappedEncoded = records.map((record) => encodeVerdict(swappedOf(record)));
  const original = cohenKappa(originalEncoded, encodedGold);
  const swapped = cohenKappa(swappedEncoded, encodedGold);
  return {
    original,
    swapped,
    average: original === null || swapped === null ? null : (original + swapped) / 2,
    agreement: cohenKappa(originalEncoded, swappedEncoded),
  };
}

function countVerdicts(values: readonly PairVerdict[]): VerdictCounts {
  const counts: VerdictCounts = { A: 0, B: 0, tie: 0, invalid: 0 };
  for (const value of values) counts[value] += 1;
  return counts;
}

/** Per-record 0/1 flags and outcomes, so a bootstrap resample only sums numbers. */
interface RecordFlags {
  correctOriginal: Uint8Array;
  correctSwapped: Uint8Array;
  equal: Uint8Array;
  judgeBench: Int8Array;
}

function flagRecords(records: readonly PairwiseMetaRecord[]): RecordFlags {
  const flags: RecordFlags = {
    correctOriginal: new Uint8Array(records.length),
    correctSwapped: new Uint8Array(records.length),
    equal: new Uint8Array(records.length),
    judgeBench: new Int8Array(records.length),
  };
  records.forEach((record, index) => {
    const swapped = swappedOf(record);
    flags.correctOriginal[index] = record.original === record.gold ? 1 : 0;
    flags.correctSwapped[index] = swapped === record.gold ? 1 : 0;
    flags.equal[index] = record.original === swapped ? 1 : 0;
    flags.judgeBench[index] = judgeBenchOutcome(record);
  });
  return flags;
}

function metricsForSubset(
  records: readonly PairwiseMetaRecord[],
  flags: RecordFlags,
  subset: readonly number[],
  options: PairwiseMetaOptions,
  bootstrap: Required<BootstrapOptions>,
  withIntervals: boolean,
): PairwiseMetrics {
  const members = subset.map((index) => records[index]);
  const pairs = members.length;
  const swappedPairs = members.filter((record) => record.swapped !== undefined).length;
  const hasSwapped = swappedPairs > 0;
  let correctOriginal = 0;
  let correctSwapped = 0;
  let correctBoth = 0;
  let equal = 0;
  for (const index of subset) {
    correctOriginal += flags.correctOriginal[index];
    correctSwapped += flags.correctSwapped[index];
    correctBoth += flags.correctOriginal[index] & flags.correctSwapped[index];
    equal += flags.equal[index];
  }
  const share = (count: number, defined: boolean): number | null => (defined && pairs > 0 ? count / pairs : null);

  let intervals: PairwiseIntervals = { accuracyOriginal: null, accuracyAverage: null, positionalAgreement: null, judgeBenchScore: null };
  if (withIntervals && pairs > 0) {
    intervals = bootstrapIntervals(
      pairs,
      intervalKeys,
      (sample) => {
        let sampledOriginal = 0;
        let sampledSwapped = 0;
        let sampledEqual = 0;
        let sampledJudgeBench = 0;
        for (let position = 0; position < sample.length; position += 1) {
          const index = subset[sample[position]];
          sampledOriginal += flags.correctOriginal[index];
          sampledSwapped += flags.correctSwapped[index];
          sampledEqual += flags.equal[index];
          if (flags.judgeBench[index] > 0) sampledJudgeBench += 1;
        }
        return {
          accuracyOriginal: sampledOriginal / pairs,
          accuracyAverage: hasSwapped ? (sampledOriginal + sampledSwapped) / 2 / pairs : null,
          positionalAgreement: hasSwapped ? sampledEqual / pairs : null,
          judgeBenchScore: sampledJudgeBench / pairs,
        };
      },
      bootstrap,
    );
  }

  const swappedVerdicts = members.map(swappedOf);
  const goldLabels = members.map((record) => record.gold);
  const metrics: PairwiseMetrics = {
    pairs,
    swappedPairs,
    counts: { correctOriginal, correctSwapped, correctBoth, equal },
    accuracy: {
      original: share(correctOriginal, true),
      swapped: share(correctSwapped, hasSwapped),
      // Same operation order as LLMBar so the figure matches its files bit for bit.
      average: hasSwapped && pairs > 0 ? (correctOriginal + correctSwapped) / 2 / pairs : null,
      both: share(correctBoth, hasSwapped),
    },
    positionalAgreement: share(equal, hasSwapped),
    kappa: {
      original: cohenKappa<string>(members.map((record) => record.original), goldLabels),
      swapped: hasSwapped ? cohenKappa<string>(swappedVerdicts, goldLabels) : null,
    },
    verdicts: { original: countVerdicts(members.map((record) => record.original)), swapped: countVerdicts(hasSwapped ? swappedVerdicts : []) },
    judgeBench: judgeBenchScore(members),
    intervals,
  };
  if (options.llmbarKappa) {
    const { intervals: computedIntervals, ...rest } = metrics;
    return { ...rest, llmbarKappa: llmbarKappa(members), intervals: computedIntervals };
  }
  return metrics;
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function groupBy(records: readonly PairwiseMetaRecord[], key: 'source' | 'category'): Map<string, number[]> {
  const byValue = new Map<string, number[]>();
  records.forEach((record, index) => {
    const value = record[key];
    if (value === undefined) return;
    const members = byValue.get(value);
    if (members) members.push(index);
    else byValue.set(value, [index]);
  });
  return new Map([...byValue.entries()].sort(([left], [right]) => compareText(left, right)));
}

/**
 * Accuracy per order and on average, positional agreement, Cohen's κ, JudgeBench's two-game
 * score, optionally LLMBar's κ fields, breakdowns per source and category, and seeded
 * percentile-bootstrap intervals over pairs.
 *
 * @example
 * ```ts
 * import { computePairwiseMeta } from 'rubricate/meta';
 * const report = computePairwiseMeta([{ gold: 'A', original: 'A', swapped: 'A' }, { gold: 'B', original: 'A', swapped: 'B' }]);
 * ```
 */
export function computePairwiseMeta(records: readonly PairwiseMetaRecord[], options: PairwiseMetaOptions = {}): PairwiseMetaReport {
  validateRecords(records);
  const bootstrap = resolveBootstrapOptions(options);
  const flags = flagRecords(records);
  const everything = records.map((_, index) => index);
  const groupIntervals = options.groupIntervals ?? true;
  const breakdown = (key: 'source' | 'category'): Record<string, PairwiseMetrics> => {
    const result: Record<string, PairwiseMetrics> = {};
    for (const [value, members] of groupBy(records, key)) {
      result[value] = metricsForSubset(records, flags, members, options, { ...bootstrap, seed: deriveSeed(bootstrap.seed, `${key}=${value}`) }, groupIntervals);
    }
    return result;
  };
  return {
    kind: 'pairwise',
    overall: metricsForSubset(records, flags, everything, options, bootstrap, true),
    bySource: breakdown('source'),
    byCategory: breakdown('category'),
    bootstrap: { resamples: bootstrap.resamples, seed: bootstrap.seed, confidence: bootstrap.confidence, unit: 'pair' },
  };
}
