/**
 * The Evaluate and Select steps of query-agnostic distillation: every candidate criterion is graded
 * on both responses of each labelled pair through the real pipeline (the `Grader` of `rubricate
 * grade`), which gives it a verdict vector over the pairs (+1 when it favours the human-preferred
 * response, −1 when it favours the other, 0 when it does not tell them apart); the compact set is
 * then chosen by greedy coding-rate selection over those vectors (`coding-rate.ts`).
 */
import { addUsage, type Usage } from '../engine/usage.js';
import type { Grader } from '../pipeline/grader.js';
import type { CriterionInput, Rubric } from '../rubric/schema.js';
import { round } from '../statistics/descriptive.js';
import { selectByCodingRate } from './coding-rate.js';
import type { PreferencePair } from './contrastive.js';
import { rubricFromInputs } from './criteria.js';
import { gradeResponses } from './grading.js';

export type CandidateOrigin = 'propose' | 'revise' | 'harden';

export type CandidateStatus = 'selected' | 'redundant' | 'misaligned' | 'undecided' | 'revised' | 'lint_dropped';

/** How a candidate fared on the evaluation pairs. */
export interface CandidateEvaluation {
  /** Pairs where it favoured the preferred response. */
  agree: number;
  /** Pairs where it favoured the other response. */
  disagree: number;
  /** Pairs it did not tell apart (both met or both not met). */
  ties: number;
  /** Pairs where a verdict of either response is missing (grading error): never counted as a tie. */
  errors: number;
  /** One entry per evaluation pair: +1, −1, or 0 (a tie or an error). */
  vector: number[];
  /** Per pair, the verdicts [preferred, other]; null where grading failed. */
  verdicts: Array<[boolean | null, boolean | null]>;
}

export interface Candidate {
  id: string;
  criterion: CriterionInput;
  origin: CandidateOrigin;
  /** Generators (with sample) that wrote it, after the merge. */
  sources: string[];
  /** The candidate it revises; several when the revision answer did not hold one criterion per original. */
  revisedFrom?: string | string[];
  hardenedOn?: string;
  evaluation?: CandidateEvaluation;
  status?: CandidateStatus;
  rateGain?: number;
  lintRule?: string;
}

/** Grades every candidate (as one rubric, ids kept) on both responses of every pair; adds the judge's usage. */
export async function evaluateCandidates(grader: Grader, candidates: readonly Candidate[], pairs: readonly PreferencePair[], judgeUsage: Usage): Promise<void> {
  if (candidates.length === 0) return;
  const rubric = rubricFromInputs(candidates.map((candidate) => ({ ...candidate.criterion, id: candidate.id })), { id: 'distill-candidates' });
  const graded = await Promise.all(
    pairs.map(async (pair) => {
      const result = await gradeResponses(grader, { id: `distill/${pair.id}`, prompt: pair.prompt, rubric, reference: pair.reference }, [pair.chosen, pair.rejected], 'pair');
      for (const record of result.records) if (record.usage) addUsage(judgeUsage, record.usage);
      if (grader.engine.fatal) throw grader.engine.fatal;
      return result.verdicts;
    }),
  );
  for (const candidate of candidates) {
    const evaluation: CandidateEvaluation = { agree: 0, disagree: 0, ties: 0, errors: 0, vector: [], verdicts: [] };
    const direction = Math.sign(candidate.criterion.points ?? 1) || 1;
    for (const verdicts of graded) {
      const [preferred, other] = verdicts.get(candidate.id) ?? [null, null];
      evaluation.verdicts.push([preferred ?? null, other ?? null]);
      if (preferred === null || other === null || preferred === undefined || other === undefined) {
        evaluation.errors += 1;
        evaluation.vector.push(0);
        continue;
      }
      const favour = direction * (Number(preferred) - Number(other));
      evaluation.vector.push(favour);
      if (favour > 0) evaluation.agree += 1;
      else if (favour < 0) evaluation.disagree += 1;
      else evaluation.ties += 1;
    }
    candidate.evaluation = evaluation;
  }
}

/** A candidate worth keeping: it favours the preferred response more often than the other. */
export function isAligned(candidate: Candidate): boolean {
  const evaluation = candidate.evaluation;
  return evaluation !== undefined && evaluation.agree > evaluation.disagree;
}

/** Agreement among the pairs a candidate told apart (null when it told none apart). */
export function accuracyOf(evaluation: CandidateEvaluation): number | null {
  const decided = evaluation.agree + evaluation.disagree;
  return decided === 0 ? null : round(evaluation.agree / decided);
}

