/**
 * Runs a pairwise judge on a labelled preference set and scores it in one go.
 *
 * The judging itself is injected (`JudgePairs`): given pairs, it returns the judge's verdict
 * with the responses in their original order and with them swapped, the swapped verdict
 * already mapped back to the original labelling. The `compare` grading strategy provides the
 * real one; tests use a scripted stand-in. Everything after the verdicts is the pure
 * pairwise meta-evaluation of `pairwise-metrics.ts`.
 */
import { RubricateError, type SerializedError } from '../errors.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import type { PairLabel, PairwiseItem } from '../rubric/schema.js';
import type { BootstrapOptions } from '../statistics/bootstrap.js';
import { computePairwiseMeta, type PairVerdict, type PairwiseMetaRecord, type PairwiseMetaReport } from '../scoring/pairwise-metrics.js';
import { characterCount } from '../results/results.js';

/** The judge's two verdicts on one pair. */
export interface PairJudgment {
  /** The pair's id (`PairwiseItem.id`). */
  id: string;
  /** Verdict with the responses shown as (A, B). */
  original: PairVerdict;
  /** Verdict with the responses shown as (B, A), mapped back: 'A' still means the response originally called A. */
  swapped: PairVerdict;
  /** Why a verdict is `invalid` (judge error, unparseable reply), when known. */
  errors?: SerializedError[];
}

/**
 * Judges pairs in both orders. May answer all at once or stream judgments as they finish;
 * judgments are matched to pairs by id, so their order does not matter. A pair with no
 * judgment counts as invalid in both orders.
 */
export type JudgePairs = (pairs: readonly PairwiseItem[], options: { signal?: AbortSignal }) => Promise<readonly PairJudgment[]> | AsyncIterable<PairJudgment>;

export interface PairwiseRunOptions extends BootstrapOptions {
  signal?: AbortSignal;
  /** Hears about each unreadable row of the dataset as it is read. */
  onInvalid?: (error: RubricateError) => void;
}

export interface PairwiseRunInfo {
  file: string;
  format: string;
  /** Pairs read from the dataset. */
  pairs: number;
  /** Pairs without a gold label: not sent to the judge, not scored. */
  unlabelled: number;
  /** Rows that could not be read. */
  invalidRows: number;
  /** Pairs sent to the judge. */
  judged: number;
  /** Pairs the judge returned no judgment for (counted invalid in both orders). */
  missingJudgments: number;
  /** Verdicts that are `invalid` in either order. */
  invalidVerdicts: number;
  /** A few of the errors behind invalid verdicts and unreadable rows. */
  problems: SerializedError[];
}

export interface PairwiseRunReport extends PairwiseMetaReport {
  run: PairwiseRunInfo;
  /**
   * Length-only judges on the same pairs, for reading the judge's figures against: always the
   * longer response (in characters), always the shorter; equal lengths are a tie.
   */
  baselines: { longer: PairwiseMetaReport; shorter: PairwiseMetaReport };
  /** Every pair's verdicts, for auditing. */
  verdicts: Array<{ id: string; gold: PairLabel; original: PairVerdict; swapped: PairVerdict; source?: string }>;
}

const maximumProblems = 50;
const validVerdicts: readonly PairVerdict[] = ['A', 'B', 'tie', 'invalid'];

async function collectJudgments(result: Promise<readonly PairJudgment[]> | AsyncIterable<PairJudgment>): Promise<PairJudgment[]> {
  if (Symbol.asyncIterator in result) {
    const collected: PairJudgment[] = [];
    for await (const judgment of result) collected.push(judgment);
    return collected;
  }
  return [...(await result)];
}

/**
 * Reads a labelled pairwise set, has `judgePairs` judge every labelled pair in both orders,
 * and computes accuracy, positional agreement, κ and JudgeBench's score per source.
 */
