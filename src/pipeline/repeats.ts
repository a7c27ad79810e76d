/**
 * `grade --repeats N`: every item graded N times through the same pipeline, each repeat by a
 * `Grader` of its own whose replies are cached under their own sample indices (repeat 0 is the
 * run itself, with the run's keys). The results line is repeat 0's, with each criterion's
 * verdict in every repeat (`repeats`) and the item's score in every repeat (`repeat_scores`)
 * added, and the usage of all repeats; `createStabilityTally` summarises them.
 */
import { addUsage, emptyUsage } from '../engine/usage.js';
import type { ImportRecord } from '../rubric/records.js';
import { toResultRecord, type ResultRecord } from '../results/results.js';
import type { Grader } from './grader.js';

/** One results line from the N repeats of an item (repeat 0 first). */
export function withRepeats(results: readonly ResultRecord[], line: number): ResultRecord {
  const [first] = results;
  const usage = emptyUsage();
  for (const result of results) if (result.usage) addUsage(usage, result.usage);
  const record: ResultRecord = { ...first, criteria: first.criteria.map((criterion, index) => ({ ...criterion, repeats: results.map((result) => (result.criteria[index]?.status === 'ok' ? result.criteria[index].met : null)) })), usage, line };
  record.repeat_scores = results.map((result) => result.score);
  return record;
}

/**
 * Results in input order, each item graded by every grader at once (the first grader's window
 * and progress events; the others are quiet). Unreadable records stay in their place as `invalid`.
 */
export function gradeRepeatedly(graders: readonly Grader[], records: AsyncIterable<ImportRecord>): AsyncGenerator<ResultRecord> {
  const [first] = graders;
  return first.inInputOrder(records, async (record): Promise<ResultRecord> => {
    if (record.kind === 'invalid') {
      first.noteInvalid();
      return toResultRecord(record, { judge: first.judgeInfo, scoring: first.scoring });
    }
    return withRepeats(await Promise.all(graders.map((grader) => grader.gradeItem(record.item))), record.line);
  });
}
