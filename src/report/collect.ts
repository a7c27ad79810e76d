/**
 * Reads a results file once, streaming, into the compact columns a report embeds plus the
 * summaries its charts show. Memory holds the columns and text tables, never the records.
 */
import { createHash, type Hash } from 'node:crypto';
import { basename } from 'node:path';
import { costOf, defaultPrices, emptyUsage, addUsage, priceFor, type Usage } from '../engine/usage.js';
import type { RubricateError } from '../errors.js';
import { readResults, toScoredItem, type JudgeInfo, type GradedCriterion, type JudgeCallLine, type ResultRecord } from '../results/results.js';
import { ErrorTally, retryAdvice, scoreCoverage } from '../pipeline/error-summary.js';
import { getScoring } from '../scoring/registry.js';
import { round } from '../statistics/descriptive.js';
import type { Aggregator, Metrics, ScoredItem, Scoring } from '../scoring/types.js';
import { canonicalJson } from '../util/json.js';
import { StringTable, TagSetTable } from './string-table.js';
import {
  itemStatusCodes,
  type CriterionColumns,
  type CriterionExtras,
  type FailedCriterion,
  type Histogram,
  type InvalidLine,
  type ItemColumns,
  type RunData,
  type RunSummary,
  type RunTexts,
  type SourcePassRate,
  type ReportImage,
  type ReportJudgeCall,
  trajectoryStepKinds,
} from './types.js';
import { redactDeep, redactText } from '../util/redact.js';
import { indentsStepLines, parseRenderedTrajectory } from '../trajectory/render.js';
import { ReportImageEmbedder } from './images.js';
import { MadeUpTally } from '../util/made-up.js';
import type { JudgeToolCall } from '../judges/types.js';

export interface CollectOptions {
  /** Scoring to apply; by default the one recorded in the results, else healthbench. */
  scoring?: string;
  /** Bad lines are reported here (file:line: reason) and skipped. */
  onWarning?: (message: string) => void;
  /** Keep each item's per-tag scores, which a comparison needs. */
  keepTagScores?: boolean;
  /** Rows kept in the most-failed list. */
  mostFailedLimit?: number;
  /** Items per text chunk (a page decodes one chunk to show an item). */
  textChunkSize?: number;
  /** Largest image embedded (bytes); larger ones get a placeholder. */
  maxImageBytes?: number;
  /** Largest total of embedded images (bytes). */
  maxTotalImageBytes?: number;
}

export interface CollectedRun {
  data: RunData;
  /** Long texts in chunks of `data.textChunkSize` items. */
  texts: RunTexts[];
  scoring: Scoring;
  /** First item index of each id. */
  indexById: Map<string, number>;
  /** Per item, score per tag (item tags inherit the item score), when `keepTagScores`. */
  tagScores?: Array<Map<string, number> | null>;
}

const invalidLinesKept = 100;
/** Error codes listed (the rest are counted). */
const errorCodesKept = 20;
export const defaultTextChunkSize = 1000;
const metadataCharacterLimit = 4000;

/** Packs a criterion's status, verdict, source and kind (layout in types.ts). */
export function packCriterionFlags(criterion: Pick<GradedCriterion, 'status' | 'met' | 'source' | 'kind'>): number {
  const status = criterion.status === 'error' ? 1 : criterion.status === 'skipped' ? 2 : 0;
  const met = criterion.met === true ? 2 : criterion.met === false ? 1 : 0;
  const source = criterion.source === 'check' ? 1 : 0;
  const kind = criterion.kind === 'hard_rule' ? 1 : 0;
  return status | (met << 2) | (source << 4) | (kind << 5);
}

/** A criterion cost points: a positive one not met, or a penalty (negative points) that was met. */
export function criterionFailed(points: number, met: boolean | null): boolean {
  if (met === null) return false;
  return points < 0 ? met : !met;
}

/**
 * The score of an item on each tag, as the tagged scorings aggregate it: item tags inherit
 * the item score; a criterion tag scores the item over just the criteria carrying it.
 */
