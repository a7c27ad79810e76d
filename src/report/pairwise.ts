/**
 * Reads a `rubricate compare` file (one CompareRecord per line) into what the pairwise compare
 * view shows: the run's figures recomputed from the records (so the report never disagrees
 * with the data), breakdowns per criterion and per source, compact columns for the pair
 * table, and the long texts (conversations, both responses, explanations) in chunks.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import type { CompareRecord, CompareSummary, CompareSummaryBuilder, ComparisonResult } from '../pipeline/compare.js';
import type { JudgeInfo } from '../results/results.js';
import { canonicalJson, safeParseJson } from '../util/json.js';
import { parseLineJson, readLines } from '../util/jsonl.js';
import { runCost } from './collect.js';
import type { InvalidRecord } from '../rubric/records.js';
import { StringTable } from './string-table.js';
import {
  itemStatusCodes,
  pairVerdictAbsent,
  pairVerdictNames,
  pairVerdictNone,
  type ComparisonColumns,
  type CompareViewSummary,
  type CriterionComparisonTally,
  type InvalidLine,
  type PairColumns,
  type PairTexts,
  type SourceComparisonTally,
} from './types.js';

const pairLabel = z.enum(['A', 'B', 'tie']);
const winner = z.enum(['A', 'B', 'tie', 'inconsistent']);
const orders = z.looseObject({ ab: pairLabel.nullable().optional(), ba: pairLabel.nullable().optional() });
const serializedError = z.looseObject({ code: z.string(), message: z.string() });

const comparisonSchema = z.looseObject({
  id: z.string(),
  text: z.string().optional(),
  status: z.enum(['ok', 'error']),
  winner: winner.nullable(),
  consistent: z.boolean().nullable().default(null),
  orders: orders.default({}),
  explanations: z.looseObject({ ab: z.string().optional(), ba: z.string().optional() }).optional(),
  error: serializedError.optional(),
});

const usageSchema = z.looseObject({
  prompt_tokens: z.number().default(0),
  completion_tokens: z.number().default(0),
  cached_prompt_tokens: z.number().default(0),
  calls: z.number().default(0),
  cache_hits: z.number().default(0),
  retries: z.number().default(0),
});

const compareRecordSchema = z.looseObject({
  id: z.string(),
  status: z.enum(['ok', 'error', 'invalid']),
  winner: winner.nullable(),
  consistent: z.boolean().nullable().default(null),
  orders: orders.default({}),
  label: pairLabel.optional(),
  correct: z.boolean().nullable().optional(),
  source: z.string().optional(),
  overall: comparisonSchema.optional(),
  criteria: z.array(comparisonSchema).default([]),
  prompt: z.array(z.looseObject({ role: z.string(), content: z.unknown() })).optional(),
  response_a: z.string().optional(),
  response_b: z.string().optional(),
  judge: z.looseObject({ id: z.string(), model: z.string(), template_version: z.string(), mode: z.string() }).optional(),
  usage: usageSchema.optional(),
  error: serializedError.optional(),
  rubricate_version: z.string().optional(),
});

export type CompareReadRecord = { kind: 'record'; record: CompareRecord; line: number } | InvalidRecord;

/** Streams a compare file back, each line validated; a bad line is reported, not fatal. */
export async function* readCompareRecords(file: string): AsyncGenerator<CompareReadRecord> {
  for await (const { line, text, error: lineError } of readLines(file)) {
    const parsed = parseLineJson(text, lineError);
    if (!parsed.ok) {
      yield { kind: 'invalid', line, error: new RubricateError('INPUT_INVALID', parsed.error, { file, line }) };
      continue;
    }
    const checked = compareRecordSchema.safeParse(parsed.value);
    if (!checked.success) {
      yield { kind: 'invalid', line, error: zodIssueError(checked.error, { prefix: 'not a compare line: ', fieldWhenEmpty: '', details: { file, line } }) };
      continue;
    }
    yield { kind: 'record', record: checked.data as unknown as CompareRecord, line };
  }
}

/** A compare record, as opposed to a results record: it has a verdict between two responses and no score. */
export function looksLikeCompareRecord(value: Record<string, unknown>): boolean {
  return !('score' in value) && ('winner' in value || 'orders' in value);
}

/** Code of a verdict in the columns (see `pairVerdictNames`). */
export function pairVerdictCode(verdict: string | null | undefined): number {
  if (verdict === undefined) return pairVerdictAbsent;
  if (verdict === null) return pairVerdictNone;
  const index = (pairVerdictNames as readonly string[]).indexOf(verdict);
  return index < 0 ? pairVerdictNone : index;
}

