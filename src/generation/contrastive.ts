/**
 * Contrastive rubric generation with a preference-consistency filter (after OpenRubrics):
 * from a preference pair, the generator writes criteria that tell the chosen response from
 * the rejected one; the rubric is graded on both through the real pipeline and kept only if
 * the chosen response scores strictly higher. Up to k generations are tried per pair
 * (rejection sampling). Kept rubrics are then tried on the other pairs of the same prompt,
 * which they were not generated from (held-out ordering accuracy).
 */
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import { RubricateError, toRubricateError, type SerializedError } from '../errors.js';
import type { Grader } from '../pipeline/grader.js';
import { getPairwiseImporter } from '../formats/index.js';
import type { Message, Rubric } from '../rubric/schema.js';
import { canonicalJson } from '../util/json.js';
import { rubricateVersion } from '../version.js';
import { isFatal } from './decompose-filter.js';
import type { RubricGenerator } from './generator.js';
import { gradeResponses } from './grading.js';
import { promptVersions } from './prompts.js';
import { round } from '../statistics/descriptive.js';
import { redactUrl } from '../util/redact.js';
import { recordedSampling } from '../grading/sampling.js';

export interface PreferencePair {
  id: string;
  prompt: Message[];
  chosen: string;
  rejected: string;
  reference?: string;
  /** Subset, scenario or application the pair comes from. */
  source?: string;
  line: number;
}

export interface PairReadSummary {
  /** Records read from the source. */
  records: number;
  pairs: number;
  /** Gold tie: nothing to tell apart. */
  ties: number;
  /** No gold label. */
  unlabelled: number;
  invalid: RubricateError[];
}

/**
 * Reads preference pairs through a pairwise importer: our pairs JSONL (`--format pairs`) or a
 * pairwise benchmark (gold winner → chosen; ties and unlabelled
 * pairs are skipped and counted). The whole set is held, since pairs are grouped by prompt.
 *
 * @example
 * ```ts
 * import { readPreferencePairs } from 'rubricate/generation';
 * const { pairs, summary } = await readPreferencePairs('pairs.jsonl', 'pairs', (warning) => console.warn(warning));
 * ```
 */
export async function readPreferencePairs(source: string, format = 'pairs', onWarning?: (message: string) => void): Promise<{ pairs: PreferencePair[]; summary: PairReadSummary }> {
  const summary: PairReadSummary = { records: 0, pairs: 0, ties: 0, unlabelled: 0, invalid: [] };
  const pairs: PreferencePair[] = [];
  const importer = getPairwiseImporter(format);
  for await (const record of importer.read(source, { onWarning })) {
    summary.records += 1;
    if (record.kind === 'invalid') {
      summary.invalid.push(record.error);
      continue;
    }
    const { pair } = record;
    if (pair.label === 'tie') {
      summary.ties += 1;
      continue;
    }
    if (pair.label === undefined) {
      summary.unlabelled += 1;
      continue;
    }
    const chosenIsA = pair.label === 'A';
    const converted: PreferencePair = {
      id: pair.id,
      prompt: pair.prompt,
      chosen: chosenIsA ? pair.responseA : pair.responseB,
      rejected: chosenIsA ? pair.responseB : pair.responseA,
      line: record.line,
    };
    const reference = pair.metadata?.reference;
    if (typeof reference === 'string') converted.reference = reference;
    if (pair.source !== undefined) converted.source = pair.source;
    pairs.push(converted);
  }
  summary.pairs = pairs.length;
  return { pairs, summary };
}

export type SplitMode = 'per-prompt' | 'none';

export interface PairGroup {
  /** The pair the rubric is generated from. */
  generation: PreferencePair;
  /** Other pairs of the same prompt: the rubric's held-out test. */
  heldOut: PreferencePair[];
}

/**
 * `per-prompt`: pairs sharing a prompt form a group; the first (in input order) generates the
 * rubric, the rest test it. `none`: every pair generates its own rubric, nothing is held out.
 *
 * @example
 * ```ts
 * import { groupPairs, readPreferencePairs } from 'rubricate/generation';
 * const { pairs } = await readPreferencePairs('pairs.jsonl');
 * const groups = groupPairs(pairs, 'per-prompt'); // one pair to generate from, the prompt's others held out
 * ```
 */
