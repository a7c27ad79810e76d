/**
 * The shortest way to grade from code: items as they appear in an items file (plain objects)
 * in, results in input order and the run's metrics out. It is the same pipeline as
 * `rubricate grade`: a `Grader` with the library defaults (check runner, sampling, scoring).
 */
import { toRubricateError } from '../errors.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Metrics } from '../scoring/types.js';
import { Grader, type GraderOptions } from './grader.js';
import { toScoredItem, type ResultRecord } from '../results/results.js';

export interface GradeOutcome {
  /** One per input, in input order; a malformed input is an `invalid` record naming the field. */
  results: ResultRecord[];
  metrics: Metrics;
}

async function* toRecords(items: Iterable<unknown> | AsyncIterable<unknown>): AsyncGenerator<ImportRecord> {
  let line = 0;
  for await (const input of items) {
    line += 1;
    try {
      yield { kind: 'item', item: normalizeItem(input, { line }), line };
    } catch (error) {
      yield { kind: 'invalid', error: toRubricateError(error, 'INPUT_INVALID'), line };
    }
  }
}

/**
 * Grades items (`{id, prompt, response, rubric}` objects) with a judge; see `GraderOptions`.
 *
 * @example
 * ```ts
 * import { createJudge, grade } from 'rubricate';
 * const judge = await createJudge({ model: 'openai:gpt-4.1-mini' });
 * const { results, metrics } = await grade([{ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } }], { judge, plan: { explanation: 'short' } });
 * console.log(results[0].status, metrics);
 * ```
 */
export async function grade(items: Iterable<unknown> | AsyncIterable<unknown>, options: GraderOptions): Promise<GradeOutcome> {
  const grader = new Grader(options);
  const aggregator = grader.scoring.createAggregator();
  const results: ResultRecord[] = [];
  for await (const result of grader.gradeStream(toRecords(items))) {
    results.push(result);
    aggregator.add(toScoredItem(result));
  }
  return { results, metrics: aggregator.finish() };
}