export function itemTagScores(scoring: Scoring, item: ScoredItem): Map<string, number> | null {
  const score = scoring.itemScore(item);
  if (score === null) return null;
  const scores = new Map<string, number>();
  for (const tag of item.tags ?? []) scores.set(tag, score);
  if (item.gated) return scores;
  const byTag = new Map<string, ScoredItem['criteria']>();
  for (const criterion of item.criteria) {
    if (criterion.status !== 'ok') continue;
    for (const tag of criterion.tags) {
      let list = byTag.get(tag);
      if (!list) byTag.set(tag, (list = []));
      list.push(criterion);
    }
  }
  for (const [tag, criteria] of byTag) {
    const tagScore = scoring.itemScore({ id: item.id, status: 'ok', criteria });
    if (tagScore !== null) scores.set(tag, tagScore);
  }
  return scores;
}

function emptySourceRate(): SourcePassRate {
  return { criteria: 0, evaluated: 0, passed: 0, failed: 0, errors: 0, skipped: 0 };
}

interface FailureTally {
  points: number;
  evaluated: number;
  failed: number;
  pointsLost: number;
  sources: number;
  exampleItem: number;
  stepRule?: string;
}

/** Collects one results file. */
export async function collectRun(file: string, options: CollectOptions = {}): Promise<CollectedRun> {
  const state = startCollecting(options);
  for await (const entry of readResults(file)) {
    if (entry.kind === 'invalid') addInvalidLine(state, entry.line, entry.error, options);
    else addRecord(state, entry.record, entry.line);
  }
  const scoring = (state.scoring ??= getScoring(options.scoring ?? 'healthbench'));
  const aggregator = (state.aggregator ??= scoring.createAggregator());
  const { items, criteria, strings, tagSets, textChunkSize, tagScores } = state;
  if (items.ids.length === 0 && state.pendingInvalid > 0) for (let index = 0; index < state.pendingInvalid; index += 1) aggregator.add({ id: '', status: 'invalid', criteria: [] });
  const summary = runSummary(state, file, scoring, aggregator.finish(), options);
  return {
    data: { summary, strings: strings.values, tagSets: tagSets.sets, items, criteria, textChunkSize, digest: state.digest.digest('hex') },
    texts: state.textChunks,
    scoring,
    indexById: state.indexById,
    ...(tagScores ? { tagScores } : {}),
  };
}

/** A results file as it is read: the report's columns, the current text chunk, and the run's tallies. */
interface CollectState {
  strings: StringTable;
  tagSets: TagSetTable;
  items: ItemColumns;
  criteria: CriterionColumns;
  textChunkSize: number;
  textChunks: RunTexts[];
  /** The current chunk's text table and texts: indices are local to a chunk. */
  texts: StringTable;
  runTexts: RunTexts;
  indexById: Map<string, number>;
  tagScores: Array<Map<string, number> | null> | undefined;
  imageEmbedder: ReportImageEmbedder;
  /** Named by the options, else by the first valid record (invalid lines before it wait in `pendingInvalid`). */
  scoring: Scoring | undefined;
  aggregator: Aggregator | undefined;
  pendingInvalid: number;
  usage: Usage;
  judges: Map<string, JudgeInfo>;
  rubricHashes: Set<string>;
  rubricIds: Set<string>;
  versions: Set<string>;
  criterionTotals: RunSummary['criteria'];
  bySource: RunSummary['bySource'];
  failures: Map<number, FailureTally>;
  invalidLines: InvalidLine[];
  invalidLineCount: number;
  duplicateIds: number;
  errorTally: ErrorTally;
  madeUp: MadeUpTally;
  /** What reviews made in a page are kept under: the same verdicts give the same key, whatever report shows them. */
  digest: Hash;
}