/**
 * The compact set: aligned candidates ordered by accuracy then agreement (so a tie in rate gain
 * goes to the better one), chosen greedily by coding-rate gain over their verdict vectors.
 */
export function selectCompactSet(candidates: readonly Candidate[], options: { maxSelected: number; epsilon: number }): { selected: Candidate[]; rate: number } {
  const eligible = candidates
    .filter(isAligned)
    .sort((first, second) => (accuracyOf(second.evaluation!) ?? 0) - (accuracyOf(first.evaluation!) ?? 0) || second.evaluation!.agree - first.evaluation!.agree);
  const selection = selectByCodingRate(
    eligible.map((candidate) => candidate.evaluation!.vector),
    { maxSelected: options.maxSelected, epsilon: options.epsilon },
  );
  for (const candidate of eligible) candidate.status = 'redundant';
  const selected = selection.selected.map((index, order) => {
    const candidate = eligible[index];
    candidate.status = 'selected';
    candidate.rateGain = round(selection.gains[order]);
    return candidate;
  });
  return { selected, rate: round(selection.rate) };
}

export interface PairOrdering {
  correct: number;
  wrong: number;
  ties: number;
  errors: number;
  /** correct / (correct + wrong + ties); null with none graded. */
  accuracy: number | null;
}

/**
 * How a set of criteria orders the evaluation pairs, from the verdicts already graded (no new
 * calls): each response's points summed, the preferred one must score strictly higher.
 */
export function pairOrdering(criteria: ReadonlyArray<{ points: number; evaluation: CandidateEvaluation }>, pairCount: number): PairOrdering {
  const ordering: PairOrdering = { correct: 0, wrong: 0, ties: 0, errors: 0, accuracy: null };
  for (let pair = 0; pair < pairCount; pair += 1) {
    let preferred = 0;
    let other = 0;
    let failed = false;
    for (const criterion of criteria) {
      const [first, second] = criterion.evaluation.verdicts[pair];
      if (first === null || second === null) failed = true;
      preferred += first ? criterion.points : 0;
      other += second ? criterion.points : 0;
    }
    if (failed) ordering.errors += 1;
    else if (Math.abs(preferred - other) <= 1e-9) ordering.ties += 1;
    else if (preferred > other) ordering.correct += 1;
    else ordering.wrong += 1;
  }
  const graded = ordering.correct + ordering.wrong + ordering.ties;
  ordering.accuracy = graded === 0 ? null : round(ordering.correct / graded);
  return ordering;
}

/** Evaluation pairs where both responses meet every positive aligned criterion and no negative one: the set cannot tell them apart. */
export function saturatedPairs(aligned: readonly Candidate[], pairs: readonly PreferencePair[]): PreferencePair[] {
  if (aligned.length === 0) return [];
  return pairs.filter((_, index) =>
    aligned.every((candidate) => {
      const [preferred, other] = candidate.evaluation!.verdicts[index];
      const wanted = (candidate.criterion.points ?? 1) > 0;
      return preferred === wanted && other === wanted;
    }),
  );
}

/** The rubric a candidate list makes (ids derived from the text, as any generated rubric). */
export function rubricOfCandidates(candidates: readonly Candidate[], metadata: Record<string, unknown>): Rubric {
  return rubricFromInputs(
    candidates.map((candidate) => {
      const { id: _id, ...criterion } = candidate.criterion;
      return { ...criterion, metadata: { ...criterion.metadata, distill: provenanceOf(candidate) } };
    }),
    { metadata },
  );
}

/** Where a distilled criterion came from and how it fared: `metadata.distill`. */
export function provenanceOf(candidate: Candidate): Record<string, unknown> {
  const evaluation = candidate.evaluation;
  return {
    candidate: candidate.id,
    origin: candidate.origin,
    sources: candidate.sources,
    ...(candidate.revisedFrom !== undefined ? { revised_from: candidate.revisedFrom } : {}),
    ...(candidate.hardenedOn !== undefined ? { hardened_on_pair: candidate.hardenedOn } : {}),
    ...(evaluation ? { agree: evaluation.agree, disagree: evaluation.disagree, ties: evaluation.ties, errors: evaluation.errors, accuracy: accuracyOf(evaluation) } : {}),
    ...(candidate.rateGain !== undefined ? { rate_gain: candidate.rateGain } : {}),
  };
}
