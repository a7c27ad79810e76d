/**
 * The data a report embeds. Everything a page needs is prepared here, in Node, and shipped as
 * compact JSON: item and criterion fields as parallel arrays (columns), repeated strings
 * (criterion texts, ids, tags) once in a string table, long texts (conversations, responses,
 * explanations) in a separate payload the page decodes after its first paint.
 *
 * A report shows one *view*; `view` names it: results (one run, or one run compared with
 * another), meta-evaluation reports, and the pairwise `compare` results.
 */
import type { Usage } from '../engine/usage.js';
import type { JudgeInfo } from '../results/results.js';
import type { Metrics } from '../scoring/types.js';
import type { BinaryMetaReport } from '../meta/binary-metrics.js';
import type { PairwiseMetaReport } from '../scoring/pairwise-metrics.js';
import type { CompareSummary } from '../pipeline/compare.js';
import type { ErrorCodeCount } from '../pipeline/error-summary.js';
import type { JoinSummary } from '../meta/results-meta.js';
import type { ProbeReport } from '../meta/probes/runner.js';

export const reportPayloadVersion = 1;

/** Item status codes in `ItemColumns.status`. */
export const itemStatusCodes = { ok: 0, error: 1, invalid: 2 } as const;

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
  /** Process rewards: pairs [item index, each step's reward (null: a step not graded, never 0)]; absent in reports without them. */
  stepRewards?: Array<[number, Array<number | null>]>;
}

/** One step's verdict of a step-scoped criterion (process rewards), as the drawer lists it. */
interface ReportStepVerdict {
  step: number;
  status: string;
  met: boolean | null;
  value?: number;
  label?: string;
  explanation?: string;
  error?: { code: string; message: string };
}

/** Criterion verdict fields that are rare (ordinal values, probabilities, errors, skips). */
export interface CriterionExtras {
  value?: number | null;
  label?: string;
  probability?: number;
  error?: { code: string; message: string };
  skip_reason?: string;
  /** Trajectory items: the step numbers the verdict cites. */
  steps?: number[];
  /** `--verdict expected-score`: the probability-weighted score. */
  expected_score?: number;
  /** Per-turn criteria: each turn's verdict, and how they fold into the criterion's. */
  turns?: { aggregate: string; verdicts: Array<{ turn: number; status: string; met: boolean | null; value?: number; explanation?: string; error?: { code: string; message: string } }> };
  /** Step-scoped criteria (process rewards): the rule folding the steps (`gamma` for discounted), and each step's verdict. */
  process?: { aggregate: string; gamma?: number; verdicts: ReportStepVerdict[] };
  /** Cascades: the judge that decided, and the escalations on the way. */
  cascade?: { decided_by: string; escalations: Array<{ judge: string; reason: string; probability?: number }> };
  /** Agentic judges: the tool calls before the verdict (or before its error), arguments as compact JSON. */
  tool_calls?: Array<{ name: string; outcome: 'ok' | 'error'; summary: string; arguments: string }>;
}

/** Columns of every criterion of every item of one run, flattened in item order. */
export interface CriterionColumns {
  /** String-table indices. */
  ids: number[];
  texts: number[];
  points: number[];
  /** Index into `RunData.tagSets`, or -1. */
  tagSets: number[];
  /**
   * Criterion flags packed in one small integer: bits 0–1 status (0 ok, 1 error, 2 skipped),
   * bits 2–3 met (0 null, 1 false, 2 true), bit 4 source (0 judge, 1 check), bit 5 kind
   * (0 principle, 1 hard_rule).
   */
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
  /**
   * Trajectory items: pairs [run item index, steps]; steps flattened in fours [kind (see
   * `trajectoryStepKinds`), tool name (text index, or -1), body start, body end], the body being
   * that slice of the item's response (its numbered-step rendering). A third element 1: the
   * rendering indents every further line of a step by four spaces, which the view takes off.
   */
  trajectories: Array<[number, number[]] | [number, number[], 1]>;
  /** Items with images: pairs [run item index, images in their order]. */
  images: Array<[number, ReportImage[]]>;
  /** Items graded with `--keep-requests`: pairs [run item index, its judge calls]. */
  calls?: Array<[number, ReportJudgeCall[]]>;
}