function startCollecting(options: CollectOptions): CollectState {
  const strings = new StringTable();
  const texts = new StringTable();
  const scoring = options.scoring ? getScoring(options.scoring) : undefined;
  return {
    strings,
    tagSets: new TagSetTable(strings),
    items: { ids: [], status: [], scores: [], flags: [], tagSets: [], criteriaOffsets: [0], lines: [], rubricIds: [], errors: [] },
    criteria: { ids: [], texts: [], points: [], tagSets: [], flags: [], extras: [] },
    textChunkSize: Math.max(1, Math.floor(options.textChunkSize ?? defaultTextChunkSize)),
    textChunks: [],
    texts,
    runTexts: emptyChunk(0, 0, texts),
    indexById: new Map(),
    tagScores: options.keepTagScores ? [] : undefined,
    imageEmbedder: new ReportImageEmbedder(options.maxImageBytes, options.maxTotalImageBytes),
    scoring,
    aggregator: scoring?.createAggregator(),
    pendingInvalid: 0,
    usage: emptyUsage(),
    judges: new Map(),
    rubricHashes: new Set(),
    rubricIds: new Set(),
    versions: new Set(),
    criterionTotals: { total: 0, evaluated: 0, met: 0, failed: 0, errors: 0, skipped: 0 },
    bySource: { judge: emptySourceRate(), check: emptySourceRate() },
    failures: new Map(),
    invalidLines: [],
    invalidLineCount: 0,
    duplicateIds: 0,
    errorTally: new ErrorTally(),
    madeUp: new MadeUpTally(),
    digest: createHash('sha256'),
  };
}

/** A line that is not a result: kept (the first few), warned about and counted as an invalid item. */
function addInvalidLine(state: CollectState, line: number, error: RubricateError, options: CollectOptions): void {
  state.invalidLineCount += 1;
  const message = error.toJSON().message;
  if (state.invalidLines.length < invalidLinesKept) state.invalidLines.push({ line, message });
  options.onWarning?.(message);
  state.errorTally.add(error.toJSON());
  if (state.aggregator) state.aggregator.add({ id: '', status: 'invalid', criteria: [] });
  else state.pendingInvalid += 1;
}

/** A result line: scored, its columns, criteria and texts added, the run's tallies updated. */
function addRecord(state: CollectState, record: ResultRecord, line: number): void {
  if (!state.aggregator) {
    state.scoring = getScoring(record.scoring ?? 'healthbench');
    state.aggregator = state.scoring.createAggregator();
    for (let index = 0; index < state.pendingInvalid; index += 1) state.aggregator.add({ id: '', status: 'invalid', criteria: [] });
  }
  const { items, criteria, strings, tagSets, scoring } = state;
  const scored = toScoredItem(record);
  state.aggregator.add(scored);
  const itemIndex = items.ids.length;
  if (itemIndex % state.textChunkSize === 0) {
    // Text indices are local to a chunk, so a page can decode one chunk on its own.
    state.texts = new StringTable();
    state.runTexts = emptyChunk(itemIndex, criteria.ids.length, state.texts);
    state.textChunks.push(state.runTexts);
  }
  if (state.indexById.has(record.id)) state.duplicateIds += 1;
  else state.indexById.set(record.id, itemIndex);

  items.ids.push(record.id);
  items.status.push(itemStatusCodes[record.status]);
  items.scores.push(scoring!.itemScore(scored));
  items.flags.push(record.gated ? 1 : 0);
  items.tagSets.push(tagSets.add(record.tags));
  items.lines.push(line);
  items.rubricIds.push(strings.addOptional(record.rubric_id));
  if (Array.isArray(record.step_rewards)) (items.stepRewards ??= []).push([itemIndex, record.step_rewards]);
  if (record.error) items.errors.push(itemIndex, strings.add(String(record.error.code)), state.texts.add(redactText(String(record.error.message))));
  state.tagScores?.push(record.status === 'ok' ? itemTagScores(scoring!, scored) : null);
  state.errorTally.addResult(record);

  addCriteria(state, record, itemIndex);
  items.criteriaOffsets.push(criteria.ids.length);
  addItemTexts(state, record, itemIndex);
  addRunFacts(state, record);
}

