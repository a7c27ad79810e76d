/**
 * How well a judge's met / not-met verdicts agree with human labels.
 *
 * A record is one judged criterion: the judge's prediction and one or more human labels.
 * With several labels (HealthBench's meta-eval has several physicians per item) the
 * prediction is compared with each label separately, exactly as HealthBench does, so every
 * pair-level count below is over (prediction, label) pairs. Bootstrap intervals resample
 * records, keeping an item's labels together.
 */
import { RubricateError } from '../errors.js';
import { bootstrapIntervals, deriveSeed, resolveBootstrapOptions, type BootstrapOptions, type ConfidenceInterval } from '../statistics/bootstrap.js';
import { binaryCohenKappa, fleissKappa } from '../statistics/agreement.js';
import { matthewsCorrelation } from '../statistics/correlation.js';
import { krippendorffAlpha } from '../statistics/krippendorff.js';
import { mean, ratio } from '../statistics/descriptive.js';
import { numpyRound } from '../statistics/reference-math.js';

export interface BinaryMetaRecord {
  /** The judge's verdict: true when it found the criterion met. */
  prediction: boolean;
  /** Human label, or several (one per annotator); each is paired with the prediction. */
  label: boolean | readonly boolean[];
  /**
   * Groups the record belongs to, by key: e.g. `{ criterion: 'c3', category: 'emergency',
   * source: 'o3' }`. An array value puts the record in each of those groups (item tags).
   */
  groups?: Readonly<Record<string, string | readonly string[]>>;
  /** Who gave each label (parallel to `label`), when known: the human baseline then also has per-rater figures. */
  raters?: readonly string[];
  /** Individual jurors' votes when `prediction` is a jury's decision (for Fleiss' κ). */
  juryVotes?: readonly boolean[];
  id?: string;
}

export interface BinaryMetaOptions extends BootstrapOptions {
  /** Group key naming the response source, for ProfBench's bias index; `source` by default. */
  sourceKey?: string;
  /** Group key naming HealthBench's category for the human baseline's per-(rater, category) cells; `category` by default. */
  baselineCategoryKey?: string;
  /** Group keys to break results down by; every key found in the records by default. */
  groupBy?: readonly string[];
  /** Bootstrap intervals for each group too; true by default. */
  groupIntervals?: boolean;
}

export interface ConfusionCounts {
  truePositive: number;
  falsePositive: number;
  falseNegative: number;
  trueNegative: number;
}

export interface ClassMetrics {
  /** Share of pairs predicted in this class whose label agrees; null when none were predicted. */
  precision: number | null;
  /** Share of pairs labelled in this class that the judge predicted; null when none were labelled. */
  recall: number | null;
  /** HealthBench's F1: null when precision or recall is undefined, 0 when both are 0. */
  f1: number | null;
  /** Pairs the judge put in this class. */
  predicted: number;
  /** Pairs the humans put in this class. */
  support: number;
}

export interface BinaryIntervals {
  accuracy: ConfidenceInterval | null;
  balancedF1: ConfidenceInterval | null;
  macroF1: ConfidenceInterval | null;
  cohenKappa: ConfidenceInterval | null;
}

export interface BinaryMetrics {
  records: number;
  pairs: number;
  confusion: ConfusionCounts;
  accuracy: number | null;
  positive: ClassMetrics;
  negative: ClassMetrics;
  /** Mean of the two classes' precision (HealthBench `precision_balanced`). */
  balancedPrecision: number | null;
  /** Mean of the two classes' recall (HealthBench `recall_balanced`). */
  balancedRecall: number | null;
  /** HealthBench's headline: mean of positive-class and negative-class F1; null if either is undefined. */
  balancedF1: number | null;
  /** scikit-learn macro F1 over the classes present in labels or predictions (undefined parts count 0). */
  macroF1: number | null;
  cohenKappa: number | null;
  intervals: BinaryIntervals;
}

export interface SourceBias {
  pairs: number;
  /** Mean of (prediction − label) with met = 1: positive means the judge is lenient on this source. */
  meanError: number;
}