export function groupPairs(pairs: readonly PreferencePair[], split: SplitMode): PairGroup[] {
  if (split === 'none') return pairs.map((pair) => ({ generation: pair, heldOut: [] }));
  const groups = new Map<string, PairGroup>();
  for (const pair of pairs) {
    const key = canonicalJson([pair.prompt, pair.reference ?? null]);
    const group = groups.get(key);
    if (group) group.heldOut.push(pair);
    else groups.set(key, { generation: pair, heldOut: [] });
  }
  return [...groups.values()];
}

export type AttemptOutcome = 'consistent' | 'inconsistent' | 'tie' | 'grading_error' | 'generation_error';

export interface AttemptRecord {
  attempt: number;
  outcome: AttemptOutcome;
  criteria?: number;
  chosen_score?: number | null;
  rejected_score?: number | null;
  checks_rejected?: number;
  error?: SerializedError;
}

export interface HeldOutRecord {
  pair_id: string;
  outcome: 'correct' | 'wrong' | 'tie' | 'grading_error';
  chosen_score: number | null;
  rejected_score: number | null;
}

export interface ContrastiveOutcome {
  pair_id: string;
  source?: string;
  prompt: Message[];
  reference?: string;
  kept: boolean;
  attempts_used: number;
  attempts: AttemptRecord[];
  /** The kept rubric (absent when no attempt was consistent). */
  rubric?: Rubric;
  held_out: HeldOutRecord[];
  /** Judge usage of the gradings for this pair. */
  judge_usage: Usage;
}

export interface ContrastiveOptions {
  generator: RubricGenerator;
  grader: Grader;
  /** Generations tried per pair before giving up (k). */
  attempts: number;
  /**
   * Plan the most calls a group can take (a dry run, whose synthetic verdicts tie every
   * attempt): when no attempt was kept, and the attempts were not decided on stored answers
   * alone (in a dry run, the others are synthetic), the held-out pairs are graded with the
   * last rubric as if it had been kept.
   */
  heldOutWithoutKeep?: boolean;
  /**
   * Applied to each generated rubric before it is graded (`generate --lint`): the rubric to grade,
   * or undefined when it cannot be repaired (the attempt then fails with RUBRIC_LINT_FAILED and the
   * next sample is tried). The caller reports what it dropped.
   */
  repair?: (rubric: Rubric, context: { pairId: string; attempt: number }) => Rubric | undefined;
}

/** How a rubric scored a preference pair: the chosen response higher, lower, level (within rounding), or not graded. */
export function preferenceOutcome(chosen: number | null, rejected: number | null): 'higher' | 'lower' | 'tie' | 'error' {
  if (chosen === null || rejected === null) return 'error';
  if (Math.abs(chosen - rejected) <= 1e-9) return 'tie';
  return chosen > rejected ? 'higher' : 'lower';
}

/** One group's run: the outcome being built, and whether any answer came from a model now (not the store). */
interface GroupRun {
  pair: PreferencePair;
  options: ContrastiveOptions;
  outcome: ContrastiveOutcome;
  answeredNow: boolean;
}

/**
 * Rejection sampling for one pair group, then the held-out test of the kept rubric.
 *
 * @example
 * ```ts
 * import { Grader, createJudge } from 'rubricate';
 * import { contrastGroup, createRubricGenerator, groupPairs, readPreferencePairs } from 'rubricate/generation';
 * const judge = await createJudge({ model: 'openai:gpt-4.1-mini' });
 * const { pairs } = await readPreferencePairs('pairs.jsonl');
 * for (const group of groupPairs(pairs, 'per-prompt')) {
 *   const outcome = await contrastGroup(group, { generator: createRubricGenerator({ generator: judge }), grader: new Grader({ judge }), attempts: 3 });
 * }
 * ```
 */
export async function contrastGroup(group: PairGroup, options: ContrastiveOptions): Promise<ContrastiveOutcome> {
  const pair = group.generation;
  const run: GroupRun = {
    pair,
    options,
    outcome: {
      pair_id: pair.id,
      ...(pair.source !== undefined ? { source: pair.source } : {}),
      prompt: pair.prompt,
      ...(pair.reference !== undefined ? { reference: pair.reference } : {}),
      kept: false,
      attempts_used: 0,
      attempts: [],
      held_out: [],
      judge_usage: emptyUsage(),
    },
    answeredNow: false,
  };
  let lastRubric: Rubric | undefined;
  for (let attempt = 0; attempt < options.attempts; attempt += 1) {
    run.outcome.attempts_used = attempt + 1;
    const step = await runAttempt(run, attempt);
    if (step === 'stop') break;
    if (step !== 'next') lastRubric = step;
    if (run.outcome.kept) break;
  }
  const tested = run.outcome.rubric ?? (options.heldOutWithoutKeep && run.answeredNow ? lastRubric : undefined);
  if (tested) run.outcome.held_out = await Promise.all(group.heldOut.map((heldOut) => gradeHeldOut(run, tested, heldOut)));
  return run.outcome;
}

