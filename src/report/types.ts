/**
 * The data a report embeds. Everything a page needs is prepared here, in Node, and shipped as
 * compact JSON: item and criterion fields as parallel arrays (columns), repeated strings
 * (criterion texts, ids, tags) once in a string table, long texts (conversations, responses,
 * explanations) in a separate payload the page decodes after its first paint.
 *
 * A report shows one *view*; `view` names it. Results (one run, or one run compared with
 * another) and meta-evaluation reports are views today; a pairwise compare view can be added
 * as one more member of `ReportPayload` with its own page renderer.
 */
import type { Usage } from '../engine/usage.js';
import type { JudgeInfo } from '../pipeline/results.js';
import type { Metrics } from '../scoring/types.js';
import type { BinaryMetaReport } from '../meta/binary-metrics.js';
import type { PairwiseMetaReport } from '../meta/pairwise-metrics.js';

export const reportPayloadVersion = 1;

/** Item status codes in `ItemColumns.status`. */
export const itemStatusCodes = { ok: 0, error: 1, invalid: 2 } as const;
export const itemStatusNames = ['ok', 'error', 'invalid'] as const;

/**
 * Criterion flags packed in one small integer:
 * bits 0–1 status (0 ok, 1 error, 2 skipped), bits 2–3 met (0 null, 1 false, 2 true),
 * bit 4 source (0 judge, 1 check), bit 5 kind (0 principle, 1 hard_rule).
 */
export const criterionStatusNames = ['ok', 'error', 'skipped'] as const;

/** Columns of the items of one run; index i of every array is item i (results-file order). */
export interface ItemColumns {
  ids: string[];
  /** See `itemStatusCodes`. */
  status: number[];
  /** Item score under the report's scoring; null when unscorable or not ok. */
  scores: Array<number | null>;
  /** Bit 0: gated (a failed hard rule scored the item 0). */
  flags: number[];
  /** Index into `RunData.tagSets`, or -1 for no tags. */
  tagSets: number[];
  /** Item i owns criteria `criteriaOffsets[i]` … `criteriaOffsets[i + 1] - 1`. */
  criteriaOffsets: number[];
  /** Line of the item in its results file. */
  lines: number[];
  /** Rubric id as a string-table index, or -1. */
  rubricIds: number[];
  /** Flattened triples [item index, error code (string table), error message (the item's text chunk)]. */
  errors: number[];
}

/** Criterion verdict fields that are rare (ordinal values, probabilities, errors, skips). */
export interface CriterionExtras {
  value?: number | null;
  label?: string;
  probability?: number;
  error?: { code: string; message: string };
  skip_reason?: string;
}

/** Columns of every criterion of every item of one run, flattened in item order. */
export interface CriterionColumns {
  /** String-table indices. */
  ids: number[];
  texts: number[];
  points: number[];
  /** Index into `RunData.tagSets`, or -1. */
  tagSets: number[];
  /** Packed status / met / source / kind, see `criterionStatusNames`. */
  flags: number[];
  /** Sparse: [criterion index, extras] for criteria that have any. */
  extras: Array<[number, CriterionExtras]>;
}

/**
 * Long texts of a run's items `firstItem` … `firstItem + prompts.length - 1`, shipped apart from
 * the columns so the overview paints before they are decoded, and in chunks so showing one item
 * decodes one chunk. Indices point into this chunk's `strings`.
 */
export interface RunTexts {
  firstItem: number;
  /** Position (in the run's criterion columns) of the first criterion of `firstItem`. */
  firstCriterion: number;
  strings: string[];
  /** Per item of the chunk: flattened [role, content, role, content, …] indices. */
  prompts: number[][];
  /** Per item of the chunk: index of the response, or -1 when results were written without text. */
  responses: number[];
  /** Flattened pairs [run item index, text index]. */
  references: number[];
  /** Flattened pairs [run item index, text index of the metadata as JSON]. */
  metadata: number[];
  /** Per criterion of the chunk's items, in column order: index of the judge's explanation, or -1. */
  explanations: number[];
}