export interface CollectPairwiseOptions {
  /** Bad lines are reported here (file:line: reason) and skipped. */
  onWarning?: (message: string) => void;
  /** Pairs per text chunk (a page decodes one chunk to show a pair). */
  textChunkSize?: number;
  /** Rows kept in the per-criterion and per-source breakdowns. */
  criteriaLimit?: number;
  sourcesLimit?: number;
  /** The summary JSON to check the records against; default `<file>.summary.json` when it exists; false to skip. */
  summaryFile?: string | false;
}

export interface CollectedPairwise {
  summary: CompareViewSummary;
  strings: string[];
  pairs: PairColumns;
  comparisons: ComparisonColumns;
  textChunkSize: number;
  texts: PairTexts[];
}

const invalidLinesKept = 100;
export const defaultPairChunkSize = 500;

/** What CompareSummaryBuilder needs to count an unreadable line as an invalid pair. */
function unreadablePair(line: number): CompareRecord {
  return { id: '', status: 'invalid', winner: null, consistent: null, orders: {}, criteria: [], line, rubricate_version: '' };
}

function criterionKey(comparison: ComparisonResult): string {
  return `${comparison.id}\u0000${comparison.text ?? comparison.id}`;
}

/** Collects one compare file. */
export async function collectPairwise(file: string, options: CollectPairwiseOptions = {}): Promise<CollectedPairwise> {
  // Imported here: the comparison pipeline brings the grader with it, which a results report never needs.
  const { CompareSummaryBuilder: Builder } = await import('../pipeline/compare.js');
  const state = startCollectingPairs(options, Builder);
  for await (const entry of readCompareRecords(file)) {
    if (entry.kind === 'invalid') {
      state.invalidLineCount += 1;
      const message = entry.error.toJSON().message;
      if (state.invalidLines.length < invalidLinesKept) state.invalidLines.push({ line: entry.line, message });
      options.onWarning?.(message);
      state.builder.add(unreadablePair(entry.line));
      continue;
    }
    addPair(state, entry.record, entry.line);
  }
  const { strings, pairs, comparisons, textChunkSize, texts } = state;
  return { summary: compareViewSummary(state, file, options), strings: strings.values, pairs, comparisons, textChunkSize, texts };
}

/** A compare file as it is read: the page's columns, the current text chunk, and the figures' builders and tallies. */
interface PairwiseCollectState {
  strings: StringTable;
  pairs: PairColumns;
  comparisons: ComparisonColumns;
  textChunkSize: number;
  texts: PairTexts[];
  /** The current chunk and its text table: text indices are local to a chunk. */
  chunkStrings: StringTable;
  chunk: PairTexts | undefined;
  builder: CompareSummaryBuilder;
  /** The builder's class, loaded with the first compare file. */
  Builder: typeof CompareSummaryBuilder;
  /**
   * Per source, the same figures as overall; labels are left out because the agreement
   * breakdown per source comes from the overall meta-evaluation's `bySource`.
   */
  sourceBuilders: Map<string | null, CompareSummaryBuilder>;
  anySource: boolean;
  criterionTallies: Map<string, CriterionComparisonTally>;
  usage: Usage;
  judges: Map<string, JudgeInfo>;
  versions: Set<string>;
  seenIds: Set<string>;
  invalidLines: InvalidLine[];
  invalidLineCount: number;
  duplicateIds: number;
  swappedPairs: number;
  labelledPairs: number;
}

function startCollectingPairs(options: CollectPairwiseOptions, Builder: typeof CompareSummaryBuilder): PairwiseCollectState {
  return {
    strings: new StringTable(),
    pairs: { ids: [], status: [], winners: [], consistent: [], originalOrder: [], swappedOrder: [], labels: [], correct: [], sources: [], lines: [], flags: [], comparisonOffsets: [0], errors: [] },
    comparisons: { ids: [], texts: [], status: [], winners: [], consistent: [], originalOrder: [], swappedOrder: [], errors: [] },
    textChunkSize: Math.max(1, Math.floor(options.textChunkSize ?? defaultPairChunkSize)),
    texts: [],
    chunkStrings: new StringTable(),
    chunk: undefined,
    builder: new Builder(),
    Builder,
    sourceBuilders: new Map(),
    anySource: false,
    criterionTallies: new Map(),
    usage: emptyUsage(),
    judges: new Map(),
    versions: new Set(),
    seenIds: new Set(),
    invalidLines: [],
    invalidLineCount: 0,
    duplicateIds: 0,
    swappedPairs: 0,
    labelledPairs: 0,
  };
}

