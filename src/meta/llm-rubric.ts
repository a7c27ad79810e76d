/**
 * LLM-Rubric (Microsoft, ACL 2024): for each dialogue and each of nine rubric questions
 * (Q0 overall satisfaction, Q1–Q8 dimensions), an LLM judge's probability of each answer 1–4,
 * and human judges' answers to the same questions. This module reads the published files and
 * rebuilds the README's baseline table: the judge's sampled answer (read from the committed
 * predictions file, where upstream drew it), its most probable answer, and its expected answer
 * Σ k·P(k) (probabilities renormalised when they sum below 1, as upstream does), each against
 * the human answer by RMSE, Pearson, Spearman (average ranks) and Kendall's τ-b, with the
 * count, the mean and the population standard deviation of the system's values.
 *
 * A human answer of 0 means "not applicable" and drops that question of that row only, as
 * upstream does; any other answer outside 1–4, a probability outside [0, 1], or four that do
 * not sum to 1 is an error naming the file, line and field.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RubricateError } from '../errors.js';
import { correlationsWithIntervals, type CorrelationEstimate } from '../statistics/correlation.js';
import { mean, populationStd } from '../statistics/descriptive.js';
import { rootMeanSquaredError } from '../statistics/prediction-error.js';
import { krippendorffAlpha } from '../statistics/krippendorff.js';
import { readLines } from '../util/jsonl.js';

export const llmRubricQuestions = ['Q0', 'Q1', 'Q2', 'Q3', 'Q4', 'Q5', 'Q6', 'Q7', 'Q8'] as const;
export type LlmRubricQuestion = (typeof llmRubricQuestions)[number];
export type LlmRubricSetName = 'real' | 'synthetic';
/** Bound on the rows one file may hold (the published files have at most 2,025). */
export const maxLlmRubricRows = 1_000_000;

/** One human judge's answers to one dialogue (null: not answered, or 0 for not applicable). */
export interface HumanAnswers {
  textId: string;
  annotator: string;
  answers: Record<LlmRubricQuestion, number | null>;
}

export interface LlmRubricSet {
  name: LlmRubricSetName;
  /** The judge's P(answer = 1..4) by dialogue, then question, renormalised where they summed below 1. */
  distributions: Map<string, Map<LlmRubricQuestion, number[]>>;
  humans: HumanAnswers[];
  files: { evaluations: string; humans: string };
}

const setFiles: Record<LlmRubricSetName, { folder: string; evaluations: string; humans: string }> = {
  real: { folder: 'real_data', evaluations: 'gpt-3.5-turbo-16k_real_evaluations_FIXED.tsv', humans: 'human_judges_real_convs_FIXED_ANON.tsv' },
  synthetic: { folder: 'synth_data', evaluations: 'gpt-3.5-turbo-16k_synth_evaluations_FIXED.tsv', humans: 'human_judges_synth_all_FIXED_ANON.tsv' },
};
const predictionsFile = { flat: 'predictions_real_convs_machine_baselines.tsv', upstream: 'experiments/real_data/predictions/real_convs_machine_baselines.tsv' };

/**
 * Where a file of the set is: the upstream repository's layout (`data/real_data/NAME`), or one
 * folder holding them as `real_data__NAME` (the copy kept beside the tests).
 */
function locate(directory: string, candidates: string[], what: string): string {
  for (const candidate of candidates) {
    const path = join(directory, candidate);
    if (existsSync(path)) return path;
  }
  throw new RubricateError('INPUT_UNREADABLE', `no ${what} in the LLM-Rubric folder (looked for ${candidates.join(', ')})`, { file: directory, field: 'input' });
}

function setCandidates(set: LlmRubricSetName, kind: 'evaluations' | 'humans'): string[] {
  const { folder } = setFiles[set];
  const name = setFiles[set][kind];
  return [`${folder}__${name}`, join('data', folder, name), join(folder, name)];
}

function setPath(directory: string, set: LlmRubricSetName, kind: 'evaluations' | 'humans'): string {
  return locate(directory, setCandidates(set, kind), `${set} ${kind} file (${setFiles[set][kind]})`);
}

/** Whether the folder holds both files of a set. */
function hasSet(directory: string, set: LlmRubricSetName): boolean {
  return (['evaluations', 'humans'] as const).every((kind) => setCandidates(set, kind).some((candidate) => existsSync(join(directory, candidate))));
}