export interface BiasIndexReport {
  sourceKey: string;
  bySource: Record<string, SourceBias>;
  /** ProfBench's bias index: max − min over sources of the mean error. */
  biasIndex: number;
  macroF1: number | null;
  /** ProfBench's ranking figure MF1 − BI (both as fractions here). */
  mf1MinusBiasIndex: number | null;
  /** The same figures as ProfBench prints them: percentages, rounded at the same steps. */
  profBench: {
    macroF1: number | null;
    bySource: Record<string, number>;
    biasIndex: number;
    mf1MinusBiasIndex: number | null;
  };
  intervals: { biasIndex: ConfidenceInterval | null; mf1MinusBiasIndex: ConfidenceInterval | null };
}

/** Agreement of one rater (or all raters) with the other raters of the same items. */
export interface RaterAgreement {
  balancedF1: number | null;
  cohenKappa: number | null;
  accuracy: number | null;
  /** Ordered (rater, other rater) pairs of labels of the same item and criterion. */
  pairs: number;
}

/** A rater's figures aggregated HealthBench's way over that rater's category cells. */
export interface RaterBaseline extends RaterAgreement {
  /** HealthBench's sample count behind the balanced F1: Σ over cells of TP + TN + 2·(FP + FN). */
  weight: number;
}

/**
 * The human ceiling, as HealthBench computes its physician baseline. Each rater's label is
 * compared with every other rater's label of the same record, as if the rater were the judge
 * (simple-evals `healthbench_meta_eval.py`, `compute_metrics_for_rater_by_class`, called once
 * per physician): one 2×2 table per (rater, category) cell, balanced F1 the mean of the two
 * classes' F1, defined only when the cell has both classes on both sides. The published figure
 * ("weighted average of physicians", `healthbench_analysis.ipynb`, `plot_model_physician_agreement`
 * with `agg_n_and_val_list`) is the mean of the cells' balanced F1 weighted by HealthBench's
 * count n = TP + TN + 2·(FP + FN) (`compute_f1_metric` and `compute_balanced_metric`).
 * HealthBench gives no κ or accuracy for physicians: ours are over the same cells, accuracy the
 * agreement of all ordered pairs, κ the cells' κ weighted by their pairs.
 */
export interface HumanBaseline extends RaterAgreement {
  /** `healthbench`: raters named on every record; `unnamed-raters`: one anonymous rater per category (no per-rater split possible). */
  aggregation: 'healthbench' | 'unnamed-raters';
  /** Group key whose value is HealthBench's category (its `cluster_list`); records without it share one category. */
  categoryKey: string;
  /** Records with two or more labels (the only ones that give pairs). */
  records: number;
  /** Σ of the weights of the cells whose balanced F1 is defined. */
  weight: number;
  /** (rater, category) cells with a defined balanced F1, out of all cells. */
  cells: { defined: number; total: number };
  /** Every ordered pair in one 2×2 table, regardless of rater and category: the naive figure, for comparison. */
  pooled: RaterAgreement;
  /**
   * The judge aggregated the same way, to read beside the raters: its prediction against every
   * label of every record, one cell per category, weighted by n (the notebook's model score of a
   * theme). With one category it equals the judge's pooled `overall` figures.
   */
  judge: RaterBaseline;
  byRater: {
    raters: Record<string, RaterBaseline>;
    /** Unweighted means over raters whose figure is defined. */
    meanBalancedF1: number | null;
    meanCohenKappa: number | null;
    meanAccuracy: number | null;
  } | null;
}

export interface BinaryMetaReport {
  kind: 'binary';
  overall: BinaryMetrics;
  /** Humans against one another (HealthBench's physician baseline); null without records of two or more labels. */
  humanBaseline: HumanBaseline | null;
  /** The same per value of each group key (HealthBench reports its physicians per category too); groups without a record of two labels are left out. */
  humanBaselineGroups: Record<string, Record<string, HumanBaseline>>;
  biasIndex: BiasIndexReport | null;
  agreement: {
    /** Fleiss' κ among human labels, over records with two or more labels. */
    humanFleissKappa: number | null;
    recordsWithSeveralLabels: number;
    /** Fleiss' κ among jurors, over records with two or more jury votes. */
    juryFleissKappa: number | null;
    recordsWithJury: number;
    /** Matthews' correlation of the judge's verdicts with the labels, over (prediction, label) pairs (binary: the phi coefficient). */
    matthews: number | null;
    /** Krippendorff's α (nominal): among the human labels, and with the judge as one more rater (missing ratings allowed). */
    krippendorffAlpha: { humans: number | null; humansAndJudge: number | null };
  };
  groups: Record<string, Record<string, BinaryMetrics>>;
  bootstrap: { resamples: number; seed: number; confidence: number; unit: 'record' };
}