/** Grades chosen and rejected with a rubric; the judge's usage goes to the group's outcome. */
async function gradePair(run: GroupRun, rubric: Rubric, chosen: string, rejected: string, id: string) {
  const { options, pair } = run;
  const graded = await gradeResponses(options.grader, { id, prompt: pair.prompt, rubric, reference: pair.reference }, [chosen, rejected], 'pair');
  for (const record of graded.records) {
    if (!record.usage) continue;
    addUsage(run.outcome.judge_usage, record.usage);
    if (record.usage.calls > 0) run.answeredNow = true;
  }
  if (options.grader.engine.fatal) throw options.grader.engine.fatal;
  return { chosen: graded.scores[0], rejected: graded.scores[1], errors: graded.records.filter((record) => record.status !== 'ok') };
}

/** The attempt's rubric (after the caller's repair), or what to do when there is none: try the next sample, or stop. */
async function attemptRubric(run: GroupRun, attempt: number): Promise<{ rubric: Rubric; checksRejected: number } | 'next' | 'stop'> {
  const { pair, options } = run;
  try {
    const generated = await options.generator.contrast(
      { prompt: pair.prompt, chosen: pair.chosen, rejected: pair.rejected, reference: pair.reference },
      { sample: attempt, extra: { pair_id: pair.id, attempt: attempt + 1 } },
    );
    if (generated.calls > 0) run.answeredNow = true;
    const rubric = options.repair ? options.repair(generated.rubric, { pairId: pair.id, attempt: attempt + 1 }) : generated.rubric;
    if (rubric === undefined) throw new RubricateError('RUBRIC_LINT_FAILED', 'the generated rubric has lint errors no dropped criterion fixes');
    return { rubric, checksRejected: generated.checks.rejected };
  } catch (error) {
    if (isFatal(error)) throw error;
    const failure = toRubricateError(error);
    run.outcome.attempts.push({ attempt: attempt + 1, outcome: 'generation_error', error: failure.toJSON() });
    // Another sample cannot fix a request the generator rejects outright (e.g. too long); it may write a rubric lint accepts.
    return failure.retryable || failure.code === 'RUBRIC_LINT_FAILED' ? 'next' : 'stop';
  }
}

/** One attempt: a rubric, graded on its own pair, kept when the chosen response scores higher. */
async function runAttempt(run: GroupRun, attempt: number): Promise<Rubric | 'next' | 'stop'> {
  const { pair, outcome } = run;
  const written = await attemptRubric(run, attempt);
  if (typeof written === 'string') return written;
  const { rubric, checksRejected } = written;
  const scores = await gradePair(run, rubric, pair.chosen, pair.rejected, pair.id);
  const record: AttemptRecord = {
    attempt: attempt + 1,
    outcome: 'inconsistent',
    criteria: rubric.criteria.length,
    chosen_score: scores.chosen === null ? null : round(scores.chosen),
    rejected_score: scores.rejected === null ? null : round(scores.rejected),
  };
  if (checksRejected > 0) record.checks_rejected = checksRejected;
  const comparison = preferenceOutcome(scores.chosen, scores.rejected);
  if (comparison === 'error') {
    record.outcome = 'grading_error';
    if (scores.errors[0]?.error) record.error = scores.errors[0].error;
  } else if (comparison === 'tie') {
    record.outcome = 'tie';
  } else if (comparison === 'higher') {
    record.outcome = 'consistent';
  }
  outcome.attempts.push(record);
  if (record.outcome === 'consistent') {
    outcome.kept = true;
    outcome.rubric = rubric;
  }
  return rubric;
}

async function gradeHeldOut(run: GroupRun, rubric: Rubric, heldOut: PreferencePair): Promise<HeldOutRecord> {
  const scores = await gradePair(run, rubric, heldOut.chosen, heldOut.rejected, heldOut.id);
  const comparison = preferenceOutcome(scores.chosen, scores.rejected);
  return {
    pair_id: heldOut.id,
    outcome: comparison === 'error' ? 'grading_error' : comparison === 'tie' ? 'tie' : comparison === 'higher' ? 'correct' : 'wrong',
    chosen_score: scores.chosen === null ? null : round(scores.chosen),
    rejected_score: scores.rejected === null ? null : round(scores.rejected),
  };
}

