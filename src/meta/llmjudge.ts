/**
 * `rubricate meta --format llmjudge`: a TREC-style graded run (`qid 0 docid label`, one line per
 * query–passage pair) against graded relevance labels of the same form (the LLMJudge challenge,
 * SIGIR 2024 LLM4Eval, on TREC DL 2023 passages). As the organisers' analysis notebook does, run
 * labels are clipped to 0..3 and both sides are compared on the 4-point scale and binarised at
 * ≥1, ≥2 and ≥3 by ordinal Krippendorff's α (which the notebook's columns call "kappa"); Cohen's
 * κ is reported beside it. Pairs are joined on (qid, docid). A labelled pair the run leaves out
 * is missing for every figure (the notebook's outer join would count it as 0 once binarised);
 * the report counts such pairs, and run lines for unlabelled pairs, rather than hiding them.
 */
import { basename } from 'node:path';
import { RubricateError } from '../errors.js';
import { cohenKappa, weightedCohenKappa } from '../statistics/agreement.js';
import { krippendorffAlpha } from '../statistics/krippendorff.js';
import { readLines } from '../util/jsonl.js';

/** The graded scale of the challenge; run labels outside it are clipped onto it. */
export const llmJudgeScale = [0, 1, 2, 3] as const;
/** Bound on the pairs one file may hold: the work grows with them (the challenge's test set has 4,423). */
export const maxGradedPairs = 2_000_000;

/** Agreement of one comparison: α (ordinal) and Cohen's κ over the pairs both sides label. */
export interface LlmJudgeAgreement {
  krippendorffAlpha: number | null;
  cohenKappa: number | null;
  /** rows: the labels' value, columns: the run's (0..3 on the 4-point scale, 0..1 binarised). */
  confusion: number[][];
}

export interface LlmJudgeReport {
  format: 'llmjudge';
  inputs: { run: string; labels: string };
  run: string;
  pairs: { labelled: number; judged: number; missingFromRun: number; unlabelledInRun: number; clipped: number };
  fourPoint: LlmJudgeAgreement & { cohenKappaQuadratic: number | null; accuracy: number | null };
  binarised: { atLeast1: LlmJudgeAgreement; atLeast2: LlmJudgeAgreement; atLeast3: LlmJudgeAgreement };
}

/** Reads `qid Q0 docid label` lines into a map keyed by `qid docid`; any malformed line is an error naming its file, line and field. */
export async function readGradedPairs(file: string): Promise<Map<string, number>> {
  const pairs = new Map<string, number>();
  for await (const { line, text, error } of readLines(file)) {
    if (error) throw error;
    const fields = text.trim().split(/\s+/);
    if (fields.length !== 4) throw new RubricateError('INPUT_INVALID', `expected 4 space-separated fields (qid 0 docid label), got ${fields.length}`, { file, line });
    const [qid, , docid, labelText] = fields;
    const label = Number(labelText);
    if (labelText === '' || !Number.isFinite(label)) throw new RubricateError('INPUT_INVALID', `the label "${labelText}" is not a number`, { file, line, field: 'label' });
    const key = `${qid} ${docid}`;
    if (pairs.has(key)) throw new RubricateError('INPUT_INVALID', `the pair (${qid}, ${docid}) appears twice`, { file, line, field: 'docid' });
    if (pairs.size >= maxGradedPairs) throw new RubricateError('INPUT_INVALID', `more than ${maxGradedPairs} pairs`, { file, line });
    pairs.set(key, label);
  }
  return pairs;
}

function agreement(gold: readonly number[], run: readonly number[], size: number): LlmJudgeAgreement {
  const confusion = Array.from({ length: size }, () => new Array<number>(size).fill(0));
  for (let index = 0; index < gold.length; index += 1) confusion[gold[index]][run[index]] += 1;
  return {
    krippendorffAlpha: krippendorffAlpha(
      gold.map((label, index) => [label, run[index]]),
      'ordinal',
    ),
    cohenKappa: cohenKappa(gold, run),
    confusion,
  };
}