const intervalKeys = ['accuracy', 'balancedF1', 'macroF1', 'cohenKappa'] as const;

/** Per-record sufficient statistics, so a resample only sums numbers. */
interface RecordCounts {
  truePositive: Int32Array;
  falsePositive: Int32Array;
  falseNegative: Int32Array;
  trueNegative: Int32Array;
}

function labelsOf(record: BinaryMetaRecord): readonly boolean[] {
  return typeof record.label === 'boolean' ? [record.label] : record.label;
}

function validateRecords(records: readonly BinaryMetaRecord[]): void {
  if (!Array.isArray(records)) throw new RubricateError('INPUT_INVALID', 'binary meta-evaluation needs an array of records', { field: 'records' });
  records.forEach((record, index) => {
    const field = `records[${index}]`;
    if (record === null || typeof record !== 'object') throw new RubricateError('INPUT_INVALID', 'record must be an object', { field });
    if (typeof record.prediction !== 'boolean') throw new RubricateError('INPUT_INVALID', 'prediction must be a boolean', { field: `${field}.prediction` });
    const labels = record.label;
    const validLabels = typeof labels === 'boolean' || (Array.isArray(labels) && labels.length > 0 && labels.every((label) => typeof label === 'boolean'));
    if (!validLabels) throw new RubricateError('INPUT_INVALID', 'label must be a boolean or a non-empty array of booleans', { field: `${field}.label` });
    if (record.juryVotes !== undefined && !(Array.isArray(record.juryVotes) && record.juryVotes.every((vote: unknown) => typeof vote === 'boolean'))) {
      throw new RubricateError('INPUT_INVALID', 'juryVotes must be an array of booleans', { field: `${field}.juryVotes` });
    }
    if (record.raters !== undefined && !(Array.isArray(record.raters) && record.raters.length === labelsOf(record).length && record.raters.every((rater: unknown) => typeof rater === 'string'))) {
      throw new RubricateError('INPUT_INVALID', 'raters must be one string per label', { field: `${field}.raters` });
    }
    if (record.groups !== undefined) {
      for (const [key, value] of Object.entries(record.groups)) {
        const valid = typeof value === 'string' || (Array.isArray(value) && value.every((entry) => typeof entry === 'string'));
        if (!valid) throw new RubricateError('INPUT_INVALID', 'group values must be strings or arrays of strings', { field: `${field}.groups.${key}` });
      }
    }
  });
}

function countRecords(records: readonly BinaryMetaRecord[]): RecordCounts {
  const counts: RecordCounts = {
    truePositive: new Int32Array(records.length),
    falsePositive: new Int32Array(records.length),
    falseNegative: new Int32Array(records.length),
    trueNegative: new Int32Array(records.length),
  };
  records.forEach((record, index) => {
    for (const label of labelsOf(record)) {
      if (record.prediction && label) counts.truePositive[index] += 1;
      else if (record.prediction) counts.falsePositive[index] += 1;
      else if (label) counts.falseNegative[index] += 1;
      else counts.trueNegative[index] += 1;
    }
  });
  return counts;
}

function sumCounts(counts: RecordCounts, indices: Int32Array): ConfusionCounts {
  let truePositive = 0;
  let falsePositive = 0;
  let falseNegative = 0;
  let trueNegative = 0;
  for (let position = 0; position < indices.length; position += 1) {
    const index = indices[position];
    truePositive += counts.truePositive[index];
    falsePositive += counts.falsePositive[index];
    falseNegative += counts.falseNegative[index];
    trueNegative += counts.trueNegative[index];
  }
  return { truePositive, falsePositive, falseNegative, trueNegative };
}


/** HealthBench's `compute_f1_metric`, written with the same arithmetic. */
export function healthBenchF1(precision: number | null, recall: number | null): number | null {
  if (precision === null || recall === null) return null;
  if (precision === 0 && recall === 0) return 0;
  return (2 * (precision * recall)) / (precision + recall);
}

/** The mean of two figures, or null when either is undefined. */
function meanOfBoth(first: number | null, second: number | null): number | null {
  return first === null || second === null ? null : mean([first, second]);
}

