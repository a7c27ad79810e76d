/**
 * Re-judging a results file (`rubricate rejudge`): its lines become items again
 * (`readResultsAsItems`) and go through the same `Grader`, store and scoring as `grade`. A reply
 * whose request did not change is served by the store, so an unchanged item makes no call.
 *
 * An item that made no judge call and comes out exactly as its line was, apart from usage, is
 * written as that line, usage included: the usage of a line is what its verdicts cost when they
 * were made, and re-judging an unchanged file gives it back byte for byte. What this run spent
 * is counted apart (`spent`), for the summary and the metrics.
 */
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import type { ImportRecord } from '../rubric/records.js';
import type { RegradeRecord } from '../formats/results.js';
import type { ResultRecord } from '../results/results.js';

export interface RejudgeTally {
  /** What this run spent: the new lines' usage, before any is carried over. */
  spent: Usage;
  /** Lines written back as they were. */
  kept: number;
  /** Lines that changed (a new verdict, another judge, rubric, scoring or setting). */
  changed: number;
}

export interface Rejudging {
  /** The items to grade, in the order of the results file. */
  records: AsyncIterable<ImportRecord>;
  /** The grader's results for `records`, each unchanged one replaced by the line it came from. */
  keepUnchanged(results: AsyncIterable<ResultRecord>): AsyncGenerator<ResultRecord>;
  readonly tally: RejudgeTally;
}

/**
 * Pairs each result with the line it was graded from. Results come in input order, one per
 * record, so the lines wait in a queue only as long as their items are being graded.
 */
export function startRejudging(entries: AsyncIterable<RegradeRecord>): Rejudging {
  const waiting: Array<ResultRecord | undefined> = [];
  const tally: RejudgeTally = { spent: emptyUsage(), kept: 0, changed: 0 };
  return {
    records: (async function* () {
      for await (const entry of entries) {
        waiting.push(entry.previous);
        yield entry.record;
      }
    })(),
    async *keepUnchanged(results) {
      for await (const result of results) {
        const previous = waiting.shift();
        if (result.usage) addUsage(tally.spent, result.usage);
        if (previous && unchanged(result, previous)) {
          tally.kept += 1;
          yield previous;
        } else {
          tally.changed += 1;
          yield result;
        }
      }
    },
    tally,
  };
}

/** No judge call was made and the line is the same but for its usage. */
function unchanged(result: ResultRecord, previous: ResultRecord): boolean {
  if ((result.usage?.calls ?? 0) > 0) return false;
  return JSON.stringify({ ...result, usage: previous.usage }) === JSON.stringify(previous);
}
