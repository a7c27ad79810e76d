/**
 * `rubricate calibrate --format results`: a score calibration (`spec/calibration.ts`) learnt from
 * a results file and the overall scores people gave the same items (`{"id": ITEM, "score": N}`
 * per line). The features are the verdicts of the criteria every labelled result has (P(met)
 * where graded with probabilities); the model is a ridge regression whose penalty is chosen by
 * 5-fold cross-validation on a seeded training split of the items. The held-out split is only
 * scored, beside the results' own scores: it never chooses anything.
 */
import { RubricateError } from '../errors.js';
import { readResults } from '../results/results.js';
import { calibratedScore, criterionFeature, sealCalibration, type Calibration } from '../spec/calibration.js';
import { correlationsWithIntervals, type CorrelationEstimate } from '../statistics/correlation.js';
import { predictRidge, ridgeSystem, solveRidge } from '../statistics/ridge.js';
import { isRecord } from '../util/is-record.js';
import { parseLineJson, readLines } from '../util/jsonl.js';
import { seededRandom, shuffled } from '../util/random.js';
import { ridgePenalties, calibrationFolds } from './llm-rubric-calibration.js';
import { scoreAgreement, type ScoreAgreement } from './llm-rubric.js';

/** Bound on the labelled items one file may hold. */
export const maxScoreLabels = 1_000_000;

/** Overall human scores by item id, from `{"id": ITEM, "score": N}` lines; a bad line is an error naming it. */
export async function readScoreLabels(file: string): Promise<Map<string, number>> {
  const scores = new Map<string, number>();
  for await (const { line, text, error } of readLines(file)) {
    const parsed = parseLineJson(text, error);
    if (!parsed.ok) throw new RubricateError('INPUT_INVALID', parsed.error, { file, line });
    const value = parsed.value;
    if (!isRecord(value)) throw new RubricateError('INPUT_INVALID', 'a score label is a JSON object {"id": …, "score": …}', { file, line });
    const id = typeof value.id === 'number' ? String(value.id) : value.id;
    if (typeof id !== 'string' || id === '') throw new RubricateError('INPUT_INVALID', 'id must be a non-empty string or a number (the item id in the results file)', { file, line, field: 'id' });
    if (typeof value.score !== 'number' || !Number.isFinite(value.score)) throw new RubricateError('INPUT_INVALID', 'score must be a number (the overall score people gave)', { file, line, field: 'score' });
    if (scores.has(id)) throw new RubricateError('INPUT_INVALID', `item ${id} has a score already`, { file, line, field: 'id' });
    if (scores.size >= maxScoreLabels) throw new RubricateError('INPUT_INVALID', `more than ${maxScoreLabels} labelled items`, { file, line });
    scores.set(id, value.score);
  }
  return scores;
}

interface Row {
  id: string;
  human: number;
  raw: number | null;
  features: number[];
}

export interface ScoreCalibrationReport {
  calibration: Calibration;
  fit: {
    inputs: { results: string; labels: string };
    items: { labelled: number; used: number; withoutVerdicts: number; unlabelledResults: number; labelsWithoutResult: number; invalidResultLines: number };
    /** A seeded split of the labelled items, or the split `align` made (`from: 'align'`). */
    split: { seed: number; testFraction: number; from?: 'align'; train: string[]; test: string[] };
    crossValidation: Array<{ lambda: number; meanSquaredError: number }>;
    /** Held-out items only: the calibrated score, and the results' own score (correlations only: it is on another scale). */
    test: { calibrated: ScoreAgreement; rawScore: { pearson: CorrelationEstimate; spearman: CorrelationEstimate; kendall: CorrelationEstimate } };
  };
}

/** The labelled results' rows, on the criteria every labelled result has. */
async function labelledRows(resultsFile: string, labels: ReadonlyMap<string, number>): Promise<{ criteria: string[]; rows: Row[]; counts: Omit<ScoreCalibrationReport['fit']['items'], 'labelled' | 'used'> }> {
  const labelled: Array<{ id: string; human: number; raw: number | null; criteria: Parameters<typeof criterionFeature>[0][] }> = [];
  let unlabelledResults = 0;
  let invalidResultLines = 0;
  for await (const entry of readResults(resultsFile)) {
    if (entry.kind === 'invalid') {
      invalidResultLines += 1;
      continue;
    }
    const human = labels.get(entry.record.id);
    if (human === undefined) unlabelledResults += 1;
    else labelled.push({ id: entry.record.id, human, raw: entry.record.score, criteria: entry.record.criteria });
  }
  const seen = new Set(labelled.map((entry) => entry.id));
  const labelsWithoutResult = [...labels.keys()].filter((id) => !seen.has(id)).length;
  if (labelled.length === 0) throw new RubricateError('INPUT_INVALID', 'no result has a score label: check that the ids match', { file: resultsFile });
  let common: Set<string> = new Set(labelled[0].criteria.map((criterion) => criterion.id));
  for (const entry of labelled) common = new Set(entry.criteria.map((criterion) => criterion.id).filter((id) => common.has(id)));
  const criteria = [...common].sort();
  if (criteria.length === 0) throw new RubricateError('INPUT_INVALID', 'the labelled results share no criterion: a score calibration reads the same criteria of every item', { file: resultsFile });
  const rows: Row[] = [];
  let withoutVerdicts = 0;
  for (const entry of labelled) {
    const byId = new Map(entry.criteria.map((criterion) => [criterion.id, criterion]));
    const features = criteria.map((id) => criterionFeature(byId.get(id)!));
    if (features.some((feature) => feature === undefined)) withoutVerdicts += 1;
    else rows.push({ id: entry.id, human: entry.human, raw: entry.raw, features: features as number[] });
  }
  return { criteria, rows, counts: { withoutVerdicts, unlabelledResults, labelsWithoutResult, invalidResultLines } };
}

