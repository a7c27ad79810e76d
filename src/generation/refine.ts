/**
 * Refinement by differentiation (after "Chasing the Tail"): grade a set of responses with
 * the rubric, take the two best, and ask the generator to add, split, rewrite or delete
 * criteria so those two are told apart; repeat. Optionally each round also decomposes and
 * filters the rubric (see decompose-filter.ts). Every round reports how well the rubric
 * separates the responses.
 */
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import { RubricateError, toRubricateError, type SerializedError } from '../errors.js';
import type { Grader } from '../pipeline/grader.js';
import { toScoredItem, type ResultRecord } from '../results/results.js';
import type { Message, Rubric } from '../rubric/schema.js';
import {
  clusterWeights,
  decomposeExtremeCriteria,
  dropMisalignedAndRedundant,
  isFatal,
  type FilterAction,
  type FilterOptions,
  type PairVerdicts,
} from './decompose-filter.js';
import type { RubricGenerator } from './generator.js';
import { gradeResponses, topTwo, type GradedResponses } from './grading.js';
import { round } from '../statistics/descriptive.js';
import { separation, type Separation } from './measures.js';

export interface RefineSubject {
  id: string;
  prompt: Message[];
  /** Starting rubric; generated from the prompt when absent. */
  rubric?: Rubric;
  reference?: string;
  /** The responses the rubric must tell apart (sampled or given). */
  responses: string[];
  /** Preference pairs for the same prompt, for the misalignment filter. */
  pairs?: Array<{ chosen: string; rejected: string }>;
}

export interface RefineOptions {
  generator: RubricGenerator;
  grader: Grader;
  /** Refinement rounds after the starting rubric is graded. */
  iterations: number;
  /** Decompose and filter each round, and weight correlated clusters at the end. */
  filter?: FilterOptions | false;
  /**
   * Applied to every rubric the generator writes here (the starting one, each refinement) before it
   * is graded (`refine --lint`): the rubric to use, or undefined when no repair fixes it (a refinement
   * then stops the prompt's rounds with RUBRIC_LINT_FAILED; a starting rubric fails the prompt).
   * The caller reports what it dropped.
   */
  repair?: (rubric: Rubric, context: { id: string; iteration: number }) => Rubric | undefined;
}

export interface IterationReport {
  /** 0 = the starting rubric; i = after the i-th refinement. */
  iteration: number;
  rubric_id: string;
  criteria: number;
  scores: Array<number | null>;
  separation: Separation;
  grading_errors: number;
  /** Against the previous round's rubric, by criterion id. */
  changes?: { added: number; removed: number; kept: number };
  /** Indices (from 0) of the two responses the next refinement was asked to separate. */
  top_two?: [number, number];
  /** Decompose-and-filter actions applied before the next refinement. */
  filter?: FilterAction[];
  /** Why refinement stopped here. */
  error?: SerializedError;
}

export interface RefineOutcome {
  id: string;
  rubric: Rubric;
  generated_initial: boolean;
  iterations: IterationReport[];
  /** After the last round's filter and weighting (scores recomputed from the last verdicts, no new calls). */
  final: { rubric_id: string; criteria: number; separation: Separation; filter?: FilterAction[]; error?: SerializedError };
  judge_usage: Usage;
}

/** One prompt's refinement as it goes: the rubric graded last, the rounds so far, the judge's usage. */
interface RefineRun {
  subject: RefineSubject;
  options: RefineOptions;
  filter: FilterOptions | undefined;
  judgeUsage: Usage;
  /** Always the rubric graded last (a refinement replaces it only once graded in the next round). */
  rubric: Rubric;
  previous?: Rubric;
  last?: { graded: GradedResponses; pairs: PairVerdicts[] };
  iterations: IterationReport[];
  generatedInitial: boolean;
}

/**
 * Refines a rubric by differentiation: the responses graded, the generator asked to tell the two best apart, for `iterations` rounds.
 *
 * @example
 * ```ts
 * import { Grader, createJudge } from 'rubricate';
 * import { createRubricGenerator, refineRubric } from 'rubricate/generation';
 * const judge = await createJudge({ model: 'openai:gpt-4.1-mini' });
 * const outcome = await refineRubric(
 *   { id: 'q1', prompt: [{ role: 'user', content: 'Explain recursion.' }], responses: ['A function calling itself…', 'Recursion is when…'] },
 *   { generator: createRubricGenerator({ generator: judge }), grader: new Grader({ judge }), iterations: 2 },
 * );
 * ```
 */
export async function refineRubric(subject: RefineSubject, options: RefineOptions): Promise<RefineOutcome> {
  const run = await startRefinement(subject, options);
  for (let iteration = 0; iteration <= options.iterations; iteration += 1) {
    if (!(await refineRound(run, iteration))) break;
  }
  return finishRefinement(run);
}