export interface ContrastiveReport {
  rubricate_version: string;
  method: 'contrastive';
  prompt_version: string;
  generator: { id: string; model: string; base_url?: string; temperature: number; max_tokens: number; seed?: number };
  judge: unknown;
  scoring: string;
  attempts_allowed: number;
  split: SplitMode;
  input: { source: string; format: string; records: number; pairs: number; ties_skipped: number; unlabelled_skipped: number; invalid: number; groups: number; held_out_pairs: number };
  generation: {
    pairs: number;
    kept: number;
    keep_rate: number | null;
    not_kept: number;
    attempts: { total: number; mean_per_pair: number | null; mean_per_kept_pair: number | null; histogram: Record<string, number> };
    attempt_outcomes: Record<AttemptOutcome, number>;
    first_attempt: { n: number; consistent: number; rate: number | null; note: string };
  };
  evaluation: {
    same_pairs: { n: number; correct: number; note: string };
    held_out: { rubrics: number; pairs: number; graded: number; correct: number; wrong: number; ties: number; errors: number; accuracy: number | null; accuracy_ties_half: number | null; note: string };
  };
  usage: { generator: Usage; judge: Usage };
  pairs: Array<Omit<ContrastiveOutcome, 'rubric' | 'prompt' | 'reference' | 'judge_usage'> & { rubric_id?: string; criteria?: number }>;
}

export interface ReportContext {
  source: string;
  format: string;
  readSummary: PairReadSummary;
  groups: number;
  heldOutPairs: number;
  split: SplitMode;
  attempts: number;
  generator: RubricGenerator;
  grader: Grader;
}

const ratio = (numerator: number, denominator: number) => (denominator > 0 ? round(numerator / denominator) : null);

export function summarizeContrastive(outcomes: readonly ContrastiveOutcome[], context: ReportContext): ContrastiveReport {
  const kept = outcomes.filter((outcome) => outcome.kept);
  const judgeUsage = emptyUsage();
  for (const outcome of outcomes) addUsage(judgeUsage, outcome.judge_usage);
  const { provenance, sampling } = context.generator;
  return {
    rubricate_version: rubricateVersion,
    method: 'contrastive',
    prompt_version: promptVersions.contrastive,
    generator: {
      id: provenance.id,
      model: provenance.model,
      ...(provenance.baseUrl ? { base_url: redactUrl(provenance.baseUrl) } : {}),
      ...recordedSampling(sampling),
    },
    judge: context.grader.judgeInfo ?? null,
    scoring: context.grader.scoring.name,
    attempts_allowed: context.attempts,
    split: context.split,
    input: {
      source: context.source,
      format: context.format,
      records: context.readSummary.records,
      pairs: context.readSummary.pairs,
      ties_skipped: context.readSummary.ties,
      unlabelled_skipped: context.readSummary.unlabelled,
      invalid: context.readSummary.invalid.length,
      groups: context.groups,
      held_out_pairs: context.heldOutPairs,
    },
    generation: generationFigures(outcomes, kept, context.attempts),
    evaluation: evaluationFigures(kept, context.split),
    usage: { generator: { ...context.generator.usage }, judge: judgeUsage },
    pairs: outcomes.map((outcome) => {
      const { rubric, prompt: _prompt, reference: _reference, judge_usage: _usage, ...rest } = outcome;
      return { ...rest, ...(rubric ? { rubric_id: rubric.id, criteria: rubric.criteria.length } : {}) };
    }),
  };
}

