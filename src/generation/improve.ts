/**
 * Rubric-guided improvement of responses (not rubrics): best-of-N selection over sampled
 * responses, then rounds of revision in which the generator is shown what the grading found (the
 * criteria the best response missed, the pitfalls it fell into) and the revision is graded again;
 * the best response so far is kept. Every round's score is recorded, so the gain per round is a
 * metric. A generator answer that fails or cannot be read is an error for its round, never an
 * unchanged response counted as a round.
 */
import { toRubricateError, type SerializedError } from '../errors.js';
import type { Grader } from '../pipeline/grader.js';
import type { ResultRecord } from '../results/results.js';
import type { Item } from '../rubric/schema.js';
import { isFatal } from './decompose-filter.js';
import type { RubricGenerator } from './generator.js';
import type { MissedCriterion } from './prompts.js';
import { rubricateVersion } from '../version.js';

export interface ImproveOptions {
  generator: RubricGenerator;
  grader: Grader;
  /** Responses sampled from the generator to choose the best of (0: start from the item's own response). */
  samples: number;
  /** Revision rounds after the start. */
  rounds: number;
  temperature?: number;
  maxTokens?: number;
}

export type ImprovementRound = {
  round: number;
  kind: 'given' | 'sample' | 'revision';
  status: 'ok' | 'error';
  score: number | null;
  error?: SerializedError;
};

/** What `improvement` of a results line records (a plain JSON object). */
export type Improvement = {
  method: 'best-of-n' | 'revise' | 'best-of-n+revise';
  rounds: ImprovementRound[];
  /** The round whose response the line is (the best graded); null when none graded. */
  best_round: number | null;
  start_score: number | null;
  best_score: number | null;
  /** Why revision stopped before the last round. */
  stopped?: string;
};

/** What the best response's grading says it missed: positive criteria not met, pitfalls met. */
function missedCriteria(record: ResultRecord): MissedCriterion[] {
  return record.criteria
    .filter((criterion) => criterion.status === 'ok' && criterion.met !== null && (criterion.points > 0 ? criterion.met === false : criterion.met === true))
    .map((criterion) => ({ text: criterion.text ?? criterion.id, points: criterion.points }));
}

interface Graded {
  round: number;
  response: string;
  record: ResultRecord;
}

/** The better of two graded responses: a score only counts when the grading was ok; ties keep the earlier. */
function better(current: Graded | undefined, candidate: Graded): Graded {
  if (candidate.record.status !== 'ok' || candidate.record.score === null) return current ?? candidate;
  if (!current || current.record.status !== 'ok' || current.record.score === null || candidate.record.score > current.record.score) return candidate;
  return current;
}

export async function improveItem(item: Item, options: ImproveOptions): Promise<{ record: ResultRecord; improvement: Improvement }> {
  const rounds: ImprovementRound[] = [];
  const sampling = { temperature: options.temperature, maxTokens: options.maxTokens };
  const grade = async (round: number, kind: ImprovementRound['kind'], response: string): Promise<Graded> => {
    const record = await options.grader.gradeItem({ ...item, response });
    rounds.push({ round, kind, status: record.status === 'ok' ? 'ok' : 'error', score: record.status === 'ok' ? record.score : null, ...(record.error ? { error: record.error } : {}) });
    return { round, response, record };
  };
  const failed = (round: number, kind: ImprovementRound['kind'], error: unknown) => {
    if (isFatal(error)) throw error;
    rounds.push({ round, kind, status: 'error', score: null, error: toRubricateError(error).toJSON() });
  };

  let best: Graded | undefined;
  let round = 0;
  if (options.samples === 0) best = await grade(round++, 'given', item.response);
  for (let sample = 0; sample < options.samples; sample += 1) {
    try {
      best = better(best, await grade(round, 'sample', await options.generator.sampleResponse(item.prompt, { sample, ...sampling })));
    } catch (error) {
      failed(round, 'sample', error);
    }
    round += 1;
  }
  const start = best;
  let stopped: string | undefined;
  for (let revision = 1; revision <= options.rounds; revision += 1) {
    if (!best || best.record.status !== 'ok') {
      stopped = 'no graded response to revise';
      break;
    }
    const missed = missedCriteria(best.record);
    if (missed.length === 0) {
      stopped = 'nothing left to fix: every criterion met, no pitfall';
      break;
    }
    let revised: string;
    try {
      revised = await options.generator.reviseResponse({ prompt: item.prompt, response: best.response, missed }, { sample: revision, ...sampling });
    } catch (error) {
      failed(round, 'revision', error);
      stopped = 'the generator gave no usable revision';
      break;
    }
    best = better(best, await grade(round++, 'revision', revised));
  }
  const method = options.samples > 0 ? (options.rounds > 0 ? 'best-of-n+revise' : 'best-of-n') : 'revise';
  const scoreOf = (graded: Graded | undefined) => (graded && graded.record.status === 'ok' ? graded.record.score : null);
  // With nothing graded at all, the line is the last failure: an error, never a score.
  const record: ResultRecord = best?.record ?? { id: item.id, status: 'error', score: null, criteria: [], error: rounds.at(-1)?.error ?? { code: 'INTERNAL', message: 'no response to grade' }, rubricate_version: rubricateVersion };
  return {
    record,
    improvement: { method, rounds, best_round: best && scoreOf(best) !== null ? best.round : null, start_score: scoreOf(start), best_score: scoreOf(best), ...(stopped ? { stopped } : {}) },
  };
}