function crossValidate(rows: readonly Row[], seed: number): Array<{ lambda: number; meanSquaredError: number }> {
  const order = shuffled(rows.map((row) => row.id).sort(), seededRandom(seed));
  const foldOf = new Map(order.map((id, index) => [id, index % calibrationFolds]));
  const squared = new Float64Array(ridgePenalties.length);
  for (let fold = 0; fold < calibrationFolds; fold += 1) {
    const training = rows.filter((row) => foldOf.get(row.id) !== fold);
    const system = ridgeSystem(training.map((row) => row.features), training.map((row) => row.human));
    const models = ridgePenalties.map((lambda) => solveRidge(system, lambda));
    for (const row of rows) {
      if (foldOf.get(row.id) !== fold) continue;
      models.forEach((model, index) => (squared[index] += (predictRidge(model, row.features) - row.human) ** 2));
    }
  }
  return ridgePenalties.map((lambda, index) => ({ lambda, meanSquaredError: squared[index] / rows.length }));
}

/**
 * Fits a score calibration on a training split and scores it on the held-out one: a seeded split
 * of the labelled items, or a given one (`align`'s), whose other items are left out.
 *
 * @example
 * ```ts
 * import { fitScoreCalibration } from 'rubricate/meta';
 * const report = await fitScoreCalibration('results.jsonl', 'overall-scores.jsonl', { seed: 0, testFraction: 0.2 });
 * ```
 */
export async function fitScoreCalibration(
  resultsFile: string,
  labelsFile: string,
  options: { seed: number; testFraction: number; confidence?: number; split?: { train: readonly string[]; test: readonly string[] } },
): Promise<ScoreCalibrationReport> {
  const labels = await readScoreLabels(labelsFile);
  const { criteria, rows, counts } = await labelledRows(resultsFile, labels);
  let train: Row[];
  let test: Row[];
  if (options.split) {
    const trainIds = new Set(options.split.train);
    const testIds = new Set(options.split.test);
    train = rows.filter((row) => trainIds.has(row.id));
    test = rows.filter((row) => testIds.has(row.id));
  } else {
    const ids = shuffled(rows.map((row) => row.id).sort(), seededRandom(options.seed));
    const testIds = new Set(ids.slice(0, Math.round(ids.length * options.testFraction)));
    train = rows.filter((row) => !testIds.has(row.id));
    test = rows.filter((row) => testIds.has(row.id));
  }
  if (train.length <= calibrationFolds || test.length < 3) throw new RubricateError('INPUT_INVALID', `${rows.length} labelled results with a verdict on every shared criterion: too few to fit on ${train.length} and test on ${test.length}`, { file: labelsFile });
  const crossValidation = crossValidate(train, options.seed);
  const best = crossValidation.reduce((left, right) => (right.meanSquaredError < left.meanSquaredError ? right : left));
  const model = solveRidge(ridgeSystem(train.map((row) => row.features), train.map((row) => row.human)), best.lambda);
  const humans = train.map((row) => row.human);
  const calibration = sealCalibration({ kind: 'ridge', target: 'overall human score', criteria, intercept: model.intercept, coefficients: model.coefficients, lambda: best.lambda, range: [Math.min(...humans), Math.max(...humans)] });
  const byId = (row: Row) => criteria.map((id, index) => ({ id, status: 'ok', probability: row.features[index] }));
  const calibrated = test.map((row) => calibratedScore(calibration, byId(row)).score!);
  const rawRows = test.filter((row) => row.raw !== null);
  const raw = correlationsWithIntervals(rawRows.map((row) => row.raw!), rawRows.map((row) => row.human), options.confidence);
  return {
    calibration,
    fit: {
      inputs: { results: resultsFile, labels: labelsFile },
      items: { labelled: labels.size, used: rows.length, ...counts },
      split: { seed: options.seed, testFraction: options.testFraction, ...(options.split ? { from: 'align' as const } : {}), train: train.map((row) => row.id), test: test.map((row) => row.id) },
      crossValidation,
      test: { calibrated: scoreAgreement(test.map((row) => row.human), calibrated, options.confidence), rawScore: raw },
    },
  };
}