function generationFigures(outcomes: readonly ContrastiveOutcome[], kept: readonly ContrastiveOutcome[], attemptsAllowed: number): ContrastiveReport['generation'] {
  const histogram: Record<string, number> = {};
  for (let attempt = 1; attempt <= attemptsAllowed; attempt += 1) histogram[String(attempt)] = 0;
  histogram.not_kept = 0;
  const attemptOutcomes: Record<AttemptOutcome, number> = { consistent: 0, inconsistent: 0, tie: 0, grading_error: 0, generation_error: 0 };
  let totalAttempts = 0;
  for (const outcome of outcomes) {
    totalAttempts += outcome.attempts_used;
    if (outcome.kept) histogram[String(outcome.attempts_used)] += 1;
    else histogram.not_kept += 1;
    for (const attempt of outcome.attempts) attemptOutcomes[attempt.outcome] += 1;
  }
  const firstAttempts = outcomes.map((outcome) => outcome.attempts[0]).filter((attempt): attempt is AttemptRecord => attempt !== undefined && attempt.outcome !== 'generation_error' && attempt.outcome !== 'grading_error');
  const firstConsistent = firstAttempts.filter((attempt) => attempt.outcome === 'consistent').length;
  return {
    pairs: outcomes.length,
    kept: kept.length,
    keep_rate: ratio(kept.length, outcomes.length),
    not_kept: outcomes.length - kept.length,
    attempts: {
      total: totalAttempts,
      mean_per_pair: ratio(totalAttempts, outcomes.length),
      mean_per_kept_pair: ratio(
        kept.reduce((total, outcome) => total + outcome.attempts_used, 0),
        kept.length,
      ),
      histogram,
    },
    attempt_outcomes: attemptOutcomes,
    first_attempt: {
      n: firstAttempts.length,
      consistent: firstConsistent,
      rate: ratio(firstConsistent, firstAttempts.length),
      note: 'in-sample: how often the first rubric written for a pair already scores that pair the right way round (before any rejection sampling)',
    },
  };
}

function evaluationFigures(kept: readonly ContrastiveOutcome[], split: SplitMode): ContrastiveReport['evaluation'] {
  const heldOut = kept.flatMap((outcome) => outcome.held_out);
  const heldOutCounts = { correct: 0, wrong: 0, tie: 0, grading_error: 0 };
  for (const record of heldOut) heldOutCounts[record.outcome] += 1;
  const graded = heldOutCounts.correct + heldOutCounts.wrong + heldOutCounts.tie;
  return {
    same_pairs: {
      n: kept.length,
      correct: kept.length,
      note: 'kept rubrics order the pair they were generated from correctly by construction (that is the filter); not evidence of quality',
    },
    held_out: {
      rubrics: kept.filter((outcome) => outcome.held_out.length > 0).length,
      pairs: heldOut.length,
      graded,
      correct: heldOutCounts.correct,
      wrong: heldOutCounts.wrong,
      ties: heldOutCounts.tie,
      errors: heldOutCounts.grading_error,
      accuracy: ratio(heldOutCounts.correct, graded),
      accuracy_ties_half: ratio(heldOutCounts.correct + heldOutCounts.tie / 2, graded),
      note:
        split === 'per-prompt'
          ? 'other pairs of the same prompt, which the kept rubric was not generated from; accuracy counts score ties as not correct'
          : 'split "none": no pairs were held out',
    },
  };
}

/** A readable summary of the report, a few lines long. */
export function formatContrastiveSummary(report: ContrastiveReport): string {
  const { generation, evaluation, input } = report;
  const percent = (value: number | null) => (value === null ? 'n/a' : `${(value * 100).toFixed(1)}%`);
  const lines = [
    `pairs: ${input.pairs} read (${input.ties_skipped} ties, ${input.unlabelled_skipped} unlabelled, ${input.invalid} invalid skipped); ${input.groups} prompts generate rubrics, ${input.held_out_pairs} pairs held out`,
    `kept: ${generation.kept} of ${generation.pairs} (${percent(generation.keep_rate)}) within ${report.attempts_allowed} attempt${report.attempts_allowed === 1 ? '' : 's'}; attempts used ${generation.attempts.total} (mean ${generation.attempts.mean_per_pair ?? 'n/a'} per pair)`,
    `attempts needed: ${Object.entries(generation.attempts.histogram)
      .map(([attempts, count]) => `${attempts}: ${count}`)
      .join(', ')}`,
    `first attempt consistent (in-sample): ${generation.first_attempt.consistent} of ${generation.first_attempt.n} (${percent(generation.first_attempt.rate)})`,
    `same pairs: ${evaluation.same_pairs.correct} of ${evaluation.same_pairs.n} ordered correctly by construction`,
    evaluation.held_out.pairs > 0
      ? `held-out pairs (same prompt, not used for generation): ${evaluation.held_out.correct} of ${evaluation.held_out.graded} correct (${percent(evaluation.held_out.accuracy)}; ${evaluation.held_out.ties} ties, ${evaluation.held_out.errors} grading errors) over ${evaluation.held_out.rubrics} rubrics`
      : 'held-out pairs: none (each prompt has a single pair, or --split none)',
    `generator: ${report.usage.generator.calls} calls, ${report.usage.generator.cache_hits} cache hits; judge: ${report.usage.judge.calls} calls, ${report.usage.judge.cache_hits} cache hits`,
  ];
  return lines.join('\n');
}