/** Rows of a tab-separated file with a header line, as cell maps; a row with another number of cells is an error. */
async function* readTsv(file: string): AsyncGenerator<{ line: number; cells: Record<string, string> }> {
  let header: string[] | undefined;
  let rows = 0;
  for await (const { line, text, error } of readLines(file)) {
    if (error) throw error;
    const cells = text.replace(/\r$/, '').split('\t');
    if (!header) {
      header = cells.map((cell, index) => (index === 0 ? cell.replace(/^\uFEFF/, '') : cell).trim());
      continue;
    }
    if (cells.length !== header.length) throw new RubricateError('INPUT_INVALID', `row has ${cells.length} cells but the header names ${header.length} columns`, { file, line });
    rows += 1;
    if (rows > maxLlmRubricRows) throw new RubricateError('INPUT_INVALID', `more than ${maxLlmRubricRows} rows`, { file, line });
    const record: Record<string, string> = Object.create(null) as Record<string, string>;
    header.forEach((name, index) => (record[name] = cells[index].trim()));
    yield { line, cells: record };
  }
}

function requiredCell(cells: Record<string, string>, field: string, file: string, line: number): string {
  const value = cells[field];
  if (value === undefined || value === '') throw new RubricateError('INPUT_INVALID', `missing ${field}`, { file, line, field });
  return value;
}

function numberCell(cells: Record<string, string>, field: string, file: string, line: number): number {
  const text = requiredCell(cells, field, file, line);
  const value = Number(text);
  if (!Number.isFinite(value)) throw new RubricateError('INPUT_INVALID', `${field} is "${text}", not a number`, { file, line, field });
  return value;
}

function isQuestion(value: string): value is LlmRubricQuestion {
  return (llmRubricQuestions as readonly string[]).includes(value);
}

/** The judge's four probabilities, checked and renormalised when they sum below 1 (upstream's rule). */
function distributionOf(cells: Record<string, string>, file: string, line: number): number[] {
  const probabilities = [1, 2, 3, 4].map((answer) => {
    const field = `answer${answer}_prob`;
    const value = numberCell(cells, field, file, line);
    if (value < 0 || value > 1) throw new RubricateError('INPUT_INVALID', `${field} is ${value}, not a probability`, { file, line, field });
    return value;
  });
  const total = probabilities[0] + probabilities[1] + probabilities[2] + probabilities[3];
  if (Math.abs(total - 1) > 1e-3) throw new RubricateError('INPUT_INVALID', `the four probabilities sum to ${total}, not 1`, { file, line, field: 'answer1_prob' });
  return total < 1 ? probabilities.map((value) => value / total) : probabilities;
}

async function readDistributions(file: string): Promise<LlmRubricSet['distributions']> {
  const distributions: LlmRubricSet['distributions'] = new Map();
  for await (const { line, cells } of readTsv(file)) {
    const textId = requiredCell(cells, 'text_id', file, line);
    const question = requiredCell(cells, 'criterion', file, line);
    if (!isQuestion(question)) throw new RubricateError('INPUT_INVALID', `criterion "${question}" is not one of ${llmRubricQuestions.join(', ')}`, { file, line, field: 'criterion' });
    let byQuestion = distributions.get(textId);
    if (!byQuestion) distributions.set(textId, (byQuestion = new Map()));
    if (byQuestion.has(question)) throw new RubricateError('INPUT_INVALID', `(${textId}, ${question}) appears twice`, { file, line, field: 'criterion' });
    byQuestion.set(question, distributionOf(cells, file, line));
  }
  return distributions;
}

async function readHumans(file: string): Promise<HumanAnswers[]> {
  const humans: HumanAnswers[] = [];
  for await (const { line, cells } of readTsv(file)) {
    const answers = {} as Record<LlmRubricQuestion, number | null>;
    for (const question of llmRubricQuestions) {
      const text = cells[question];
      if (text === undefined) throw new RubricateError('INPUT_INVALID', `no ${question} column`, { file, line, field: question });
      const value = text === '' ? 0 : Number(text);
      if (!(Number.isInteger(value) && value >= 0 && value <= 4)) throw new RubricateError('INPUT_INVALID', `${question} is "${text}", not an answer 1–4 (or 0 for not applicable)`, { file, line, field: question });
      answers[question] = value === 0 ? null : value;
    }
    humans.push({ textId: requiredCell(cells, 'text_id', file, line), annotator: requiredCell(cells, 'annotator_id', file, line), answers });
  }
  return humans;
}

/** Reads one set (real or synthetic) from an LLM-Rubric folder. */
export async function readLlmRubricSet(directory: string, name: LlmRubricSetName): Promise<LlmRubricSet> {
  const files = { evaluations: setPath(directory, name, 'evaluations'), humans: setPath(directory, name, 'humans') };
  const [distributions, humans] = await Promise.all([readDistributions(files.evaluations), readHumans(files.humans)]);
  return { name, distributions, humans, files };
}