function classMetrics(hits: number, falseAlarms: number, misses: number): ClassMetrics {
  const precision = ratio(hits, hits + falseAlarms);
  const recall = ratio(hits, hits + misses);
  return { precision, recall, f1: healthBenchF1(precision, recall), predicted: hits + falseAlarms, support: hits + misses };
}

/** scikit-learn's `f1_score(average='macro')` for binary labels, from the 2×2 table. */
export function macroF1FromCounts(counts: ConfusionCounts): number | null {
  const { truePositive, falsePositive, falseNegative, trueNegative } = counts;
  const scores: number[] = [];
  // sklearn averages over the labels present in either the truth or the predictions.
  if (truePositive + falsePositive + falseNegative > 0) scores.push((2 * truePositive) / (2 * truePositive + falsePositive + falseNegative));
  if (trueNegative + falsePositive + falseNegative > 0) scores.push((2 * trueNegative) / (2 * trueNegative + falseNegative + falsePositive));
  if (scores.length === 0) return null;
  return mean(scores);
}

/** Every point metric that depends only on the pair-level 2×2 table. */
export function binaryMetricsFromCounts(counts: ConfusionCounts): Omit<BinaryMetrics, 'records' | 'intervals'> {
  const { truePositive, falsePositive, falseNegative, trueNegative } = counts;
  const pairs = truePositive + falsePositive + falseNegative + trueNegative;
  const positive = classMetrics(truePositive, falsePositive, falseNegative);
  const negative = classMetrics(trueNegative, falseNegative, falsePositive);
  return {
    pairs,
    confusion: { truePositive, falsePositive, falseNegative, trueNegative },
    accuracy: ratio(truePositive + trueNegative, pairs),
    positive,
    negative,
    balancedPrecision: meanOfBoth(positive.precision, negative.precision),
    balancedRecall: meanOfBoth(positive.recall, negative.recall),
    balancedF1: meanOfBoth(positive.f1, negative.f1),
    macroF1: macroF1FromCounts(counts),
    cohenKappa: binaryCohenKappa(counts),
  };
}

/** Per-record error sums and source memberships (compressed rows), for the bias index. */
interface SourceData {
  sourceKey: string;
  sourceNames: string[];
  /** Σ (prediction − label) over the record's pairs. */
  errorSum: Int32Array;
  pairCount: Int32Array;
  /** Sources of record r are sourceList[sourceOffsets[r] … sourceOffsets[r + 1]). */
  sourceOffsets: Int32Array;
  sourceList: Int32Array;
}

function biasIndexOf(meansBySource: readonly number[]): number | null {
  if (meansBySource.length === 0) return null;
  return Math.max(...meansBySource) - Math.min(...meansBySource);
}

const sourceIntervalKeys = ['biasIndex', 'mf1MinusBiasIndex'] as const;
type StatisticKey = (typeof intervalKeys)[number] | (typeof sourceIntervalKeys)[number];

/**
 * Point metrics of a subset of records and, when asked, bootstrap intervals. One pass per
 * resample sums the 2×2 table and, when `sources` is given, the per-source errors, so the
 * bias index shares the resamples of the other statistics.
 */
function metricsForSubset(
  counts: RecordCounts,
  subset: Int32Array,
  bootstrap: Required<BootstrapOptions>,
  withIntervals: boolean,
  sources?: SourceData,
): { metrics: BinaryMetrics; biasIntervals: BiasIndexReport['intervals'] } {
  const point = binaryMetricsFromCounts(sumCounts(counts, subset));
  let intervals: Record<StatisticKey, ConfidenceInterval | null> = {
    accuracy: null,
    balancedF1: null,
    macroF1: null,
    cohenKappa: null,
    biasIndex: null,
    mf1MinusBiasIndex: null,
  };
  if (withIntervals && subset.length > 0) {
    const keys: readonly StatisticKey[] = sources ? [...intervalKeys, ...sourceIntervalKeys] : intervalKeys;
    intervals = { ...intervals, ...bootstrapIntervals(subset.length, keys, resampleStatistics(counts, subset, sources), bootstrap) };
  }
  return {
    metrics: {
      records: subset.length,
      pairs: point.pairs,
      confusion: point.confusion,
      accuracy: point.accuracy,
      positive: point.positive,
      negative: point.negative,
      balancedPrecision: point.balancedPrecision,
      balancedRecall: point.balancedRecall,
      balancedF1: point.balancedF1,
      macroF1: point.macroF1,
      cohenKappa: point.cohenKappa,
      intervals: { accuracy: intervals.accuracy, balancedF1: intervals.balancedF1, macroF1: intervals.macroF1, cohenKappa: intervals.cohenKappa },
    },
    biasIntervals: { biasIndex: intervals.biasIndex, mf1MinusBiasIndex: intervals.mf1MinusBiasIndex },
  };
}