/** The item's long texts into the current chunk: prompt, response (and its trajectory steps), images, reference, metadata, kept judge calls. */
function addItemTexts(state: CollectState, record: ResultRecord, itemIndex: number): void {
  const { runTexts, texts } = state;
  runTexts.prompts.push(flattenPrompt(record.prompt, texts));
  runTexts.responses.push(texts.addOptional(record.response));
  const steps = typeof record.response === 'string' ? parseRenderedTrajectory(record.response, Array.isArray(record.step_offsets) ? record.step_offsets : undefined) : null;
  if (steps) runTexts.trajectories.push(indentsStepLines(record.response as string) ? [itemIndex, flattenSteps(steps, texts), 1] : [itemIndex, flattenSteps(steps, texts)]);
  if (Array.isArray(record.images) && record.images.length > 0) {
    const shown = record.images.map((image) => state.imageEmbedder.image(image)).filter((image): image is ReportImage => image !== null);
    if (shown.length > 0) runTexts.images.push([itemIndex, shown]);
  }
  if (typeof record.reference === 'string') runTexts.references.push(itemIndex, texts.add(record.reference));
  if (record.metadata && Object.keys(record.metadata).length > 0) runTexts.metadata.push(itemIndex, texts.add(metadataText(record.metadata)));
  if (Array.isArray(record.judge_calls) && record.judge_calls.length > 0) (runTexts.calls ??= []).push([itemIndex, record.judge_calls.map((call) => reportJudgeCall(call, texts))]);
}

/** What the run's summary says of all its lines: usage, judges, rubrics, versions, who made verdicts up. */
function addRunFacts(state: CollectState, record: ResultRecord): void {
  if (record.usage) addUsage(state.usage, record.usage);
  state.madeUp.add(record);
  // Results written before redaction existed may still hold a credential: a report never shows it.
  if (record.judge) state.judges.set(canonicalJson(record.judge), redactDeep(record.judge));
  if (record.rubric_hash) state.rubricHashes.add(record.rubric_hash);
  if (record.rubric_id) state.rubricIds.add(record.rubric_id);
  if (record.rubricate_version) state.versions.add(record.rubricate_version);
}

/** The item's criteria into the columns and the digest, each counted by status, source and failure. */
function addCriteria(state: CollectState, record: ResultRecord, itemIndex: number): void {
  const { digest, criteria, strings, tagSets } = state;
  digest.update(`${record.id}\u0000${record.status}\u0000`);
  for (const criterion of record.criteria) {
    const criterionIndex = criteria.ids.length;
    digest.update(`${criterion.id}\u0000${packCriterionFlags(criterion)}\u0000`);
    const textIndex = strings.add(typeof criterion.text === 'string' ? criterion.text : criterion.id);
    criteria.ids.push(strings.add(criterion.id));
    criteria.texts.push(textIndex);
    criteria.points.push(criterion.points);
    criteria.tagSets.push(tagSets.add(criterion.tags));
    criteria.flags.push(packCriterionFlags(criterion));
    state.runTexts.explanations.push(state.texts.addOptional(criterion.explanation));
    const extras = criterionExtras(criterion);
    if (extras) criteria.extras.push([criterionIndex, extras]);
    countCriterion(state, criterion, textIndex, itemIndex);
  }
}

