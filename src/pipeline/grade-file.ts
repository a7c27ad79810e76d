/**
 * Grading a whole input into a results file: records stream from an importer through the
 * grader into JSONL, while metrics and usage accumulate. Shared by `rubricate grade`, the
 * library and the benchmarks, so they all measure and produce the same thing.
 */
import { JsonLinesWriter } from '../util/files.js';
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import type { RubricateError } from '../errors.js';
import type { ImportRecord } from '../rubric/formats/types.js';
import type { Metrics } from '../scoring/types.js';
import type { Grader } from './grader.js';
import { toScoredItem, type ResultRecord } from './results.js';

export interface GradeFileOptions {
  grader: Grader;
  records: AsyncIterable<ImportRecord>;
  out: string;
  /** Called for each invalid input record (it is still written to the results). */
  onInvalid?: (error: RubricateError) => void;
  /** Stop at the first invalid record. */
  strict?: boolean;
  /** Where results come from instead of `grader.gradeStream` (a distributed queue); they must be in input order. */
  results?: (records: AsyncIterable<ImportRecord>) => AsyncIterable<ResultRecord>;
}

export interface GradeFileOutcome {
  metrics: Metrics;
  usage: Usage;
  invalid: number;
}

export async function gradeFile(options: GradeFileOptions): Promise<GradeFileOutcome> {
  const { grader } = options;
  const writer = new JsonLinesWriter(options.out);
  const aggregator = grader.scoring.createAggregator();
  const usage = emptyUsage();
  let invalid = 0;
  async function* records(): AsyncGenerator<ImportRecord> {
    for await (const record of options.records) {
      yield record;
      if (record.kind === 'invalid') {
        invalid += 1;
        options.onInvalid?.(record.error);
        if (options.strict) return;
      }
    }
  }
  try {
    for await (const result of (options.results ?? ((input) => grader.gradeStream(input)))(records())) {
      await writer.write(result);
      aggregator.add(toScoredItem(result));
      if (result.usage) addUsage(usage, result.usage);
    }
  } finally {
    await writer.close();
  }
  return { metrics: aggregator.finish(), usage, invalid };
}
