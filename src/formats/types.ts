import type { ImageReader } from '../images/reader.js';
import type { BestOfNImportRecord, ImportRecord, PairwiseImportRecord } from '../rubric/records.js';
import type { Rubric } from '../rubric/schema.js';
import type { JudgeProtocol } from '../spec/run-spec.js';

export interface ImportOptions {
  /** Side file with responses to join onto the examples (HealthBench, IFEval). */
  responses?: string;
  /** Where responses come from when there is no responses file (HealthBench `ideal`). */
  responseFrom?: string;
  /** Rubrics by id, for items that carry `rubric_id` instead of a rubric. */
  rubrics?: ReadonlyMap<string, Rubric>;
  /** Examples file to take item tags from (simple-evals results carry no example tags). */
  examples?: string;
  /**
   * Records without a response become items with an empty response marked `withoutResponse`
   * instead of errors (`convert` writes rubric-only items; grading needs responses).
   */
  withoutResponses?: boolean;
  /** Non-fatal notices (unmatched responses, criteria falling back to the judge). */
  onWarning?: (message: string) => void;
  /** The judge's prompt protocol: a benchmark may leave out what its reference does not grade with it. */
  judgeProtocol?: JudgeProtocol;
  /** Called once per record a benchmark's own rule leaves out, with that rule. */
  onSkipped?: (reason: string) => void;
  /** Reads the image files and URLs items name, under its rules; default: files in the input's folder, URLs of public addresses. */
  images?: ImageReader;
  /** Only records I, I+N, I+2N… of what `read` yields, for an importer that declares `shards` (the others are shard-filtered by the caller). */
  shard?: { index: number; count: number };
}

/** The side inputs an importer can use; a flag for one it does not use is refused, not ignored. */
export type ImportOptionName = 'responses' | 'responseFrom' | 'rubrics' | 'examples' | 'imageRoot' | 'allowPrivateImageUrls';


/**
 * Reads a benchmark's own file format into canonical items. Importers never call a judge
 * and never hold a whole JSONL file in memory (a JSON array file is read whole, as it must be).
 */
export interface Importer {
  name: string;
  description: string;
  /** The scoring the benchmark defines, used when the user names none. */
  defaultScoring?: string;
  /** Side inputs this format uses (absent: not declared, nothing is refused). */
  accepts?: readonly ImportOptionName[];
  /** Applies `options.shard` itself, doing no work (no image read or fetched) for the other shards' records. */
  shards?: true;
  read(source: string, options: ImportOptions): AsyncIterable<ImportRecord>;
}

/** Reads a pairwise preference set (two responses, optional gold label) into PairwiseItems. */
export interface PairwiseImporter {
  name: string;
  description: string;
  read(source: string, options: ImportOptions): AsyncIterable<PairwiseImportRecord>;
}

/** Reads a best-of-N benchmark (a prompt, several responses, the correct ones first) into BestOfNItems. */
export interface BestOfNImporter {
  name: string;
  description: string;
  read(source: string): AsyncIterable<BestOfNImportRecord>;
}

/** Reads already-graded results (ours, or another tool's) so they can be re-scored without a judge. */
export interface ResultsImporter {
  name: string;
  description: string;
  /** Side inputs this format uses (absent: not declared, nothing is refused). */
  accepts?: readonly ImportOptionName[];
  read(source: string, options: ImportOptions): AsyncIterable<import('../results/results.js').ResultReadRecord>;
}