/** A judge call kept by `--keep-requests`; texts are indices into its chunk's strings (-1: absent). */
export interface ReportJudgeCall {
  /** Ids of the criteria the call decides. */
  criteria: number[];
  /** Flattened [role, content, role, content, …]. */
  messages: number[];
  /** The request's other fields (sampling, top logprobs, the reply schema) as JSON. */
  settings: number;
  reply: number;
  reasoning: number;
  finishReason: number;
  latencyMs: number | null;
  attempts: number;
  /** [code, message], or null. */
  error: [number, number] | null;
  /** In a jury: the member that called. */
  judge: number;
}

/** Step kinds of `RunTexts.trajectories`, by code. */
export const trajectoryStepKinds = ['system', 'user', 'assistant', 'reasoning', 'tool_call', 'tool_result'] as const;

/** An item's image as the page shows it: the bytes as a data URL, or why they are not embedded. */
export interface ReportImage {
  /** The N of the "[image N: …]" placeholder standing for it in the texts. */
  index: number;
  place: string;
  mediaType: string;
  bytes: number;
  sha256: string;
  dataUrl?: string;
  /** Why the image is not shown (over the report's size cap, bytes not in the results…). */
  omitted?: string;
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
  /** Step-scoped criteria (process rewards): the rule folding the steps, e.g. `min` or `discounted γ=0.9`. */
  stepRule?: string;
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
  /** USD at the default price table; null when the judge model is not priced; 0 when the verdicts are made up (no model was asked). */
  costUsd: number | null;
  judges: JudgeInfo[];
  /** Who made the verdicts up (the scripted judge, `rubricate fake-judge`), when they are not a model's: the page says so in its header. */
  madeUpBy?: string;
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
  /** Error codes of the failed criteria and items, most frequent first, with an example each (as `grade` prints them). */
  errors: ErrorCodeCount[];
  /** Codes left out of `errors`. */
  errorCodesOmitted: number;
  /** What to do about the failed items (`retryAdvice`); empty when none failed. */
  advice: string[];
  /** "The score covers 65% of the items (20 of 31): 10 in error, 1 invalid." (`scoreCoverage`); null when none failed. */
  coverage: string | null;
}

export interface RunData {
  summary: RunSummary;
  strings: string[];
  tagSets: number[][];
  items: ItemColumns;
  criteria: CriterionColumns;
  /** Items per text chunk: item i's texts are in chunk ⌊i / textChunkSize⌋. */
  textChunkSize: number;
  /** sha256 of the items' ids, criterion ids and verdicts: reviews made in a page are kept under it. */
  digest: string;
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
  /** Human labels laid over the run (`--labels`). */
  labels?: LabelsOverlay | null;
}

