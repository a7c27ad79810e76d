/**
 * Grading a whole input into a results file: records stream from an importer through the
 * grader into JSONL, while metrics and usage accumulate. Shared by `rubricate grade`, the
 * library and the benchmarks, so they all measure and produce the same thing.
 */
import { JsonLinesWriter } from '../util/files.js';
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import { errorCodes, exitCodes, type ErrorCode, type RubricateError } from '../errors.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Metrics } from '../scoring/types.js';
import type { Grader } from './grader.js';
import { toScoredItem, type ResultRecord } from '../results/results.js';
import { ErrorTally, type ErrorCodeCount } from './error-summary.js';
import { admitUntilStopped, type AdmissionState } from './admission.js';
import { MadeUpTally } from '../util/made-up.js';

export interface GradeFileOptions {
  grader: Grader;
  records: AsyncIterable<ImportRecord>;
  out: string;
  /** Called for each invalid input record (it is still written to the results). */
  onInvalid?: (error: RubricateError) => void;
  /** Stop at the first invalid record. */
  strict?: boolean;
  /**
   * Once aborted, no more records are taken; items that finish are still written, in order,
   * up to the first one left unfinished. The outcome then says `interrupted`.
   */
  stopSignal?: AbortSignal;
  /** Where results come from instead of `grader.gradeStream` (a distributed queue); they must be in input order. */
  results?: (records: AsyncIterable<ImportRecord>) => AsyncIterable<ResultRecord>;
}

export interface GradeFileOutcome {
  metrics: Metrics;
  usage: Usage;
  invalid: number;
  /** Error codes met in the results, most frequent first, with an example each. */
  errors: ErrorCodeCount[];
  /** Stopped before every record was graded: the metrics are partial and must not be written as final. */
  interrupted: boolean;
  /** Result lines written. */
  written: number;
  /**
   * No criterion got a verdict from the judge, and every judge criterion failed for a reason
   * that makes the judge unusable (unreachable, refusing the key or every request): exit 4, not 3.
   */
  judgeUnusable: boolean;
  /** Who made the written lines' verdicts up (a scripted judge, `rubricate fake-judge`), if anyone did. */
  madeUpBy?: string;
}

/**
 * A failure that says the judge cannot be used (unreachable, refusing the key or the requests,
 * failing every call): the judge codes of exit 4. Not `JUDGE_UNAVAILABLE`: with `--judge none`
 * there is no judge to be unusable, only criteria that needed one.
 */
function isJudgeUnusable(code: string | undefined): boolean {
  if (!code?.startsWith('JUDGE_') || code === 'JUDGE_UNAVAILABLE') return false;
  return errorCodes[code as ErrorCode]?.exitCode === exitCodes.judgeUnavailable;
}

/** Judge verdicts and failures of the written lines: whether the judge ever worked. */
class JudgeOutcomes {
  private verdicts = 0;
  private unusable = 0;
  private otherFailures = 0;

  add(result: ResultRecord): void {
    for (const criterion of result.criteria) {
      if (criterion.source !== 'judge') continue;
      if (criterion.status === 'ok') this.verdicts += 1;
      else if (criterion.status === 'error') {
        if (isJudgeUnusable(criterion.error?.code)) this.unusable += 1;
        else this.otherFailures += 1;
      }
    }
  }

  get judgeUnusable(): boolean {
    return this.verdicts === 0 && this.unusable > 0 && this.otherFailures === 0;
  }
}

/**
 * Grades import records into a results file (written atomically, in input order) and returns the metrics and usage.
 *
 * @example
 * ```ts
 * import { Grader, createJudge, getItemImporter, gradeFile } from 'rubricate';
 * const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) });
 * const outcome = await gradeFile({ grader, records: getItemImporter('items').read('items.jsonl', {}), out: 'results.jsonl' });
 * console.log(outcome.metrics, outcome.invalid);
 * ```
 */
export async function gradeFile(options: GradeFileOptions): Promise<GradeFileOutcome> {
  const { grader } = options;
  const writer = new JsonLinesWriter(options.out);
  const aggregator = grader.scoring.createAggregator();
  const usage = emptyUsage();
  const errors = new ErrorTally();
  const judged = new JudgeOutcomes();
  const madeUp = new MadeUpTally();
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
  const admission: AdmissionState = { exhausted: false, admitted: 0 };
  const stop = options.stopSignal;
  // After a stop, the first item in error may just have been cancelled: it and everything after it stay unwritten.
  let held = false;
  let written = 0;
  // Results that came back: a stopped source of results (a queue whose unstarted chunks were taken back) ends short of the records admitted.
  let returned = 0;
  try {
    for await (const result of (options.results ?? ((input) => grader.gradeStream(input)))(admitUntilStopped(records(), stop, admission))) {
      returned += 1;
      if (held || (stop?.aborted && result.status === 'error')) {
        held = true;
        continue;
      }
      await writer.write(result);
      written += 1;
      aggregator.add(toScoredItem(result));
      errors.addResult(result);
      judged.add(result);
      madeUp.add(result);
      if (result.usage) addUsage(usage, result.usage);
    }
  } catch (error) {
    await writer.discard();
    throw error;
  }
  await writer.close();
  const interrupted = Boolean(stop?.aborted) && (held || !admission.exhausted || returned < admission.admitted);
  return { metrics: aggregator.finish(), usage, invalid, interrupted, written, errors: errors.top(), judgeUnusable: judged.judgeUnusable, ...(madeUp.by !== undefined ? { madeUpBy: madeUp.by } : {}) };
}