/** One compare record: into the figures (overall and its source's), the pair's columns, its comparisons and its texts. */
function addPair(state: PairwiseCollectState, record: CompareRecord, line: number): void {
  const { pairs, comparisons, strings } = state;
  state.builder.add(record);
  const source = typeof record.source === 'string' ? record.source : null;
  if (source !== null) state.anySource = true;
  let sourceBuilder = state.sourceBuilders.get(source);
  if (!sourceBuilder) state.sourceBuilders.set(source, (sourceBuilder = new state.Builder()));
  const { label: _label, ...unlabelled } = record;
  sourceBuilder.add(unlabelled);

  const pairIndex = pairs.ids.length;
  if (pairIndex % state.textChunkSize === 0) {
    // Text indices are local to a chunk, so a page can decode one chunk on its own.
    state.chunkStrings = new StringTable();
    state.chunk = { firstPair: pairIndex, firstComparison: comparisons.ids.length, strings: state.chunkStrings.values, prompts: [], responsesA: [], responsesB: [], explanations: [] };
    state.texts.push(state.chunk);
  }
  if (state.seenIds.has(record.id)) state.duplicateIds += 1;
  else state.seenIds.add(record.id);
  if (record.orders.ba !== undefined) state.swappedPairs += 1;
  if (record.label) state.labelledPairs += 1;

  pairs.ids.push(record.id);
  pairs.status.push(itemStatusCodes[record.status]);
  pairs.winners.push(pairVerdictCode(record.winner));
  pairs.consistent.push(record.consistent === true ? 1 : record.consistent === false ? 0 : -1);
  pairs.originalOrder.push(pairVerdictCode(record.orders.ab));
  pairs.swappedOrder.push(pairVerdictCode(record.orders.ba));
  pairs.labels.push(record.label ? pairVerdictCode(record.label) : -1);
  pairs.correct.push(record.correct === true ? 1 : record.correct === false ? 0 : -1);
  pairs.sources.push(strings.addOptional(record.source));
  pairs.lines.push(line);
  pairs.flags.push(record.overall ? 1 : 0);
  if (record.error) pairs.errors.push(pairIndex, strings.add(String(record.error.code)), strings.add(String(record.error.message)));

  for (const comparison of record.overall ? [record.overall, ...record.criteria] : record.criteria) addComparison(state, comparison);
  for (const comparison of record.criteria) tallyCriterion(state.criterionTallies, comparison);
  pairs.comparisonOffsets.push(comparisons.ids.length);

  const chunk = state.chunk!;
  chunk.prompts.push(flattenPrompt(record.prompt, state.chunkStrings));
  chunk.responsesA.push(state.chunkStrings.addOptional(record.response_a));
  chunk.responsesB.push(state.chunkStrings.addOptional(record.response_b));

  if (record.usage) addUsage(state.usage, record.usage);
  if (record.judge) state.judges.set(canonicalJson(record.judge), record.judge);
  if (record.rubricate_version) state.versions.add(record.rubricate_version);
}

function addComparison(state: PairwiseCollectState, comparison: ComparisonResult): void {
  const { comparisons, strings, chunkStrings } = state;
  const position = comparisons.ids.length;
  comparisons.ids.push(strings.add(comparison.id));
  comparisons.texts.push(strings.add(comparison.text ?? comparison.id));
  comparisons.status.push(comparison.status === 'error' ? 1 : 0);
  comparisons.winners.push(pairVerdictCode(comparison.winner));
  comparisons.consistent.push(comparison.consistent === true ? 1 : comparison.consistent === false ? 0 : -1);
  comparisons.originalOrder.push(pairVerdictCode(comparison.orders.ab));
  comparisons.swappedOrder.push(pairVerdictCode(comparison.orders.ba));
  if (comparison.error) comparisons.errors.push(position, strings.add(String(comparison.error.code)), strings.add(String(comparison.error.message)));
  state.chunk!.explanations.push(chunkStrings.addOptional(comparison.explanations?.ab), chunkStrings.addOptional(comparison.explanations?.ba));
}

function tallyCriterion(criterionTallies: Map<string, CriterionComparisonTally>, comparison: ComparisonResult): void {
  const key = criterionKey(comparison);
  let tally = criterionTallies.get(key);
  if (!tally) {
    criterionTallies.set(key, (tally = { id: comparison.id, text: comparison.text ?? comparison.id, win: 0, tie: 0, loss: 0, inconsistent: 0, errors: 0, bothOrders: 0, consistentPairs: 0 }));
  }
  // The same outcome classes as the summary's per-criterion counts.
  if (comparison.winner === 'A') tally.win += 1;
  else if (comparison.winner === 'B') tally.loss += 1;
  else if (comparison.winner === 'tie') tally.tie += 1;
  else if (comparison.winner === 'inconsistent') tally.inconsistent += 1;
  else tally.errors += 1;
  const { ab, ba } = comparison.orders;
  if (ab !== undefined && ab !== null && ba !== undefined && ba !== null) {
    tally.bothOrders += 1;
    if (ab === ba) tally.consistentPairs += 1;
  }
}