/** Human labels of a labels file, laid over the first run's verdicts (`rubricate report --labels`). */
export interface LabelsOverlay {
  /** File name of the labels file. */
  label: string;
  /** Flattened triples [criterion position in the run's columns, raters who said met, raters who said not met]. */
  positions: number[];
  /** Agreement of the judge's verdicts with the labels, as `rubricate meta --format results --labels` computes it (grouped by criterion and tag); null when nothing joined. */
  agreement: BinaryMetaReport | null;
  /** Why there is no agreement (nothing joined), when there is none. */
  problem: string | null;
  join: JoinSummary | null;
  /** Unreadable lines of the labels file (at most 100) and how many there were. */
  invalidLines: InvalidLine[];
  invalidLineCount: number;
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

/**
 * Pairwise verdict codes in the compare view's columns: `A`, `B`, `tie`, `inconsistent` (a
 * combined verdict only), then -1 for "judged, but no verdict" (the call failed) and -2 for
 * "not judged" (an order left out with --no-swap).
 */
export const pairVerdictNames = ['A', 'B', 'tie', 'inconsistent'] as const;
export const pairVerdictNone = -1;
export const pairVerdictAbsent = -2;

/** Columns of the pairs of a compare file; index i of every array is pair i (file order). */
export interface PairColumns {
  ids: string[];
  /** See `itemStatusCodes`. */
  status: number[];
  /** The record's headline verdict (overall, else its first criterion), as a verdict code. */
  winners: number[];
  /** 1 consistent, 0 the orders disagree, -1 unknown (one order only, or a failed call). */
  consistent: number[];
  /** Verdict of each presentation order, in the original labelling (A = response A). */
  originalOrder: number[];
  swappedOrder: number[];
  /** Gold label as a verdict code, or -1. */
  labels: number[];
  /** The record's `correct`: 1, 0, or -1 when absent or null. */
  correct: number[];
  /** Source as a string-table index, or -1. */
  sources: number[];
  lines: number[];
  /** Bit 0: the first comparison of the pair is the overall one. */
  flags: number[];
  /** Pair i owns comparisons `comparisonOffsets[i]` … `comparisonOffsets[i + 1] - 1` (overall first). */
  comparisonOffsets: number[];
  /** Flattened triples [pair index, error code, error message] (string-table indices). */
  errors: number[];
}

/** Every comparison (overall and per criterion) of every pair, flattened in pair order. */
export interface ComparisonColumns {
  /** String-table indices. */
  ids: number[];
  texts: number[];
  /** 0 ok, 1 error. */
  status: number[];
  winners: number[];
  /** 1 consistent, 0 the orders disagree, -1 unknown. */
  consistent: number[];
  originalOrder: number[];
  swappedOrder: number[];
  /** Flattened triples [comparison index, error code, error message] (string-table indices). */
  errors: number[];
}

/**
 * Long texts of pairs `firstPair` … `firstPair + prompts.length - 1`, decoded apart from the
 * columns (see `RunTexts`). Indices point into this chunk's `strings`.
 */
export interface PairTexts {
  firstPair: number;
  /** Position (in the comparison columns) of the first comparison of `firstPair`. */
  firstComparison: number;
  strings: string[];
  /** Per pair of the chunk: flattened [role, content, …] indices. */
  prompts: number[][];
  /** Per pair of the chunk: index of each response, or -1 when written with --no-text. */
  responsesA: number[];
  responsesB: number[];
  /** Two per comparison of the chunk's pairs, in column order: [original, swapped] explanation index, or -1. */
  explanations: number[];
}

/** A win rate, tie rate or consistency rate with its 95% percentile-bootstrap interval. */
export interface ShareWithInterval {
  value: number | null;
  ci95: [number, number] | null;
}

export interface OutcomeCounts {
  win: number;
  tie: number;
  loss: number;
  inconsistent: number;
}

/** Outcomes of one rubric criterion over the pairs that carried it (A's side: win = A better). */
export interface CriterionComparisonTally extends OutcomeCounts {
  id: string;
  text: string;
  /** Comparisons whose call failed in some order. */
  errors: number;
  /** Comparisons judged in both orders with a verdict in each; `consistentPairs` of them agreed. */
  bothOrders: number;
  consistentPairs: number;
}

/** Figures of the pairs of one source (data set subset, JudgeBench `source`). */
export interface SourceComparisonTally extends OutcomeCounts {
  /** null for pairs without a source, when others have one. */
  source: string | null;
  n: number;
  n_ok: number;
  n_error: number;
  n_invalid: number;
  win_rate: ShareWithInterval;
  tie_rate: ShareWithInterval;
  position_consistency: ShareWithInterval;
}

export interface CompareViewSummary {
  /** File name of the compare file (no directories). */
  label: string;
  /**
   * The run's figures, recomputed from the records exactly as `rubricate compare` computes
   * its summary file (same definitions, same bootstrap seeds).
   */
  figures: CompareSummary;
  /** Comparisons by criterion (id and text), most compared first. */
  criteria: CriterionComparisonTally[];
  /** Criterion rows left out of `criteria` (only the most compared are kept). */
  criteriaOmitted: number;
  /** By source, largest first; empty when no pair has a source. */
  sources: SourceComparisonTally[];
  sourcesOmitted: number;
  judges: JudgeInfo[];
  /** Who made the verdicts up (the scripted judge, `rubricate fake-judge`), when they are not a model's. */
  madeUpBy?: string;
  /** USD at the default price table; null when the judge model is not priced; 0 when the verdicts are made up. */
  costUsd: number | null;
  versions: string[];
  /** Pairs judged in the swapped order too. */
  swappedPairs: number;
  /** Pairs with a gold label. */
  labelledPairs: number;
  invalidLines: InvalidLine[];
  invalidLineCount: number;
  duplicateIds: number;
  /**
   * The summary JSON `rubricate compare` wrote beside the file, when there is one: whether
   * its counts agree with the records (they do not when the file was edited or concatenated).
   */
  summaryFile: { label: string; differences: string[] } | null;
}

export interface CompareReportPayload {
  view: 'compare';
  version: number;
  title: string;
  generatedAt: string;
  rubricateVersion: string;
  summary: CompareViewSummary;
  strings: string[];
  pairs: PairColumns;
  comparisons: ComparisonColumns;
  /** Pairs per text chunk: pair i's texts are in chunk ⌊i / textChunkSize⌋. */
  textChunkSize: number;
}

/** A `rubricate probe` report. */
export interface ProbeReportPayload {
  view: 'probes';
  version: number;
  title: string;
  generatedAt: string;
  rubricateVersion: string;
  label: string;
  report: ProbeReport;
}

/** A file of the folder `rubricate view` serves. */
export interface RunIndexEntry {
  /** Path relative to the folder (the run's name in the viewer's links). */
  file: string;
  kind: 'results' | 'compare' | 'meta' | 'probes';
  bytes: number;
  /** Last modification, ISO 8601. */
  modified: string;
  /** Results runs: headline metrics (without the per-tag table), provenance and cost. */
  summary: RunHeadline | null;
  /** What the run history says of it, when it holds the run (`rubricate view` lists the history). */
  history?: RunHistoryLabel;
}

/** A run as the run history knows it: how it ended, or `live` while its results are still being written. */
export interface RunHistoryLabel {
  status: 'running' | 'finished' | 'failed' | 'interrupted';
  live: boolean;
  command: string;
  started: string;
  ended?: string;
  judges: string[];
  /** `eval`: the model under test. */
  models?: string[];
  /** A scripted judge (no model asked) gave its verdicts, or a scripted model the responses. */
  madeUp: boolean;
  benchmark?: string;
  /** Said to be running, but its process is gone (killed or crashed). */
  processGone?: true;
}

export type RunHeadline = Omit<RunSummary, 'metrics' | 'mostFailed' | 'histogram' | 'invalidLines' | 'bySource'> & { metrics: Omit<Metrics, 'by_tag'> };

/** The viewer's index of a folder of runs. */
export interface RunsIndexPayload {
  view: 'runs';
  version: number;
  title: string;
  generatedAt: string;
  rubricateVersion: string;
  /** The folder, as given to `rubricate view`. */
  folder: string;
  runs: RunIndexEntry[];
  /** Files that looked like runs but could not be read, and why. */
  skipped: Array<{ file: string; reason: string }>;
}

/** Two or more runs of the viewer side by side on the same items. */
export interface RunsComparePayload {
  view: 'runs-compare';
  version: number;
  title: string;
  generatedAt: string;
  rubricateVersion: string;
  /** Each run's file (relative to the viewer's folder), the reference first. */
  files: string[];
  /** Their columns (no texts: an item opens in its run's own report). */
  runs: RunData[];
  /** Run i + 1 against the reference (run 0), as a two-run report compares them. */
  comparisons: ComparisonSummary[];
  /** Overall paired difference of every ordered pair: matrix[i][j] = run i − run j over items scored in both (null on the diagonal or with no such item). */
  matrix: Array<Array<PairedDifference | null>>;
  /** The item × run grid: every id of any run (the reference's order, then the others' new ones), and per run the item index of each id, or -1. */
  grid: { ids: string[]; items: number[][] };
}

export type ReportPayload = ResultsReportPayload | MetaReportPayload | CompareReportPayload | ProbeReportPayload | RunsIndexPayload | RunsComparePayload;

/** Text chunks embedded after the page code: a results run's, or a compare file's. */
export type TextChunk = RunTexts | PairTexts;

export type ReportFormat = 'html' | 'md';
