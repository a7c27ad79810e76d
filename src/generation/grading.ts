/**
 * Grading candidate responses with a rubric through the real pipeline (the same Grader as
 * `rubricate grade`), and the verdict matrix the refinement steps read.
 */
import type { Grader } from '../pipeline/grader.js';
import type { ResultRecord } from '../results/results.js';
import type { Item, Message, Rubric } from '../rubric/schema.js';

export interface GradedResponses {
  /** Item score per response (null when grading failed). */
  scores: Array<number | null>;
  /** Per criterion id, the verdict for each response: met, not met, or null (error, skipped). */
  verdicts: Map<string, Array<boolean | null>>;
  records: ResultRecord[];
  /** Responses whose grading ended in error. */
  errors: number;
}

export interface GradingSubject {
  id: string;
  prompt: Message[];
  rubric: Rubric;
  reference?: string;
}

/** Grades every response (concurrently: the grader's engine bounds the calls). */
export async function gradeResponses(grader: Grader, subject: GradingSubject, responses: readonly string[], idPrefix = 'response'): Promise<GradedResponses> {
  const records = await Promise.all(
    responses.map((response, index) => {
      const item: Item = { id: `${subject.id}/${idPrefix}-${index + 1}`, prompt: subject.prompt, response, rubric: subject.rubric };
      if (subject.reference !== undefined) item.reference = subject.reference;
      return grader.gradeItem(item);
    }),
  );
  const verdicts = new Map<string, Array<boolean | null>>();
  for (const criterion of subject.rubric.criteria) verdicts.set(criterion.id, []);
  for (const record of records) {
    const byId = new Map(record.criteria.map((criterion) => [criterion.id, criterion]));
    for (const criterion of subject.rubric.criteria) {
      const result = byId.get(criterion.id);
      verdicts.get(criterion.id)!.push(result && result.status === 'ok' ? result.met : null);
    }
  }
  return {
    scores: records.map((record) => (record.status === 'ok' ? record.score : null)),
    verdicts,
    records,
    errors: records.filter((record) => record.status !== 'ok').length,
  };
}

/** Indices of the best two responses by score (ties broken by position, so results are stable). */
export function topTwo(scores: ReadonlyArray<number | null>): [number, number] | null {
  const ranked = scores
    .map((score, index) => ({ score, index }))
    .filter((entry): entry is { score: number; index: number } => entry.score !== null)
    .sort((first, second) => second.score - first.score || first.index - second.index);
  if (ranked.length < 2) return null;
  return [ranked[0].index, ranked[1].index];
}