async function startRefinement(subject: RefineSubject, options: RefineOptions): Promise<RefineRun> {
  let rubric = subject.rubric;
  let generatedInitial = false;
  if (!rubric) {
    const generated = (await options.generator.generate({ prompt: subject.prompt, reference: subject.reference })).rubric;
    rubric = options.repair ? options.repair(generated, { id: subject.id, iteration: 0 }) : generated;
    if (rubric === undefined) throw new RubricateError('RUBRIC_LINT_FAILED', 'the generated starting rubric has lint errors no dropped criterion fixes');
    generatedInitial = true;
  }
  const filter = options.filter === false || options.filter === undefined ? undefined : options.filter;
  return { subject, options, filter, judgeUsage: emptyUsage(), rubric, iterations: [], generatedInitial };
}

/** Grades the responses (and the preference pairs, for the filter) with a rubric. */
async function gradeRound(run: RefineRun, current: Rubric): Promise<{ graded: GradedResponses; pairs: PairVerdicts[] }> {
  const { subject } = run;
  const { grader } = run.options;
  const graded = await gradeResponses(grader, { id: subject.id, prompt: subject.prompt, rubric: current, reference: subject.reference }, subject.responses);
  for (const record of graded.records) if (record.usage) addUsage(run.judgeUsage, record.usage);
  const pairs: PairVerdicts[] = [];
  for (const [index, pair] of (subject.pairs ?? []).entries()) {
    const pairGrades = await gradeResponses(grader, { id: `${subject.id}/pair-${index + 1}`, prompt: subject.prompt, rubric: current, reference: subject.reference }, [pair.chosen, pair.rejected], 'pair');
    for (const record of pairGrades.records) if (record.usage) addUsage(run.judgeUsage, record.usage);
    pairs.push({ chosen: column(pairGrades, 0), rejected: column(pairGrades, 1) });
  }
  if (grader.engine.fatal) throw grader.engine.fatal;
  return { graded, pairs };
}

/** One round: grade the current rubric, report it, then (unless it is the last) filter and ask for the refinement. False: stop. */
async function refineRound(run: RefineRun, iteration: number): Promise<boolean> {
  const current = run.rubric;
  run.last = await gradeRound(run, current);
  const { graded, pairs } = run.last;
  const report: IterationReport = {
    iteration,
    rubric_id: current.id,
    criteria: current.criteria.length,
    scores: graded.scores.map((score) => (score === null ? null : round(score))),
    separation: separation(graded.scores),
    grading_errors: graded.errors,
  };
  if (run.previous) report.changes = changesBetween(run.previous, current);
  run.iterations.push(report);
  if (iteration === run.options.iterations) return false;
  const working = run.filter ? await filterRound(run, report, graded, pairs, iteration) : current;
  if (working === undefined) return false;
  const top = topTwo(graded.scores);
  if (!top) {
    report.error = { code: 'JUDGE_UNPARSEABLE', message: 'fewer than two responses could be graded: nothing to separate' };
    return false;
  }
  report.top_two = top;
  return askRefinement(run, report, { current, working, graded, top, iteration });
}

/** Drop misaligned and redundant criteria, decompose the extreme ones; undefined when the filter failed (the report says why). */
async function filterRound(run: RefineRun, report: IterationReport, graded: GradedResponses, pairs: PairVerdicts[], iteration: number): Promise<Rubric | undefined> {
  const filter = run.filter!;
  try {
    const dropped = dropMisalignedAndRedundant(run.rubric, graded.verdicts, pairs, filter);
    const verdictsOfKept = new Map([...graded.verdicts].filter(([id]) => dropped.rubric.criteria.some((criterion) => criterion.id === id)));
    const decomposed = await decomposeExtremeCriteria(dropped.rubric, verdictsOfKept, { ...filter, generator: run.options.generator, prompt: run.subject.prompt, responses: run.subject.responses, sample: iteration });
    report.filter = [...dropped.actions, ...decomposed.actions];
    return decomposed.rubric;
  } catch (error) {
    if (isFatal(error)) throw error;
    report.error = toRubricateError(error).toJSON();
    return undefined;
  }
}

/** The generator's revision of the working rubric, so the top two are told apart; it becomes the rubric graded next. */
async function askRefinement(run: RefineRun, report: IterationReport, round: { current: Rubric; working: Rubric; graded: GradedResponses; top: [number, number]; iteration: number }): Promise<boolean> {
  const { subject, options } = run;
  const { graded, top, iteration } = round;
  const verdictPairs = new Map<string, [boolean | null, boolean | null]>();
  for (const [id, verdicts] of graded.verdicts) verdictPairs.set(id, [verdicts[top[0]] ?? null, verdicts[top[1]] ?? null]);
  try {
    const refined = await options.generator.refine(
      {
        prompt: subject.prompt,
        rubric: round.working,
        responses: [subject.responses[top[0]], subject.responses[top[1]]],
        scores: [graded.scores[top[0]], graded.scores[top[1]]],
        verdicts: verdictPairs,
        reference: subject.reference,
      },
      { id: round.current.id, sample: iteration, extra: { iteration: iteration + 1 } },
    );
    const next = options.repair ? options.repair(refined.rubric, { id: subject.id, iteration: iteration + 1 }) : refined.rubric;
    if (next === undefined) throw new RubricateError('RUBRIC_LINT_FAILED', `the refined rubric of round ${iteration + 1} has lint errors no dropped criterion fixes`);
    run.previous = round.current;
    run.rubric = next;
    return true;
  } catch (error) {
    if (isFatal(error)) throw error;
    report.error = toRubricateError(error).toJSON();
    // Refinement stops; the rubric graded this round stands (a failed answer never replaces it).
    return false;
  }
}

