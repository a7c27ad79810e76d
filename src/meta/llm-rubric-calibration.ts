/**
 * A calibrator for LLM-Rubric: from the judge's answer distributions to all nine questions, and
 * optionally the annotator, to the human's overall satisfaction Q0. A ridge regression on one of
 * three feature sets (the 9 × 4 probabilities, their logarithms, or the nine expected answers),
 * with or without per-annotator terms (an offset each, and a slope on the judge's expected Q0:
 * the simplest form of the paper's judge-specific parameters). The penalty, the feature set and
 * the annotator terms are chosen by
 * K-fold cross-validation on the training set alone, with folds grouped by dialogue (the
 * synthetic set has about three annotators per dialogue, who share every feature). The test set
 * is only scored, never consulted: what is fitted and chosen is fixed before it is read.
 */
import { RubricateError } from '../errors.js';
import { seededRandom, shuffled } from '../util/random.js';
import { predictRidge, ridgeSystem, solveRidge, type RidgeModel } from '../statistics/ridge.js';
import { clip } from '../statistics/descriptive.js';
import { expectedAnswer, joinedAnswers, llmRubricQuestions, readLlmRubricSet, scoreAgreement, type LlmRubricSet, type LlmRubricSetName, type ScoreAgreement } from './llm-rubric.js';

/** The penalties cross-validation chooses from (on standardised features). */
export const ridgePenalties = [0.01, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000, 3000, 10000] as const;
export const calibrationFolds = 5;
/** The README's LLM-Rubric network on the real set, Q0 (its PyTorch reimplementation). */
export const publishedLlmRubric = { pearson: 0.31304019363805424, spearman: 0.367664375396213, kendall: 0.29084198763627717 } as const;

/** One human answer to Q0 with the judge's nine distributions of the same dialogue. */
interface CalibrationRow {
  textId: string;
  annotator: string;
  human: number;
  distributions: number[];
  rawExpected: number;
}

export const featureSets = ['probabilities', 'log-probabilities', 'expected-answers'] as const;
export type FeatureSet = (typeof featureSets)[number];
/** Probabilities are floored here before their logarithm is taken. */
const probabilityFloor = 1e-6;

function judgeFeatures(distributions: readonly number[], set: FeatureSet): number[] {
  if (set === 'probabilities') return [...distributions];
  if (set === 'log-probabilities') return distributions.map((value) => Math.log(Math.max(value, probabilityFloor)));
  return llmRubricQuestions.map((_, question) => expectedAnswer(distributions.slice(question * 4, question * 4 + 4)));
}

function featureNamesOf(set: FeatureSet): string[] {
  if (set === 'expected-answers') return llmRubricQuestions.map((question) => `${question}:E[answer]`);
  const name = set === 'probabilities' ? 'P' : 'log P';
  return llmRubricQuestions.flatMap((question) => [1, 2, 3, 4].map((answer) => `${question}:${name}(${answer})`));
}

function calibrationRows(set: LlmRubricSet): { rows: CalibrationRow[]; withoutAllQuestions: number } {
  const rows: CalibrationRow[] = [];
  let withoutAllQuestions = 0;
  for (const answer of joinedAnswers(set, 'Q0')) {
    const byQuestion = set.distributions.get(answer.textId)!;
    if (!llmRubricQuestions.every((question) => byQuestion.has(question))) {
      withoutAllQuestions += 1;
      continue;
    }
    rows.push({
      textId: answer.textId,
      annotator: answer.annotator,
      human: answer.human,
      distributions: llmRubricQuestions.flatMap((question) => byQuestion.get(question)!),
      rawExpected: expectedAnswer(answer.distribution),
    });
  }
  return { rows, withoutAllQuestions };
}

/** The calibrator as written to calibration.json: enough to apply it to new rows. */
export interface LlmRubricCalibrator {
  kind: 'ridge';
  target: 'Q0';
  featureSet: FeatureSet;
  features: string[];
  annotatorTerms: boolean;
  /** The annotators with terms: after the judge's features come one offset each, then one slope on the expected Q0 each. */
  annotators: string[];
  model: RidgeModel;
  /** Predictions are clipped to the answer scale. */
  range: [1, 4];
}