function compareViewSummary(state: PairwiseCollectState, file: string, options: CollectPairwiseOptions): CompareViewSummary {
  const figures = state.builder.finish();
  const criteriaLimit = options.criteriaLimit ?? 500;
  const sourcesLimit = options.sourcesLimit ?? 500;
  const allCriteria = [...state.criterionTallies.values()].sort((left, right) => compared(right) - compared(left));
  const allSources = state.anySource ? [...state.sourceBuilders.entries()].map(([source, each]) => sourceTally(source, each.finish())).sort((left, right) => right.n - left.n) : [];
  const judgeList = [...state.judges.values()];
  return {
    label: basename(file),
    figures,
    criteria: allCriteria.slice(0, criteriaLimit),
    criteriaOmitted: Math.max(0, allCriteria.length - criteriaLimit),
    sources: allSources.slice(0, sourcesLimit),
    sourcesOmitted: Math.max(0, allSources.length - sourcesLimit),
    judges: judgeList,
    ...(figures.scripted_by !== undefined ? { madeUpBy: figures.scripted_by } : {}),
    costUsd: figures.scripted_by !== undefined ? 0 : runCost(state.usage, judgeList),
    versions: [...state.versions],
    swappedPairs: state.swappedPairs,
    labelledPairs: state.labelledPairs,
    invalidLines: state.invalidLines,
    invalidLineCount: state.invalidLineCount,
    duplicateIds: state.duplicateIds,
    summaryFile: checkSummaryFile(options.summaryFile === undefined ? `${file}.summary.json` : options.summaryFile, figures),
  };
}

function compared(tally: CriterionComparisonTally): number {
  return tally.win + tally.tie + tally.loss + tally.inconsistent + tally.errors;
}

function sourceTally(source: string | null, figures: CompareSummary): SourceComparisonTally {
  return {
    source,
    n: figures.n,
    n_ok: figures.n_ok,
    n_error: figures.n_error,
    n_invalid: figures.n_invalid,
    win: figures.overall.win,
    tie: figures.overall.tie,
    loss: figures.overall.loss,
    inconsistent: figures.overall.inconsistent,
    win_rate: figures.overall.win_rate,
    tie_rate: figures.overall.tie_rate,
    position_consistency: figures.overall.position_consistency,
  };
}

function flattenPrompt(prompt: CompareRecord['prompt'], strings: StringTable): number[] {
  if (!Array.isArray(prompt)) return [];
  const flattened: number[] = [];
  for (const message of prompt) {
    flattened.push(strings.add(String(message.role)), strings.add(typeof message.content === 'string' ? message.content : canonicalJson(message.content)));
  }
  return flattened;
}

/**
 * Compares the counts of the summary file `rubricate compare` wrote with the records'. The
 * report shows the records' figures either way; a difference is worth a note.
 */
function checkSummaryFile(file: string | false, figures: CompareSummary): CompareViewSummary['summaryFile'] {
  if (file === false || !existsSync(file)) return null;
  const label = basename(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return { label, differences: [`could not be read: ${(error as Error).message}`] };
  }
  const parsed = safeParseJson(text);
  if (!parsed.ok || parsed.value === null || typeof parsed.value !== 'object') return { label, differences: ['is not a JSON object'] };
  const stored = parsed.value as { n?: unknown; n_ok?: unknown; n_error?: unknown; n_invalid?: unknown; overall?: Record<string, unknown> };
  const differences: string[] = [];
  const compareCount = (name: string, storedValue: unknown, recomputed: number) => {
    if (storedValue !== recomputed) differences.push(`${name}: ${JSON.stringify(storedValue ?? null)} in the summary, ${recomputed} in the records`);
  };
  compareCount('pairs', stored.n, figures.n);
  compareCount('ok', stored.n_ok, figures.n_ok);
  compareCount('error', stored.n_error, figures.n_error);
  compareCount('invalid', stored.n_invalid, figures.n_invalid);
  for (const outcome of ['win', 'tie', 'loss', 'inconsistent'] as const) compareCount(outcome, stored.overall?.[outcome], figures.overall[outcome]);
  return { label, differences };
}