/** The last verdicts filter and weight the rubric graded last, without new calls. */
function finishRefinement(run: RefineRun): RefineOutcome {
  const lastIteration = run.iterations[run.iterations.length - 1];
  let finalRubric: Rubric = run.rubric;
  let finalActions: FilterAction[] | undefined;
  let finalSeparation = lastIteration.separation;
  let finalError: SerializedError | undefined;
  if (run.filter && run.last) {
    try {
      const dropped = dropMisalignedAndRedundant(finalRubric, run.last.graded.verdicts, run.last.pairs, run.filter);
      const weighted = clusterWeights(dropped.rubric, run.last.graded.verdicts, run.filter);
      finalActions = [...dropped.actions, ...weighted.actions];
      finalRubric = weighted.rubric;
      finalSeparation = separation(rescore(run.last.graded.records, finalRubric, run.options.grader));
    } catch (error) {
      // The unfiltered rubric stands; the report says why.
      finalError = toRubricateError(error).toJSON();
    }
  }
  return {
    id: run.subject.id,
    rubric: finalRubric,
    generated_initial: run.generatedInitial,
    iterations: run.iterations,
    final: {
      rubric_id: finalRubric.id,
      criteria: finalRubric.criteria.length,
      separation: finalSeparation,
      ...(finalActions ? { filter: finalActions } : {}),
      ...(finalError ? { error: finalError } : {}),
    },
    judge_usage: run.judgeUsage,
  };
}

function column(graded: GradedResponses, index: number): Map<string, boolean | null> {
  return new Map([...graded.verdicts].map(([id, verdicts]) => [id, verdicts[index] ?? null]));
}

function changesBetween(previous: Rubric, current: Rubric): { added: number; removed: number; kept: number } {
  const before = new Set(previous.criteria.map((criterion) => criterion.id));
  const after = new Set(current.criteria.map((criterion) => criterion.id));
  let kept = 0;
  for (const id of after) if (before.has(id)) kept += 1;
  return { added: after.size - kept, removed: before.size - kept, kept };
}

/**
 * Scores of already-graded responses under a filtered and reweighted rubric: the verdicts of
 * the criteria that remain, with their new points. Verdicts do not depend on the other
 * criteria or on points, so no judge call is needed.
 */
export function rescore(records: readonly ResultRecord[], rubric: Rubric, grader: Pick<Grader, 'scoring'>): Array<number | null> {
  const points = new Map(rubric.criteria.map((criterion) => [criterion.id, criterion.points]));
  return records.map((record) => {
    const criteria = record.criteria.filter((criterion) => points.has(criterion.id)).map((criterion) => ({ ...criterion, points: points.get(criterion.id)! }));
    const status = criteria.some((criterion) => criterion.status === 'error') ? 'error' : record.status === 'invalid' ? 'invalid' : 'ok';
    return grader.scoring.itemScore(toScoredItem({ ...record, status, criteria }));
  });
}

/** A few readable lines per prompt: separation by round. */
export function formatRefineSummary(outcome: RefineOutcome): string {
  const describe = (label: string, criteria: number, spread: Separation) =>
    `  ${label.padEnd(10)} ${String(criteria).padStart(3)} criteria  std ${fixed(spread.std)}  range ${fixed(spread.range)}  top ties ${spread.top_ties}  top-2 gap ${fixed(spread.top2_gap)}`;
  const lines = [`${outcome.id}${outcome.generated_initial ? ' (starting rubric generated)' : ''}`];
  for (const report of outcome.iterations) {
    lines.push(describe(`round ${report.iteration}`, report.criteria, report.separation) + (report.grading_errors ? `  ${report.grading_errors} grading errors` : ''));
    if (report.error) lines.push(`  stopped: [${report.error.code}] ${report.error.message}`);
  }
  if (outcome.final.filter) lines.push(describe('final', outcome.final.criteria, outcome.final.separation) + `  (${outcome.final.filter.length} filter actions)`);
  return lines.join('\n');
}

function fixed(value: number | null): string {
  return value === null ? '  n/a ' : value.toFixed(4);
}