export interface FailedCriterion {
  text: string;
  /** Points of the criterion (of its first occurrence when several share the text). */
  points: number;
  /** Times it was graded (status ok). */
  evaluated: number;
  /** Times it cost points: a positive criterion not met, or a penalty (negative) met. */
  failed: number;
  /** Points lost over those failures (absolute values). */
  pointsLost: number;
  source: 'judge' | 'check' | 'mixed';
  /** A failing item, to jump to. */
  exampleItem: number;
}

export interface SourcePassRate {
  criteria: number;
  evaluated: number;
  /** Graded criteria that did not cost points. */
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
}

export interface Histogram {
  /** Bin edges, ascending; bin k covers [edges[k], edges[k + 1]) and the last bin is closed. */
  edges: number[];
  counts: number[];
}

export interface InvalidLine {
  line: number;
  message: string;
}

export interface RunSummary {
  /** File name of the results file (no directories). */
  label: string;
  scoring: string;
  /** The official aggregate, exactly as `rubricate score` computes it. */
  metrics: Metrics;
  usage: Usage;
  /** USD at the default price table; null when the judge model is not priced. */
  costUsd: number | null;
  judges: JudgeInfo[];
  rubricHashes: number;
  rubricIds: number;
  versions: string[];
  criteria: { total: number; evaluated: number; met: number; failed: number; errors: number; skipped: number };
  bySource: { judge: SourcePassRate; check: SourcePassRate };
  mostFailed: FailedCriterion[];
  histogram: Histogram;
  invalidLines: InvalidLine[];
  invalidLineCount: number;
  duplicateIds: number;
}

export interface RunData {
  summary: RunSummary;
  strings: string[];
  tagSets: number[][];
  items: ItemColumns;
  criteria: CriterionColumns;
  /** Items per text chunk: item i's texts are in chunk ⌊i / textChunkSize⌋. */
  textChunkSize: number;
}

/** Paired difference run − baseline over items scored in both runs. */
export interface PairedDifference {
  n: number;
  run: number;
  baseline: number;
  difference: number;
  bootstrap_std: number;
  ci95: [number, number];
}

export interface ChangedItem {
  id: string;
  runIndex: number;
  baselineIndex: number;
  runScore: number;
  baselineScore: number;
  delta: number;
}

export interface CriterionFlip {
  text: string;
  points: number;
  /** Criteria with this text graded in both runs of a matched item. */
  compared: number;
  metToNotMet: number;
  notMetToMet: number;
}

export interface ComparisonSummary {
  runLabel: string;
  baselineLabel: string;
  /** Items present (by id) in both files. */
  matched: number;
  onlyInRun: number;
  onlyInBaseline: number;
  bootstrap: { samples: number; seed: number };
  overall: PairedDifference | null;
  byTag: Record<string, PairedDifference>;
  changedItems: ChangedItem[];
  flips: {
    compared: number;
    metToNotMet: number;
    notMetToMet: number;
    criteria: CriterionFlip[];
    /** Criterion rows left out of `criteria` (only the most-flipped are kept). */
    omitted: number;
  };
  /** For each run item, the index of the baseline item with the same id, or -1. */
  matchIndex: number[];
}

export interface ResultsReportPayload {
  view: 'results';
  version: number;
  title: string;
  generatedAt: string;
  rubricateVersion: string;
  /** The run, then the baseline when comparing. */
  runs: RunData[];
  comparison: ComparisonSummary | null;
}

export interface MetaReportPayload {
  view: 'meta-binary' | 'meta-pairwise';
  version: number;
  title: string;
  generatedAt: string;
  rubricateVersion: string;
  label: string;
  report: BinaryMetaReport | PairwiseMetaReport;
}

export type ReportPayload = ResultsReportPayload | MetaReportPayload;

export type ReportFormat = 'html' | 'md';