/** One criterion in the totals, its source's pass rate and, when evaluated, the failures by criterion text. */
function countCriterion(state: CollectState, criterion: GradedCriterion, textIndex: number, itemIndex: number): void {
  const { criterionTotals } = state;
  const source = criterion.source === 'check' ? state.bySource.check : state.bySource.judge;
  criterionTotals.total += 1;
  source.criteria += 1;
  if (criterion.status === 'error') {
    criterionTotals.errors += 1;
    source.errors += 1;
    return;
  }
  if (criterion.status === 'skipped') {
    criterionTotals.skipped += 1;
    source.skipped += 1;
    return;
  }
  criterionTotals.evaluated += 1;
  source.evaluated += 1;
  if (criterion.met) criterionTotals.met += 1;
  const failed = criterionFailed(criterion.points, criterion.met);
  if (failed) {
    criterionTotals.failed += 1;
    source.failed += 1;
  } else {
    source.passed += 1;
  }
  let tally = state.failures.get(textIndex);
  if (!tally) state.failures.set(textIndex, (tally = { points: criterion.points, evaluated: 0, failed: 0, pointsLost: 0, sources: 0, exampleItem: -1, ...(criterion.process ? { stepRule: stepRuleName(criterion.process) } : {}) }));
  tally.evaluated += 1;
  tally.sources |= criterion.source === 'check' ? 2 : 1;
  if (failed) {
    tally.failed += 1;
    tally.pointsLost += Math.abs(criterion.points);
    if (tally.exampleItem < 0) tally.exampleItem = itemIndex;
  }
}

function runSummary(state: CollectState, file: string, scoring: Scoring, metrics: Metrics, options: CollectOptions): RunSummary {
  const { usage, madeUp, errorTally } = state;
  const judgeList = [...state.judges.values()];
  const summary: RunSummary = {
    label: basename(file),
    scoring: scoring.name,
    metrics,
    usage,
    // Made-up verdicts cost nothing, whatever model name a fake-judge run's provenance carries.
    costUsd: madeUp.by !== undefined ? 0 : runCost(usage, judgeList),
    judges: judgeList,
    ...(madeUp.by !== undefined ? { madeUpBy: madeUp.by } : {}),
    rubricHashes: state.rubricHashes.size,
    rubricIds: state.rubricIds.size,
    versions: [...state.versions],
    criteria: state.criterionTotals,
    bySource: state.bySource,
    mostFailed: mostFailedCriteria(state.failures, state.strings.values, options.mostFailedLimit ?? 50),
    histogram: { edges: [], counts: [] },
    invalidLines: state.invalidLines,
    invalidLineCount: state.invalidLineCount,
    duplicateIds: state.duplicateIds,
    errors: errorTally.top(errorCodesKept),
    errorCodesOmitted: Math.max(0, errorTally.size - errorCodesKept),
    advice: retryAdvice({ errors: metrics.n_error, invalid: metrics.n_invalid }),
    coverage: scoreCoverage(metrics),
  };
  summary.histogram = histogram(state.items.scores, histogramEdges([state.items.scores]));
  return summary;
}

function emptyChunk(firstItem: number, firstCriterion: number, texts: StringTable): RunTexts {
  return { firstItem, firstCriterion, strings: texts.values, prompts: [], responses: [], references: [], metadata: [], explanations: [], trajectories: [], images: [] };
}

/** A kept judge call, its texts in the chunk's table (a system prompt repeated by every call is stored once). */
function reportJudgeCall(call: JudgeCallLine, texts: StringTable): ReportJudgeCall {
  const messages: number[] = [];
  for (const message of call.messages) messages.push(texts.add(String(message.role)), texts.add(redactText(String(message.content))));
  const settings: Record<string, unknown> = {};
  for (const key of ['temperature', 'max_tokens', 'seed', 'top_logprobs', 'output_schema'] as const) if (call[key] !== undefined) settings[key] = call[key];
  return {
    criteria: call.criteria.map((id) => texts.add(String(id))),
    messages,
    settings: texts.add(JSON.stringify(settings, null, 2)),
    reply: typeof call.reply === 'string' ? texts.add(redactText(call.reply)) : -1,
    reasoning: typeof call.reasoning === 'string' ? texts.add(redactText(call.reasoning)) : -1,
    finishReason: texts.addOptional(call.finish_reason),
    latencyMs: typeof call.latency_ms === 'number' ? call.latency_ms : null,
    attempts: call.attempts,
    error: call.error ? [texts.add(String(call.error.code)), texts.add(redactText(String(call.error.message)))] : null,
    judge: texts.addOptional(call.judge),
  };
}