/** The run's agreement with the labels, from the two maps of `readGradedPairs`. */
export function llmJudgeAgreement(labels: ReadonlyMap<string, number>, run: ReadonlyMap<string, number>, files: { run: string; labels: string }): LlmJudgeReport {
  const gold: number[] = [];
  const judged: number[] = [];
  let clipped = 0;
  for (const [key, label] of labels) {
    if (!Number.isInteger(label) || label < 0 || label > 3) throw new RubricateError('INPUT_INVALID', `the human label of (${key.replace(' ', ', ')}) is ${label}, not one of 0, 1, 2, 3`, { file: files.labels, field: 'label' });
    const raw = run.get(key);
    if (raw === undefined) continue;
    const value = Math.min(3, Math.max(0, raw));
    if (value !== raw) clipped += 1;
    if (!Number.isInteger(value)) throw new RubricateError('INPUT_INVALID', `the run's label of (${key.replace(' ', ', ')}) is ${raw}, not a whole number`, { file: files.run, field: 'label' });
    gold.push(label);
    judged.push(value);
  }
  let unlabelledInRun = 0;
  for (const key of run.keys()) if (!labels.has(key)) unlabelledInRun += 1;
  const binarised = (threshold: number) =>
    agreement(
      gold.map((label) => (label >= threshold ? 1 : 0)),
      judged.map((label) => (label >= threshold ? 1 : 0)),
      2,
    );
  const matching = gold.filter((label, index) => label === judged[index]).length;
  return {
    format: 'llmjudge',
    inputs: files,
    run: basename(files.run).replace(/\.[^.]*$/, ''),
    pairs: { labelled: labels.size, judged: gold.length, missingFromRun: labels.size - gold.length, unlabelledInRun, clipped },
    fourPoint: {
      ...agreement(gold, judged, llmJudgeScale.length),
      cohenKappaQuadratic: weightedCohenKappa(gold, judged, 'quadratic', llmJudgeScale),
      accuracy: gold.length > 0 ? matching / gold.length : null,
    },
    binarised: { atLeast1: binarised(1), atLeast2: binarised(2), atLeast3: binarised(3) },
  };
}

/**
 * `meta --format llmjudge`: reads both files and measures the run.
 *
 * @example
 * ```ts
 * import { llmJudgeMeta } from 'rubricate/meta';
 * const report = await llmJudgeMeta('results.jsonl', 'human-labels.jsonl');
 * ```
 */
export async function llmJudgeMeta(runFile: string, labelsFile: string): Promise<LlmJudgeReport> {
  const [labels, run] = await Promise.all([readGradedPairs(labelsFile), readGradedPairs(runFile)]);
  return llmJudgeAgreement(labels, run, { run: runFile, labels: labelsFile });
}

/** The table `meta` prints. */
export function formatLlmJudgeReport(report: LlmJudgeReport): string {
  const show = (value: number | null) => (value === null ? 'n/a' : value.toFixed(4));
  const rows: Array<[string, LlmJudgeAgreement]> = [
    ['4-point', report.fourPoint],
    ['>= 1', report.binarised.atLeast1],
    ['>= 2', report.binarised.atLeast2],
    ['>= 3', report.binarised.atLeast3],
  ];
  const { pairs } = report;
  return [
    `run ${report.run}: ${pairs.judged} of ${pairs.labelled} labelled pairs judged${pairs.missingFromRun ? ` (${pairs.missingFromRun} missing from the run)` : ''}${pairs.unlabelledInRun ? `, ${pairs.unlabelledInRun} run lines unlabelled` : ''}${pairs.clipped ? `, ${pairs.clipped} labels clipped to 0..3` : ''}`,
    'scale     alpha (ordinal)  Cohen kappa',
    ...rows.map(([name, row]) => `${name.padEnd(9)} ${show(row.krippendorffAlpha).padStart(15)}  ${show(row.cohenKappa).padStart(11)}`),
    `4-point quadratic-weighted kappa ${show(report.fourPoint.cohenKappaQuadratic)}, exact agreement ${show(report.fourPoint.accuracy)}`,
  ].join('\n');
}