/** The expected answer Σ k·P(k) of a distribution over 1..4. */
export function expectedAnswer(distribution: readonly number[]): number {
  return distribution[0] + 2 * distribution[1] + 3 * distribution[2] + 4 * distribution[3];
}

/** The most probable answer (the first on ties, as NumPy's argmax). */
export function argmaxAnswer(distribution: readonly number[]): number {
  let best = 0;
  for (let index = 1; index < distribution.length; index += 1) if (distribution[index] > distribution[best]) best = index;
  return best + 1;
}

/** One (human row, question) with both a human answer 1–4 and the judge's distribution. */
export interface JoinedAnswer {
  textId: string;
  annotator: string;
  question: LlmRubricQuestion;
  human: number;
  distribution: number[];
}

/** Human rows joined to the judge's distributions for one question; rows without either are left out. */
export function joinedAnswers(set: LlmRubricSet, question: LlmRubricQuestion): JoinedAnswer[] {
  const joined: JoinedAnswer[] = [];
  for (const human of set.humans) {
    const answer = human.answers[question];
    const distribution = set.distributions.get(human.textId)?.get(question);
    if (answer === null || distribution === undefined) continue;
    joined.push({ textId: human.textId, annotator: human.annotator, question, human: answer, distribution });
  }
  return joined;
}

/** A predicted score against the human answers: the README's columns, with Fisher-z intervals. */
export interface ScoreAgreement {
  rmse: number | null;
  pearson: CorrelationEstimate;
  spearman: CorrelationEstimate;
  kendall: CorrelationEstimate;
  n: number;
  mean: number | null;
  std: number | null;
}

export function scoreAgreement(human: readonly number[], predicted: readonly number[], confidence = 0.95): ScoreAgreement {
  const correlations = correlationsWithIntervals(predicted, human, confidence);
  return {
    rmse: rootMeanSquaredError(human, predicted),
    ...correlations,
    n: predicted.length,
    mean: predicted.length > 0 ? mean(predicted) : null,
    std: predicted.length > 0 ? populationStd(predicted) : null,
  };
}

/** The committed per-row sampled answers, keyed `text_id annotator question`. */
async function readSampledAnswers(file: string): Promise<Map<string, number>> {
  const sampled = new Map<string, number>();
  for await (const { line, cells } of readTsv(file)) {
    const key = `${requiredCell(cells, 'text_id', file, line)} ${requiredCell(cells, 'annotator_id', file, line)} ${requiredCell(cells, 'criterion', file, line)}`;
    sampled.set(key, numberCell(cells, 'sample_llm', file, line));
  }
  return sampled;
}

/** Humans against one another, where several answered the same dialogue (the synthetic set), beside the judge on the same rows. */
export interface LlmRubricHumanCeiling {
  set: 'synthetic';
  questions: Record<
    LlmRubricQuestion,
    {
      /** Dialogues with two or more human answers. */
      dialogues: number;
      /** Krippendorff's α (ordinal) among the annotators, missing answers allowed. */
      krippendorffAlpha: number | null;
      /** Each annotator's answer against each other annotator's of the same dialogue (ordered pairs). */
      pairwise: ScoreAgreement;
      /** The judge's expected answer against every human answer of the set. */
      judgeExpected: ScoreAgreement;
    }
  >;
}

export interface LlmRubricBaselineReport {
  format: 'llm-rubric';
  inputs: { evaluations: string; humans: string; predictions: string | null };
  set: 'real';
  /** Per question: the sampled (when the predictions file is there), most probable and expected answer against the humans. */
  baselines: Record<LlmRubricQuestion, { sample: ScoreAgreement | null; argmax: ScoreAgreement; expected: ScoreAgreement }>;
  /** The human ceiling from the synthetic set; null when the folder has no synthetic set. */
  humanCeiling: LlmRubricHumanCeiling | null;
}