function flattenPrompt(prompt: ResultRecord['prompt'], texts: StringTable): number[] {
  if (!Array.isArray(prompt)) return [];
  const flattened: number[] = [];
  for (const message of prompt) {
    flattened.push(texts.add(String(message.role)), texts.add(typeof message.content === 'string' ? message.content : canonicalJson(message.content)));
  }
  return flattened;
}

function flattenSteps(steps: NonNullable<ReturnType<typeof parseRenderedTrajectory>>, texts: StringTable): number[] {
  const flattened: number[] = [];
  for (const step of steps) flattened.push(trajectoryStepKinds.indexOf(step.kind), texts.addOptional(step.toolName), step.bodyStart, step.bodyEnd);
  return flattened;
}

function metadataText(metadata: Record<string, unknown>): string {
  const text = JSON.stringify(metadata, null, 2);
  return text.length > metadataCharacterLimit ? `${text.slice(0, metadataCharacterLimit)}\n…` : text;
}

function criterionExtras(criterion: GradedCriterion): CriterionExtras | null {
  const extras: CriterionExtras = {};
  let any = false;
  if (criterion.value !== undefined) {
    extras.value = criterion.value;
    any = true;
  }
  if (criterion.label !== undefined) {
    extras.label = criterion.label;
    any = true;
  }
  if (criterion.probability !== undefined) {
    extras.probability = criterion.probability;
    any = true;
  }
  if (criterion.error) {
    extras.error = { code: String(criterion.error.code), message: redactText(String(criterion.error.message)) };
    any = true;
  }
  if (criterion.skip_reason !== undefined) {
    extras.skip_reason = criterion.skip_reason;
    any = true;
  }
  if (Array.isArray(criterion.steps) && criterion.steps.length > 0) {
    extras.steps = criterion.steps.filter((step) => Number.isInteger(step));
    any = true;
  }
  if (criterion.expected_score !== undefined) {
    extras.expected_score = criterion.expected_score;
    any = true;
  }
  if (criterion.turns) {
    extras.turns = {
      aggregate: criterion.turns.aggregate,
      verdicts: criterion.turns.verdicts.map((verdict) => ({
        turn: verdict.turn,
        status: verdict.status,
        met: verdict.met,
        ...(verdict.value !== undefined ? { value: verdict.value } : {}),
        ...(verdict.explanation !== undefined ? { explanation: redactText(verdict.explanation) } : {}),
        ...(verdict.error ? { error: { code: String(verdict.error.code), message: redactText(String(verdict.error.message)) } } : {}),
      })),
    };
    any = true;
  }
  if (criterion.process) {
    extras.process = reportedProcess(criterion.process);
    any = true;
  }
  if (criterion.cascade) {
    extras.cascade = criterion.cascade;
    any = true;
  }
  const toolCalls = reportedToolCalls(criterion);
  if (toolCalls) {
    extras.tool_calls = toolCalls;
    any = true;
  }
  return any ? extras : null;
}

/** A step-scoped criterion's rule and step verdicts, texts redacted. */
function reportedProcess(process: NonNullable<GradedCriterion['process']>): NonNullable<CriterionExtras['process']> {
  return {
    aggregate: process.aggregate,
    ...(process.gamma !== undefined ? { gamma: process.gamma } : {}),
    verdicts: process.verdicts.map((verdict) => ({
      step: verdict.step,
      status: verdict.status,
      met: verdict.met,
      ...(verdict.value !== undefined ? { value: verdict.value } : {}),
      ...(verdict.label !== undefined ? { label: verdict.label } : {}),
      ...(verdict.explanation !== undefined ? { explanation: redactText(verdict.explanation) } : {}),
      ...(verdict.error ? { error: { code: String(verdict.error.code), message: redactText(String(verdict.error.message)) } } : {}),
    })),
  };
}

/** How a report names a step criterion's rule: `min`, `mean`, `last`, or `discounted γ=0.9`. */
function stepRuleName(process: Pick<NonNullable<GradedCriterion['process']>, 'aggregate' | 'gamma'>): string {
  return process.aggregate === 'discounted' && process.gamma !== undefined ? `discounted γ=${process.gamma}` : process.aggregate;
}