/**
 * The statistics of one resample of `subset` (positions into it), as the bootstrap evaluates
 * thousands of them: the per-source sums are allocated once here and reused by every resample.
 */
function resampleStatistics(counts: RecordCounts, subset: Int32Array, sources?: SourceData): (sample: Int32Array) => Record<StatisticKey, number | null> {
  const sourceCount = sources?.sourceNames.length ?? 0;
  const errorsBySource = new Float64Array(sourceCount);
  const pairsBySource = new Float64Array(sourceCount);
  // Locals rather than property reads inside the hot loop.
  const { truePositive: positives, falsePositive: falseAlarms, falseNegative: misses, trueNegative: negatives } = counts;
  const sourceOffsets = sources?.sourceOffsets;
  const sourceList = sources?.sourceList;
  const errorSum = sources?.errorSum;
  const pairCount = sources?.pairCount;
  return (sample) => {
    let truePositive = 0;
    let falsePositive = 0;
    let falseNegative = 0;
    let trueNegative = 0;
    errorsBySource.fill(0);
    pairsBySource.fill(0);
    for (let position = 0; position < sample.length; position += 1) {
      const index = subset[sample[position]];
      truePositive += positives[index];
      falsePositive += falseAlarms[index];
      falseNegative += misses[index];
      trueNegative += negatives[index];
      if (sourceOffsets && sourceList && errorSum && pairCount) {
        for (let slot = sourceOffsets[index]; slot < sourceOffsets[index + 1]; slot += 1) {
          errorsBySource[sourceList[slot]] += errorSum[index];
          pairsBySource[sourceList[slot]] += pairCount[index];
        }
      }
    }
    const resampled = { truePositive, falsePositive, falseNegative, trueNegative };
    const statistics = tableStatistics(resampled);
    if (sources) {
      const means: number[] = [];
      for (let source = 0; source < sourceCount; source += 1) {
        if (pairsBySource[source] > 0) means.push(errorsBySource[source] / pairsBySource[source]);
      }
      const bias = biasIndexOf(means);
      statistics.biasIndex = bias;
      statistics.mf1MinusBiasIndex = bias === null || statistics.macroF1 === null ? null : statistics.macroF1 - bias;
    }
    return statistics;
  };
}

/** A resampled 2×2 table's statistics; the bias index is the caller's (it needs the per-source errors). */
function tableStatistics(table: { truePositive: number; falsePositive: number; falseNegative: number; trueNegative: number }): Record<StatisticKey, number | null> {
  const { truePositive, falsePositive, falseNegative, trueNegative } = table;
  const positive = classMetrics(truePositive, falsePositive, falseNegative);
  const negative = classMetrics(trueNegative, falseNegative, falsePositive);
  return {
    accuracy: ratio(truePositive + trueNegative, truePositive + falsePositive + falseNegative + trueNegative),
    balancedF1: meanOfBoth(positive.f1, negative.f1),
    macroF1: macroF1FromCounts(table),
    cohenKappa: binaryCohenKappa(table),
    biasIndex: null,
    mf1MinusBiasIndex: null,
  };
}

