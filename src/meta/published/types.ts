import type { RubricateError } from '../../errors.js';
import type { PairwiseMetaRecord } from '../../scoring/pairwise-metrics.js';

export type PublishedFormat = 'llmbar' | 'judgebench';

/** A published judge's verdicts, read into normalised pairwise records. */
export interface PublishedJudgeRun {
  format: PublishedFormat;
  file: string;
  /** LLMBar: the `evaluators/<judge>` folder; JudgeBench: `judge_name` and the judge model. */
  judge: string | null;
  /** LLMBar: the `<strategy>` folder (Vanilla, CoT, Swap, …); JudgeBench: null. */
  strategy: string | null;
  records: PairwiseMetaRecord[];
  /** Rows that could not be read; they are left out of `records` and of every metric. */
  invalid: RubricateError[];
}