/** Agreement among the annotators of the same dialogues, per question, and the judge on the same rows. */
export function humanCeiling(set: LlmRubricSet, confidence = 0.95): LlmRubricHumanCeiling {
  const questions = {} as LlmRubricHumanCeiling['questions'];
  for (const question of llmRubricQuestions) {
    const byDialogue = new Map<string, number[]>();
    for (const human of set.humans) {
      const answer = human.answers[question];
      if (answer === null) continue;
      const answers = byDialogue.get(human.textId);
      if (answers) answers.push(answer);
      else byDialogue.set(human.textId, [answer]);
    }
    const self: number[] = [];
    const other: number[] = [];
    let dialogues = 0;
    for (const answers of byDialogue.values()) {
      if (answers.length < 2) continue;
      dialogues += 1;
      answers.forEach((answer, index) => answers.forEach((otherAnswer, otherIndex) => {
        if (otherIndex === index) return;
        self.push(answer);
        other.push(otherAnswer);
      }));
    }
    const joined = joinedAnswers(set, question);
    questions[question] = {
      dialogues,
      krippendorffAlpha: krippendorffAlpha([...byDialogue.values()], 'ordinal'),
      pairwise: scoreAgreement(other, self, confidence),
      judgeExpected: scoreAgreement(joined.map((entry) => entry.human), joined.map((entry) => expectedAnswer(entry.distribution)), confidence),
    };
  }
  return { set: 'synthetic', questions };
}

/**
 * `meta --format llm-rubric`: the README's baseline table on the real set, for every question.
 *
 * @example
 * ```ts
 * import { llmRubricBaselines } from 'rubricate/meta';
 * const report = await llmRubricBaselines('llm-rubric/', 0.95);
 * ```
 */
export async function llmRubricBaselines(directory: string, confidence = 0.95): Promise<LlmRubricBaselineReport> {
  const set = await readLlmRubricSet(directory, 'real');
  const predictions = [join(directory, predictionsFile.flat), join(directory, predictionsFile.upstream)].find((path) => existsSync(path)) ?? null;
  const sampled = predictions ? await readSampledAnswers(predictions) : null;
  const baselines = {} as LlmRubricBaselineReport['baselines'];
  for (const question of llmRubricQuestions) {
    const joined = joinedAnswers(set, question);
    const human = joined.map((entry) => entry.human);
    const sample = sampled
      ? joined.map((entry) => {
          const value = sampled.get(`${entry.textId} ${entry.annotator} ${question}`);
          if (value === undefined) throw new RubricateError('INPUT_INVALID', `no sampled answer for (${entry.textId}, annotator ${entry.annotator}, ${question})`, { file: predictions!, field: 'sample_llm' });
          return value;
        })
      : null;
    baselines[question] = {
      sample: sample ? scoreAgreement(human, sample, confidence) : null,
      argmax: scoreAgreement(human, joined.map((entry) => argmaxAnswer(entry.distribution)), confidence),
      expected: scoreAgreement(human, joined.map((entry) => expectedAnswer(entry.distribution)), confidence),
    };
  }
  const ceiling = hasSet(directory, 'synthetic') ? humanCeiling(await readLlmRubricSet(directory, 'synthetic'), confidence) : null;
  return { format: 'llm-rubric', inputs: { ...set.files, predictions }, set: 'real', baselines, humanCeiling: ceiling };
}

/** The table `meta` prints: the README's columns, one block per question. */
export function formatLlmRubricBaselines(report: LlmRubricBaselineReport): string {
  const show = (value: number | null) => (value === null ? 'n/a' : value.toFixed(6));
  const lines = ['question system          rmse    pearson   spearman    kendall     N      mean       std'];
  for (const question of llmRubricQuestions) {
    for (const system of ['sample', 'argmax', 'expected'] as const) {
      const row = report.baselines[question][system];
      if (!row) continue;
      const cells = [row.rmse, row.pearson.value, row.spearman.value, row.kendall.value].map((value) => show(value).padStart(10));
      lines.push(`${question.padEnd(8)} ${`${system}_llm`.padEnd(12)} ${cells.join(' ')} ${String(row.n).padStart(5)} ${show(row.mean).padStart(9)} ${show(row.std).padStart(9)}`);
    }
  }
  const ceiling = report.humanCeiling;
  if (ceiling) {
    lines.push('', `human ceiling on the ${ceiling.set} set: annotators of the same dialogue against one another, beside the judge's expected answer on that set`);
    lines.push('question dialogues  alpha(ord)  humans: pearson spearman  kendall     rmse   judge: pearson spearman  kendall     rmse');
    for (const question of llmRubricQuestions) {
      const entry = ceiling.questions[question];
      const figures = (row: ScoreAgreement) => [row.pearson.value, row.spearman.value, row.kendall.value, row.rmse].map((value) => show(value).padStart(8)).join(' ');
      lines.push(`${question.padEnd(8)} ${String(entry.dialogues).padStart(9)} ${show(entry.krippendorffAlpha).padStart(11)}  ${figures(entry.pairwise).padStart(15)}  ${figures(entry.judgeExpected).padStart(14)}`);
    }
  }
  return lines.join('\n');
}