function featuresOf(row: CalibrationRow, set: FeatureSet, annotators: readonly string[]): number[] {
  const judge = judgeFeatures(row.distributions, set);
  if (annotators.length === 0) return judge;
  const centredExpected = row.rawExpected - 2.5;
  return [...judge, ...annotators.map((annotator) => (annotator === row.annotator ? 1 : 0)), ...annotators.map((annotator) => (annotator === row.annotator ? centredExpected : 0))];
}

interface Variant {
  lambda: number;
  featureSet: FeatureSet;
  annotatorTerms: boolean;
}

/** Calibrators of every penalty for one feature set and annotator choice: the normal equations are built once. */
function fitPenalties(rows: readonly CalibrationRow[], featureSet: FeatureSet, annotatorTerms: boolean, penalties: readonly number[]): LlmRubricCalibrator[] {
  const annotators = annotatorTerms ? [...new Set(rows.map((row) => row.annotator))].sort() : [];
  const system = ridgeSystem(rows.map((row) => featuresOf(row, featureSet, annotators)), rows.map((row) => row.human));
  return penalties.map((lambda) => ({ kind: 'ridge', target: 'Q0', featureSet, features: featureNamesOf(featureSet), annotatorTerms, annotators, model: solveRidge(system, lambda), range: [1, 4] }));
}

function fit(rows: readonly CalibrationRow[], variant: Variant): LlmRubricCalibrator {
  return fitPenalties(rows, variant.featureSet, variant.annotatorTerms, [variant.lambda])[0];
}

/** The calibrated Q0 of a row; an annotator the training set never saw gets no terms of its own. */
function predict(calibrator: LlmRubricCalibrator, row: CalibrationRow): number {
  return clip(predictRidge(calibrator.model, featuresOf(row, calibrator.featureSet, calibrator.annotators)), calibrator.range[0], calibrator.range[1]);
}

export interface CrossValidationEntry extends Variant {
  meanSquaredError: number;
}

/** Mean squared error over K folds grouped by dialogue, for every penalty, feature set, with and without annotator terms. */
function crossValidate(rows: readonly CalibrationRow[], seed: number): CrossValidationEntry[] {
  const dialogues = shuffled([...new Set(rows.map((row) => row.textId))].sort(), seededRandom(seed));
  const foldOf = new Map(dialogues.map((dialogue, index) => [dialogue, index % calibrationFolds]));
  const entries: CrossValidationEntry[] = [];
  for (const featureSet of featureSets) {
    for (const annotatorTerms of [false, true]) {
      const squared = new Float64Array(ridgePenalties.length);
      for (let fold = 0; fold < calibrationFolds; fold += 1) {
        const calibrators = fitPenalties(rows.filter((row) => foldOf.get(row.textId) !== fold), featureSet, annotatorTerms, ridgePenalties);
        for (const row of rows) {
          if (foldOf.get(row.textId) !== fold) continue;
          calibrators.forEach((calibrator, index) => (squared[index] += (predict(calibrator, row) - row.human) ** 2));
        }
      }
      ridgePenalties.forEach((lambda, index) => entries.push({ lambda, featureSet, annotatorTerms, meanSquaredError: squared[index] / rows.length }));
    }
  }
  return entries;
}

export interface LlmRubricCalibrationReport {
  format: 'llm-rubric';
  train: { set: LlmRubricSetName; rows: number; dialogues: number; annotators: number; rowsWithoutAllQuestions: number; folds: number; seed: number };
  crossValidation: CrossValidationEntry[];
  chosen: Variant;
  calibrator: LlmRubricCalibrator;
  test: {
    set: LlmRubricSetName;
    rows: number;
    rowsWithoutAllQuestions: number;
    /** Test annotators the training set never saw (they get no offset). */
    unseenAnnotators: string[];
    calibrated: ScoreAgreement;
    rawExpected: ScoreAgreement;
    published: typeof publishedLlmRubric;
  };
}