export async function runPairwiseMeta(
  format: string,
  file: string,
  records: AsyncIterable<PairwiseImportRecord>,
  judgePairs: JudgePairs,
  options: PairwiseRunOptions = {},
): Promise<PairwiseRunReport> {
  const pairs: PairwiseItem[] = [];
  const problems: SerializedError[] = [];
  const run: PairwiseRunInfo = { file, format, pairs: 0, unlabelled: 0, invalidRows: 0, judged: 0, missingJudgments: 0, invalidVerdicts: 0, problems };
  const seen = new Set<string>();
  for await (const record of records) {
    if (record.kind === 'invalid') {
      run.invalidRows += 1;
      options.onInvalid?.(record.error);
      if (problems.length < maximumProblems) problems.push(record.error.toJSON());
      continue;
    }
    run.pairs += 1;
    if (record.pair.label === undefined) {
      run.unlabelled += 1;
      continue;
    }
    if (seen.has(record.pair.id)) {
      throw new RubricateError('INPUT_INVALID', `pair id "${record.pair.id}" appears twice; judgments are matched by id`, { file, line: record.line, field: 'id' });
    }
    seen.add(record.pair.id);
    pairs.push(record.pair);
  }
  if (pairs.length === 0) throw new RubricateError('INPUT_INVALID', 'no labelled pairs to judge', { file });
  run.judged = pairs.length;

  const judgments = new Map<string, PairJudgment>();
  for (const judgment of await collectJudgments(judgePairs(pairs, { signal: options.signal }))) {
    if (!seen.has(judgment.id)) throw new RubricateError('INTERNAL', `pair judge returned a judgment for unknown pair "${judgment.id}"`);
    for (const order of ['original', 'swapped'] as const) {
      if (!validVerdicts.includes(judgment[order])) throw new RubricateError('INTERNAL', `pair judge returned "${String(judgment[order])}" as the ${order} verdict of "${judgment.id}"`);
    }
    judgments.set(judgment.id, judgment);
  }

  const metaRecords: PairwiseMetaRecord[] = [];
  const verdicts: PairwiseRunReport['verdicts'] = [];
  for (const pair of pairs) {
    const judgment = judgments.get(pair.id);
    if (!judgment) run.missingJudgments += 1;
    const original = judgment?.original ?? 'invalid';
    const swapped = judgment?.swapped ?? 'invalid';
    if (original === 'invalid' || swapped === 'invalid') run.invalidVerdicts += 1;
    for (const error of judgment?.errors ?? []) if (problems.length < maximumProblems) problems.push(error);
    const gold = pair.label!;
    metaRecords.push({ id: pair.id, gold, original, swapped, ...(pair.source !== undefined ? { source: pair.source } : {}) });
    verdicts.push({ id: pair.id, gold, original, swapped, ...(pair.source !== undefined ? { source: pair.source } : {}) });
  }
  const bootstrap = { resamples: options.resamples, seed: options.seed, confidence: options.confidence };
  const report = computePairwiseMeta(metaRecords, bootstrap);
  return { ...report, run, baselines: { longer: lengthBaseline(pairs, 'longer', bootstrap), shorter: lengthBaseline(pairs, 'shorter', bootstrap) }, verdicts };
}

/** A judge that picks by length alone, the same in both orders. */
export function lengthBaseline(pairs: readonly PairwiseItem[], prefer: 'longer' | 'shorter', bootstrap: BootstrapOptions): PairwiseMetaReport {
  const records = pairs.map((pair): PairwiseMetaRecord => {
    const difference = characterCount(pair.responseA) - characterCount(pair.responseB);
    const verdict: PairVerdict = difference === 0 ? 'tie' : (difference > 0) === (prefer === 'longer') ? 'A' : 'B';
    return { id: pair.id, gold: pair.label!, original: verdict, swapped: verdict, ...(pair.source !== undefined ? { source: pair.source } : {}) };
  });
  return computePairwiseMeta(records, bootstrap);
}