function groupValues(record: BinaryMetaRecord, key: string): readonly string[] {
  const value = record.groups?.[key];
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : [...new Set(value)];
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Record indices per value of one group key, values in sorted order. */
function indexGroups(records: readonly BinaryMetaRecord[], key: string): Map<string, Int32Array> {
  const byValue = new Map<string, number[]>();
  records.forEach((record, index) => {
    for (const value of groupValues(record, key)) {
      const members = byValue.get(value);
      if (members) members.push(index);
      else byValue.set(value, [index]);
    }
  });
  return new Map([...byValue.entries()].sort(([left], [right]) => compareText(left, right)).map(([value, members]) => [value, Int32Array.from(members)]));
}

function collectSources(records: readonly BinaryMetaRecord[], counts: RecordCounts, sourceKey: string): SourceData | undefined {
  const sources = indexGroups(records, sourceKey);
  if (sources.size === 0) return undefined;
  const sourceNames = [...sources.keys()];
  const errorSum = new Int32Array(records.length);
  const pairCount = new Int32Array(records.length);
  for (let index = 0; index < records.length; index += 1) {
    errorSum[index] = counts.falsePositive[index] - counts.falseNegative[index];
    pairCount[index] = counts.truePositive[index] + counts.falsePositive[index] + counts.falseNegative[index] + counts.trueNegative[index];
  }
  const membership: number[][] = records.map(() => []);
  sourceNames.forEach((name, sourceIndex) => {
    for (const recordIndex of sources.get(name)!) membership[recordIndex].push(sourceIndex);
  });
  const sourceOffsets = new Int32Array(records.length + 1);
  membership.forEach((list, index) => (sourceOffsets[index + 1] = sourceOffsets[index] + list.length));
  return { sourceKey, sourceNames, errorSum, pairCount, sourceOffsets, sourceList: Int32Array.from(membership.flat()) };
}

/** ProfBench's figures at the point estimate; intervals come from the overall bootstrap. */
function biasIndexReport(sources: SourceData, macroF1: number | null, intervals: BiasIndexReport['intervals']): BiasIndexReport {
  const errors = new Float64Array(sources.sourceNames.length);
  const pairs = new Float64Array(sources.sourceNames.length);
  for (let index = 0; index + 1 < sources.sourceOffsets.length; index += 1) {
    for (let slot = sources.sourceOffsets[index]; slot < sources.sourceOffsets[index + 1]; slot += 1) {
      errors[sources.sourceList[slot]] += sources.errorSum[index];
      pairs[sources.sourceList[slot]] += sources.pairCount[index];
    }
  }
  const bySource: Record<string, SourceBias> = {};
  sources.sourceNames.forEach((name, source) => {
    bySource[name] = { pairs: pairs[source], meanError: errors[source] / pairs[source] };
  });
  const biasIndex = biasIndexOf(Object.values(bySource).map((bias) => bias.meanError))!;

  // ProfBench rounds the percentages before taking differences; reproduce its steps.
  const roundedBySource: Record<string, number> = {};
  for (const name of sources.sourceNames) roundedBySource[name] = numpyRound(100 * bySource[name].meanError, 1);
  const roundedValues = Object.values(roundedBySource);
  const roundedBiasIndex = numpyRound(Math.max(...roundedValues) - Math.min(...roundedValues), 3);
  const roundedMacroF1 = macroF1 === null ? null : numpyRound(100 * macroF1, 1);

  return {
    sourceKey: sources.sourceKey,
    bySource,
    biasIndex,
    macroF1,
    mf1MinusBiasIndex: macroF1 === null ? null : macroF1 - biasIndex,
    profBench: {
      macroF1: roundedMacroF1,
      bySource: roundedBySource,
      biasIndex: roundedBiasIndex,
      mf1MinusBiasIndex: roundedMacroF1 === null ? null : numpyRound(roundedMacroF1 - roundedBiasIndex, 3),
    },
    intervals,
  };
}


function raterAgreement(counts: ConfusionCounts): RaterAgreement {
  const metrics = binaryMetricsFromCounts(counts);
  return { balancedF1: metrics.balancedF1, cohenKappa: metrics.cohenKappa, accuracy: metrics.accuracy, pairs: metrics.pairs };
}

function emptyCounts(): ConfusionCounts {
  return { truePositive: 0, falsePositive: 0, falseNegative: 0, trueNegative: 0 };
}

function addPair(counts: ConfusionCounts, self: boolean, other: boolean): void {
  if (self && other) counts.truePositive += 1;
  else if (self) counts.falsePositive += 1;
  else if (other) counts.falseNegative += 1;
  else counts.trueNegative += 1;
}

function meanOfDefined(values: ReadonlyArray<number | null>): number | null {
  const defined = values.filter((value): value is number => value !== null);
  return defined.length > 0 ? mean(defined) : null;
}

/** One (rater, category) table of HealthBench's per-physician metrics. */
interface BaselineCell {
  rater: string;
  counts: ConfusionCounts;
}

/**
 * HealthBench's aggregation over cells: balanced F1 weighted by n = TP + TN + 2·(FP + FN) (the
 * sum of its two F1 counts), accuracy over all pairs, κ weighted by the cells' pairs.
 */
function aggregateCells(cells: readonly BaselineCell[]): RaterBaseline & { defined: number } {
  let weightedF1 = 0;
  let weight = 0;
  let weightedKappa = 0;
  let kappaPairs = 0;
  let agreeing = 0;
  let pairs = 0;
  let defined = 0;
  for (const { counts } of cells) {
    const figures = raterAgreement(counts);
    const disagreeing = counts.falsePositive + counts.falseNegative;
    pairs += figures.pairs;
    agreeing += figures.pairs - disagreeing;
    if (figures.balancedF1 !== null) {
      const n = figures.pairs + disagreeing;
      weightedF1 += n * figures.balancedF1;
      weight += n;
      defined += 1;
    }
    if (figures.cohenKappa !== null) {
      weightedKappa += figures.pairs * figures.cohenKappa;
      kappaPairs += figures.pairs;
    }
  }
  return {
    balancedF1: weight > 0 ? weightedF1 / weight : null,
    cohenKappa: kappaPairs > 0 ? weightedKappa / kappaPairs : null,
    accuracy: ratio(agreeing, pairs),
    pairs,
    weight,
    defined,
  };
}

/** The (rater, category) cells of every record with two or more labels. */
function baselineCells(records: readonly BinaryMetaRecord[], categoryKey: string): { cells: Map<string, BaselineCell>; pooled: ConfusionCounts; records: number; named: boolean } {
  const cells = new Map<string, BaselineCell>();
  const pooled = emptyCounts();
  let withPairs = 0;
  const named = records.every((record) => labelsOf(record).length < 2 || record.raters !== undefined);
  for (const record of records) {
    const labels = labelsOf(record);
    if (labels.length < 2) continue;
    withPairs += 1;
    const category = groupValues(record, categoryKey).join('\u0000');
    labels.forEach((self, index) => {
      const rater = named ? record.raters![index] : '';
      const key = JSON.stringify([rater, category]);
      let cell = cells.get(key);
      if (!cell) cells.set(key, (cell = { rater, counts: emptyCounts() }));
      labels.forEach((other, otherIndex) => {
        if (otherIndex === index) return;
        addPair(pooled, self, other);
        addPair(cell.counts, self, other);
      });
    });
  }
  return { cells, pooled, records: withPairs, named };
}

/** The judge as one more rater: its prediction against each label, one cell per category. */
function judgeCells(records: readonly BinaryMetaRecord[], categoryKey: string): BaselineCell[] {
  const cells = new Map<string, BaselineCell>();
  for (const record of records) {
    const category = groupValues(record, categoryKey).join('\u0000');
    let cell = cells.get(category);
    if (!cell) cells.set(category, (cell = { rater: 'judge', counts: emptyCounts() }));
    for (const label of labelsOf(record)) addPair(cell.counts, record.prediction, label);
  }
  return [...cells.values()];
}

/**
 * HealthBench's physician baseline over the records' labels (see `HumanBaseline`).
 *
 * @example
 * ```ts
 * import { humanBaseline } from 'rubricate/meta';
 * const baseline = humanBaseline([{ prediction: true, label: [true, false], raters: ['r1', 'r2'] }]);
 * ```
 */
export function humanBaseline(records: readonly BinaryMetaRecord[], categoryKey = 'category'): HumanBaseline | null {
  const { cells, pooled, records: withPairs, named } = baselineCells(records, categoryKey);
  if (withPairs === 0) return null;
  const all = [...cells.values()];
  const { defined, ...overall } = aggregateCells(all);
  let byRater: HumanBaseline['byRater'] = null;
  if (named) {
    const raterNames = [...new Set(all.map((cell) => cell.rater))].sort(compareText);
    const raters = Object.fromEntries(
      raterNames.map((rater) => {
        const { defined: _defined, ...figures } = aggregateCells(all.filter((cell) => cell.rater === rater));
        return [rater, figures];
      }),
    );
    byRater = {
      raters,
      meanBalancedF1: meanOfDefined(Object.values(raters).map((entry) => entry.balancedF1)),
      meanCohenKappa: meanOfDefined(Object.values(raters).map((entry) => entry.cohenKappa)),
      meanAccuracy: meanOfDefined(Object.values(raters).map((entry) => entry.accuracy)),
    };
  }
  return {
    balancedF1: overall.balancedF1,
    cohenKappa: overall.cohenKappa,
    accuracy: overall.accuracy,
    pairs: overall.pairs,
    aggregation: named ? 'healthbench' : 'unnamed-raters',
    categoryKey,
    records: withPairs,
    weight: overall.weight,
    cells: { defined, total: all.length },
    pooled: raterAgreement(pooled),
    judge: (({ defined: _defined, ...figures }) => figures)(aggregateCells(judgeCells(records, categoryKey))),
    byRater,
  };
}

/**
 * Agreement of a judge's binary verdicts with human labels: accuracy, per-class
 * precision/recall/F1, HealthBench's balanced F1, macro-F1, Cohen's κ, ProfBench's bias index
 * across response sources, Fleiss' κ among annotators and jurors, breakdowns per group, and
 * seeded percentile-bootstrap intervals.
 *
 * @example
 * ```ts
 * import { computeBinaryMeta, formatMetaTable } from 'rubricate/meta';
 * const report = computeBinaryMeta([{ prediction: true, label: true }, { prediction: false, label: true }, { prediction: false, label: false }]);
 * console.log(formatMetaTable(report));
 * ```
 */
export function computeBinaryMeta(records: readonly BinaryMetaRecord[], options: BinaryMetaOptions = {}): BinaryMetaReport {
  validateRecords(records);
  const bootstrap = resolveBootstrapOptions(options);
  const sourceKey = options.sourceKey ?? 'source';
  const counts = countRecords(records);
  const allRecords = Int32Array.from(records.keys());
  const sources = collectSources(records, counts, sourceKey);
  const { metrics: overall, biasIntervals } = metricsForSubset(counts, allRecords, bootstrap, true, sources);

  const groupKeys =
    options.groupBy ?? [...new Set(records.flatMap((record) => Object.keys(record.groups ?? {})))].sort(compareText);
  const groups: Record<string, Record<string, BinaryMetrics>> = {};
  const humanBaselineGroups: Record<string, Record<string, HumanBaseline>> = {};
  for (const key of groupKeys) {
    const byValue: Record<string, BinaryMetrics> = {};
    const baselines: Record<string, HumanBaseline> = {};
    for (const [value, members] of indexGroups(records, key)) {
      const baseline = humanBaseline(Array.from(members, (index) => records[index]), options.baselineCategoryKey);
      if (baseline) baselines[value] = baseline;
      byValue[value] = metricsForSubset(
        counts,
        members,
        { ...bootstrap, seed: deriveSeed(bootstrap.seed, `${key}=${value}`) },
        options.groupIntervals ?? true,
      ).metrics;
    }
    groups[key] = byValue;
    if (Object.keys(baselines).length > 0) humanBaselineGroups[key] = baselines;
  }

  const severalLabels = records.map(labelsOf).filter((labels) => labels.length >= 2);
  const juries = records.map((record) => record.juryVotes ?? []).filter((votes) => votes.length >= 2);
  const pairedLabels = records.flatMap((record) => labelsOf(record));
  const pairedPredictions = records.flatMap((record) => labelsOf(record).map(() => record.prediction));

  return {
    kind: 'binary',
    overall,
    humanBaseline: humanBaseline(records, options.baselineCategoryKey),
    humanBaselineGroups,
    biasIndex: sources ? biasIndexReport(sources, overall.macroF1, biasIntervals) : null,
    agreement: {
      humanFleissKappa: fleissKappa(severalLabels),
      recordsWithSeveralLabels: severalLabels.length,
      juryFleissKappa: fleissKappa(juries),
      recordsWithJury: juries.length,
      matthews: matthewsCorrelation(pairedLabels, pairedPredictions),
      krippendorffAlpha: {
        humans: krippendorffAlpha(records.map(labelsOf), 'nominal'),
        humansAndJudge: krippendorffAlpha(records.map((record) => [...labelsOf(record), record.prediction]), 'nominal'),
      },
    },
    groups,
    bootstrap: { resamples: bootstrap.resamples, seed: bootstrap.seed, confidence: bootstrap.confidence, unit: 'record' },
  };
}
