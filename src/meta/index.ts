/**
 * Judge meta-evaluation: how far a judge's verdicts can be trusted, measured against human or
 * gold labels. Pure functions over already-collected verdicts; nothing here calls a judge.
 * Definitions and sources: docs/meta-evaluation.md.
 */
import { RubricateError, type SerializedError } from '../errors.js';
import type { BootstrapOptions } from '../statistics/bootstrap.js';
import type { BinaryMetaReport } from './binary-metrics.js';
import { computePairwiseMeta, type PairwiseMetaReport } from '../scoring/pairwise-metrics.js';
import { readJudgeBenchOutputs } from './published/judgebench.js';
import { readLlmbarResults } from './published/llmbar.js';
import type { PublishedFormat } from './published/types.js';

export { formatMetaTable } from './format-table.js';
export { computeBinaryMeta } from './binary-metrics.js';
export type { BinaryMetaReport } from './binary-metrics.js';
export { computePairwiseMeta } from '../scoring/pairwise-metrics.js';
export type { PairwiseMetaReport } from '../scoring/pairwise-metrics.js';
export type { BootstrapOptions } from '../statistics/bootstrap.js';
export type { PublishedFormat } from './published/types.js';

/** Where a re-scored published judge came from. */
export interface PublishedJudgeInfo {
  format: PublishedFormat;
  file: string;
  judge: string | null;
  strategy: string | null;
  /** Rows read into pairwise records. */
  records: number;
  /** Rows that could not be read (left out of every metric), with the reasons. */
  invalidRows: number;
  invalid: SerializedError[];
}

export interface PublishedPairwiseReport extends PairwiseMetaReport {
  published: PublishedJudgeInfo;
}

export type MetaReport = BinaryMetaReport | PairwiseMetaReport | PublishedPairwiseReport;

/**
 * Re-scores a published judge from its output file without calling anything: LLMBar
 * `evaluators/<judge>/<strategy>/result.json` (with LLMBar's κ fields) or a JudgeBench
 * `outputs/*.jsonl` (JudgeBench's score per category in `byCategory`).
 *
 * @example
 * ```ts
 * import { formatMetaTable, scorePublishedJudge } from 'rubricate/meta';
 * const report = await scorePublishedJudge('judgebench', 'judgebench-outputs.jsonl');
 * console.log(formatMetaTable(report));
 * ```
 */
export async function scorePublishedJudge(
  format: PublishedFormat,
  file: string,
  options: BootstrapOptions = {},
): Promise<PublishedPairwiseReport> {
  let run;
  if (format === 'llmbar') run = await readLlmbarResults(file);
  else if (format === 'judgebench') run = await readJudgeBenchOutputs(file);
  else throw new RubricateError('CONFIG_INVALID', `unknown published judge format: ${String(format)} (expected llmbar or judgebench)`, { field: 'format' });
  const report = computePairwiseMeta(run.records, { ...options, llmbarKappa: format === 'llmbar' });
  // Built field by field so the serialised key order is fixed.
  return {
    kind: 'pairwise',
    published: {
      format: run.format,
      file: run.file,
      judge: run.judge,
      strategy: run.strategy,
      records: run.records.length,
      invalidRows: run.invalid.length,
      invalid: run.invalid.map((error) => error.toJSON()),
    },
    overall: report.overall,
    bySource: report.bySource,
    byCategory: report.byCategory,
    bootstrap: report.bootstrap,
  };
}
