/**
 * Re-scoring a results file without calling a judge: the library's `scoreFile`, and what
 * `rubricate score` runs. The scoring is the one named, else the one recorded in the results,
 * else the default; unreadable lines count as invalid items, as they do when grading.
 */
import type { RubricateError } from '../errors.js';
import { getResultsImporter } from '../formats/index.js';
import { withFailedAsZero } from '../scoring/failed-as-zero.js';
import { countingCannotAssess } from '../scoring/cannot-assess.js';
import { getScoring } from '../scoring/registry.js';
import type { Aggregator, Metrics, Scoring } from '../scoring/types.js';
import { defaultScoringName } from './defaults.js';
import { toScoredItem } from '../results/results.js';
import { MadeUpTally } from '../util/made-up.js';

export interface ScoreFileOptions {
  /** Results format: `results` (rubricate's, default) or `simple-evals`. */
  format?: string;
  /** Scoring by name or value; default: the one recorded in the results, else healthbench. */
  scoring?: string | Scoring;
  /** simple-evals: the HealthBench examples file, for example-tag metrics. */
  examples?: string;
  /** Count failed judge calls as "not met" (ResearchRubrics, RuscaRL, AdvancedIF); reported in the metrics. */
  failedAsZero?: boolean;
  /** Called for each unreadable line (it still counts as an invalid item). */
  onInvalid?: (error: RubricateError) => void;
  onWarning?: (message: string) => void;
}

export interface ScoreFileOutcome {
  metrics: Metrics;
  /** The scoring applied. */
  scoring: Scoring;
  /** Unreadable lines. */
  invalid: number;
  /** Results lines read and scored. */
  scored: number;
  /** Who made the lines' verdicts up (a scripted judge, `rubricate fake-judge`), if anyone did. */
  madeUpBy?: string;
}

/**
 * Scores a results file again without a judge (what `rubricate score` runs).
 *
 * @example
 * ```ts
 * import { scoreFile } from 'rubricate';
 * const { metrics, scored, invalid } = await scoreFile('results.jsonl', { scoring: 'healthbench' });
 * ```
 */
export async function scoreFile(input: string, options: ScoreFileOptions = {}): Promise<ScoreFileOutcome> {
  const importer = getResultsImporter(options.format ?? 'results');
  const chosen = (value: string | Scoring): Scoring => {
    const scoring = countingCannotAssess(typeof value === 'string' ? getScoring(value) : value);
    return options.failedAsZero ? withFailedAsZero(scoring) : scoring;
  };
  let scoring: Scoring | undefined = options.scoring !== undefined ? chosen(options.scoring) : undefined;
  let aggregator: Aggregator | undefined = scoring?.createAggregator();
  let invalid = 0;
  let scored = 0;
  // Invalid lines before the first record wait until the record names the scoring.
  let pendingInvalid = 0;
  const madeUp = new MadeUpTally();
  for await (const entry of importer.read(input, { examples: options.examples, onWarning: options.onWarning })) {
    if (entry.kind === 'invalid') {
      invalid += 1;
      options.onInvalid?.(entry.error);
      if (aggregator) aggregator.add({ id: '', status: 'invalid', criteria: [] });
      else pendingInvalid += 1;
      continue;
    }
    scored += 1;
    if (!aggregator) {
      scoring = chosen(entry.record.scoring ?? defaultScoringName);
      aggregator = scoring.createAggregator();
      for (let index = 0; index < pendingInvalid; index += 1) aggregator.add({ id: '', status: 'invalid', criteria: [] });
    }
    aggregator.add(toScoredItem(entry.record));
    madeUp.add(entry.record);
  }
  if (!aggregator || !scoring) {
    scoring = chosen(defaultScoringName);
    aggregator = scoring.createAggregator();
    for (let index = 0; index < pendingInvalid; index += 1) aggregator.add({ id: '', status: 'invalid', criteria: [] });
  }
  return { metrics: aggregator.finish(), scoring, invalid, scored, ...(madeUp.by !== undefined ? { madeUpBy: madeUp.by } : {}) };
}