/** An agentic judge's tool calls, on the verdict or in its error's details, as the drawer lists them (redacted, arguments cut). */
function reportedToolCalls(criterion: GradedCriterion): CriterionExtras['tool_calls'] {
  const calls: unknown = criterion.tool_calls ?? criterion.error?.details?.tool_calls;
  if (!Array.isArray(calls) || calls.length === 0) return undefined;
  return calls.map((call: Partial<JudgeToolCall>) => ({
    name: String(call.name),
    outcome: call.outcome === 'error' ? ('error' as const) : ('ok' as const),
    summary: redactText(String(call.summary ?? '')),
    arguments: redactText(JSON.stringify(call.arguments ?? {})).slice(0, 500),
  }));
}

/** Cost at list prices; 0 when no judge was called, null when the judge model is not priced. */
export function runCost(usage: RunSummary['usage'], judges: JudgeInfo[]): number | null {
  if (usage.prompt_tokens === 0 && usage.completion_tokens === 0) return 0;
  // Several judges in one file share one token count, so no single price applies.
  if (judges.length !== 1) return null;
  return costOf(usage, priceFor(judges[0].model, defaultPrices));
}

function mostFailedCriteria(failures: Map<number, FailureTally>, strings: readonly string[], limit: number): FailedCriterion[] {
  const rows: Array<FailedCriterion & { textIndex: number }> = [];
  for (const [textIndex, tally] of failures) {
    if (tally.failed === 0) continue;
    rows.push({
      textIndex,
      text: strings[textIndex],
      points: tally.points,
      evaluated: tally.evaluated,
      failed: tally.failed,
      pointsLost: tally.pointsLost,
      source: tally.sources === 3 ? 'mixed' : tally.sources === 2 ? 'check' : 'judge',
      exampleItem: tally.exampleItem,
      ...(tally.stepRule !== undefined ? { stepRule: tally.stepRule } : {}),
    });
  }
  rows.sort((left, right) => right.failed - left.failed || right.pointsLost - left.pointsLost || left.textIndex - right.textIndex);
  return rows.slice(0, limit).map(({ textIndex: _unused, ...row }) => row);
}

/**
 * Bin edges covering every score and at least [0, 1], in steps of 0.05 (0.1 when scores
 * run past [0, 1], as HealthBench penalties can push them below 0).
 */
export function histogramEdges(scoreLists: ReadonlyArray<ReadonlyArray<number | null>>): number[] {
  let low = 0;
  let high = 1;
  for (const scores of scoreLists) {
    for (const score of scores) {
      if (score === null || !Number.isFinite(score)) continue;
      if (score < low) low = score;
      if (score > high) high = score;
    }
  }
  low = Math.floor(round(low * 10, 9)) / 10;
  high = Math.ceil(round(high * 10, 9)) / 10;
  const range = high - low;
  const width = range <= 1 + 1e-9 ? 0.05 : range <= 3 + 1e-9 ? 0.1 : range / 30;
  const count = Math.max(1, Math.round(range / width));
  const edges: number[] = [];
  for (let index = 0; index <= count; index += 1) edges.push(round(low + index * width, 9));
  edges[edges.length - 1] = round(high, 9);
  return edges;
}

/** Counts scores per bin, comparing against the edges (no division, so no float drift at edges). */
export function histogram(scores: ReadonlyArray<number | null>, edges: readonly number[]): Histogram {
  const counts = new Array<number>(Math.max(0, edges.length - 1)).fill(0);
  if (counts.length === 0) return { edges: [...edges], counts };
  for (const score of scores) {
    if (score === null || !Number.isFinite(score)) continue;
    if (score < edges[0] || score > edges[edges.length - 1]) continue;
    let low = 0;
    let high = counts.length - 1;
    // Largest bin whose lower edge is ≤ score.
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (edges[middle] <= score) low = middle;
      else high = middle - 1;
    }
    counts[low] += 1;
  }
  return { edges: [...edges], counts };
}