/**
 * `calibrate --format llm-rubric`: fit and choose on `train`, then score on `test`.
 *
 * @example
 * ```ts
 * import { calibrateLlmRubric } from 'rubricate/meta';
 * const report = await calibrateLlmRubric('llm-rubric/', { train: 'synthetic', test: 'real', seed: 0 });
 * ```
 */
export async function calibrateLlmRubric(directory: string, options: { train: LlmRubricSetName; test: LlmRubricSetName; seed: number; confidence?: number }): Promise<LlmRubricCalibrationReport> {
  if (options.train === options.test) throw new RubricateError('CONFIG_INVALID', `--train and --test must be different sets (both are ${options.train})`, { field: 'test' });
  const training = calibrationRows(await readLlmRubricSet(directory, options.train));
  if (training.rows.length < calibrationFolds * 2) throw new RubricateError('INPUT_INVALID', `the ${options.train} set has ${training.rows.length} rows with Q0 and all nine questions: too few to cross-validate`, { file: directory });
  const crossValidation = crossValidate(training.rows, options.seed);
  const best = crossValidation.reduce((left, right) => (right.meanSquaredError < left.meanSquaredError ? right : left));
  const chosen: Variant = { lambda: best.lambda, featureSet: best.featureSet, annotatorTerms: best.annotatorTerms };
  const calibrator = fit(training.rows, chosen);
  // Only now is the test set read.
  const testing = calibrationRows(await readLlmRubricSet(directory, options.test));
  const human = testing.rows.map((row) => row.human);
  const seen = new Set(training.rows.map((row) => row.annotator));
  return {
    format: 'llm-rubric',
    train: {
      set: options.train,
      rows: training.rows.length,
      dialogues: new Set(training.rows.map((row) => row.textId)).size,
      annotators: seen.size,
      rowsWithoutAllQuestions: training.withoutAllQuestions,
      folds: calibrationFolds,
      seed: options.seed,
    },
    crossValidation,
    chosen,
    calibrator,
    test: {
      set: options.test,
      rows: testing.rows.length,
      rowsWithoutAllQuestions: testing.withoutAllQuestions,
      unseenAnnotators: [...new Set(testing.rows.map((row) => row.annotator))].filter((annotator) => !seen.has(annotator)).sort(),
      calibrated: scoreAgreement(human, testing.rows.map((row) => predict(calibrator, row)), options.confidence),
      rawExpected: scoreAgreement(human, testing.rows.map((row) => row.rawExpected), options.confidence),
      published: publishedLlmRubric,
    },
  };
}

/** What `calibrate` prints: the real-set figures of the calibrated and raw answers beside the README's. */
export function formatCalibrationReport(report: LlmRubricCalibrationReport): string {
  const show = (value: number | null) => (value === null ? 'n/a' : value.toFixed(3));
  const line = (name: string, row: { pearson: number | null; spearman: number | null; kendall: number | null; rmse: number | null }) =>
    `${name.padEnd(26)} ${[row.pearson, row.spearman, row.kendall, row.rmse].map((value) => show(value).padStart(8)).join(' ')}`;
  const flat = (agreement: ScoreAgreement) => ({ pearson: agreement.pearson.value, spearman: agreement.spearman.value, kendall: agreement.kendall.value, rmse: agreement.rmse });
  const { test, chosen, train } = report;
  return [
    `trained on ${train.rows} ${train.set} rows (${train.dialogues} dialogues, ${train.annotators} annotators); cross-validation chose ${chosen.featureSet}, lambda ${chosen.lambda}, ${chosen.annotatorTerms ? 'with' : 'without'} per-annotator terms`,
    `Q0 on the ${test.set} set (${test.rows} rows)     pearson spearman  kendall     rmse`,
    line('calibrated (ridge)', flat(test.calibrated)),
    line('raw expected answer', flat(test.rawExpected)),
    line('LLM-Rubric (README)', { ...test.published, rmse: null }),
  ].join('\n');
}
