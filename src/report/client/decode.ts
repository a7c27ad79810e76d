/**
 * Page code that turns the embedded columns back into records. It has no DOM access, so the
 * tests import this very module in Node to check the encoding round-trips.
 */
import type { CriterionExtras, ReportImage, ReportJudgeCall, RunData, RunTexts } from '../types.js';

export type ItemStatusName = 'ok' | 'error' | 'invalid';
export type CriterionStatusName = 'ok' | 'error' | 'skipped';

/** One criterion as in the results file. */
export interface DecodedCriterion {
  id: string;
  text: string;
  points: number;
  tags: string[];
  kind: 'hard_rule' | 'principle';
  source: 'check' | 'judge';
  status: CriterionStatusName;
  met: boolean | null;
  value?: number | null;
  label?: string;
  probability?: number;
  error?: { code: string; message: string };
  skip_reason?: string;
  explanation?: string;
  /** Trajectory items: step numbers the verdict cites. */
  steps?: number[];
  expected_score?: number;
  turns?: CriterionExtras['turns'];
  cascade?: CriterionExtras['cascade'];
  tool_calls?: CriterionExtras['tool_calls'];
  process?: CriterionExtras['process'];
}

/** One step of a trajectory item, as its rendering numbers it. */
export interface DecodedStep {
  number: number;
  kind: string;
  toolName: string | null;
  /** The message text, the call's JSON arguments, or the tool's result. */
  body: string;
}

/** A judge call kept by `--keep-requests`, as its results line has it. */
export interface DecodedJudgeCall {
  criteria: string[];
  messages: Array<{ role: string; content: string }>;
  /** The request's other fields (sampling, the reply schema) as JSON. */
  settings: string;
  reply: string | null;
  reasoning: string | null;
  finishReason: string | null;
  latencyMs: number | null;
  attempts: number;
  error: { code: string; message: string } | null;
  judge: string | null;
}

/** One item as in the results file; the text fields are present once its chunk is decoded. */
export interface DecodedItem {
  id: string;
  status: ItemStatusName;
  score: number | null;
  gated: boolean;
  tags: string[];
  line: number;
  rubric_id: string | null;
  criteria: DecodedCriterion[];
  error?: { code: string; message: string | null };
  prompt?: Array<{ role: string; content: string }>;
  response?: string | null;
  reference?: string | null;
  metadata?: string | null;
  /** The response's steps, when it is a trajectory. */
  trajectory?: DecodedStep[];
  images?: ReportImage[];
  /** The judge calls behind the verdicts, when the run kept them (`--keep-requests`). */
  calls?: DecodedJudgeCall[];
  /** Process rewards: each trajectory step's reward (null: a step not graded). */
  step_rewards?: Array<number | null>;
}

/** Step kind names, by the codes `RunTexts.trajectories` uses (types.ts `trajectoryStepKinds`). */
export const STEP_KIND_NAMES: readonly string[] = ['system', 'user', 'assistant', 'reasoning', 'tool_call', 'tool_result'];
export const ITEM_STATUS_NAMES: readonly ItemStatusName[] = ['ok', 'error', 'invalid'];
export const CRITERION_STATUS_NAMES: readonly CriterionStatusName[] = ['ok', 'error', 'skipped'];

export function rubricateInflate(base64: string): Promise<string> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Response(stream).text();
}

/** Reads one embedded payload; resolves to the parsed value. */
export function rubricateReadEmbedded(encoding: string | null, text: string): Promise<unknown> {
  if (encoding === 'gzip-base64') {
    if (typeof DecompressionStream === 'undefined') {
      return Promise.reject(new Error('This browser cannot decompress the report data (no DecompressionStream). Open the report in a current Chrome, Edge, Firefox or Safari.'));
    }
    return rubricateInflate(text).then(function (json): unknown { return JSON.parse(json); });
  }
  return Promise.resolve(JSON.parse(text));
}

const rubricateSparseCache = new WeakMap<object, Map<unknown, unknown>>();

/** Index of a flattened sparse list [key, v1, v2, key, v1, v2, …]: key → offset of its first value. */
export function rubricateSparse(list: readonly unknown[], stride: number): Map<unknown, number> {
  const cached = rubricateSparseCache.get(list) as Map<unknown, number> | undefined;
  if (cached) return cached;
  const map = new Map<unknown, number>();
  for (let offset = 0; offset < list.length; offset += stride) if (!map.has(list[offset])) map.set(list[offset], offset + 1);
  rubricateSparseCache.set(list, map);
  return map;
}

function rubricateExtras(run: RunData): Map<number, CriterionExtras> {
  const cached = rubricateSparseCache.get(run.criteria.extras) as Map<number, CriterionExtras> | undefined;
  if (cached) return cached;
  const map = new Map(run.criteria.extras);
  rubricateSparseCache.set(run.criteria.extras, map);
  return map;
}

export function rubricateTags(run: Pick<RunData, 'tagSets' | 'strings'>, tagSet: number): string[] {
  if (tagSet < 0) return [];
  const references = run.tagSets[tagSet];
  const tags = new Array<string>(references.length);
  for (let index = 0; index < references.length; index += 1) tags[index] = run.strings[references[index]];
  return tags;
}

export function rubricateCriterionMet(flags: number): boolean | null {
  const met = (flags >> 2) & 3;
  return met === 2 ? true : met === 1 ? false : null;
}

/** One criterion as in the results file; the explanation needs the text chunk of its item. */
function rubricateDecodeCriterion(run: RunData, chunk: RunTexts | null, position: number): DecodedCriterion {
  const columns = run.criteria;
  const flags = columns.flags[position];
  const criterion: DecodedCriterion = {
    id: run.strings[columns.ids[position]],
    text: run.strings[columns.texts[position]],
    points: columns.points[position],
    tags: rubricateTags(run, columns.tagSets[position]),
    kind: (flags >> 5) & 1 ? 'hard_rule' : 'principle',
    source: (flags >> 4) & 1 ? 'check' : 'judge',
    status: CRITERION_STATUS_NAMES[flags & 3],
    met: rubricateCriterionMet(flags)
  };
  const extras = rubricateExtras(run).get(position);
  if (extras) {
    if (extras.value !== undefined) criterion.value = extras.value;
    if (extras.label !== undefined) criterion.label = extras.label;
    if (extras.probability !== undefined) criterion.probability = extras.probability;
    if (extras.error) criterion.error = { code: extras.error.code, message: extras.error.message };
    if (extras.skip_reason !== undefined) criterion.skip_reason = extras.skip_reason;
    if (extras.steps) criterion.steps = extras.steps;
    if (extras.expected_score !== undefined) criterion.expected_score = extras.expected_score;
    if (extras.turns) criterion.turns = extras.turns;
    if (extras.cascade) criterion.cascade = extras.cascade;
    if (extras.tool_calls) criterion.tool_calls = extras.tool_calls;
    if (extras.process) criterion.process = extras.process;
  }
  const explanation = chunk ? chunk.explanations[position - chunk.firstCriterion] : -1;
  if (chunk && explanation >= 0) criterion.explanation = chunk.strings[explanation];
  return criterion;
}

function rubricateDecodeCall(chunk: RunTexts, call: ReportJudgeCall): DecodedJudgeCall {
  const text = function (index: number): string | null { return index >= 0 ? chunk.strings[index] : null; };
  const messages: Array<{ role: string; content: string }> = [];
  for (let offset = 0; offset + 1 < call.messages.length; offset += 2) messages.push({ role: chunk.strings[call.messages[offset]], content: chunk.strings[call.messages[offset + 1]] });
  return {
    criteria: call.criteria.map(function (index) { return chunk.strings[index]; }),
    messages: messages,
    settings: chunk.strings[call.settings],
    reply: text(call.reply),
    reasoning: text(call.reasoning),
    finishReason: text(call.finishReason),
    latencyMs: call.latencyMs,
    attempts: call.attempts,
    error: call.error ? { code: chunk.strings[call.error[0]], message: chunk.strings[call.error[1]] } : null,
    judge: text(call.judge)
  };
}

/** Index of the text chunk holding item index. */
export function rubricateChunkIndex(run: { textChunkSize: number }, index: number): number {
  return Math.floor(index / run.textChunkSize);
}

/**
 * One item as in the results file: the fields a report shows. chunk is the item's text
 * chunk, or null to decode only the columns (texts then stay undefined).
 */
export function rubricateDecodeItem(run: RunData, chunk: RunTexts | null, index: number): DecodedItem {
  const items = run.items;
  const item: DecodedItem = {
    id: items.ids[index],
    status: ITEM_STATUS_NAMES[items.status[index]],
    score: items.scores[index],
    gated: (items.flags[index] & 1) === 1,
    tags: rubricateTags(run, items.tagSets[index]),
    line: items.lines[index],
    rubric_id: items.rubricIds[index] >= 0 ? run.strings[items.rubricIds[index]] : null,
    criteria: []
  };
  for (let position = items.criteriaOffsets[index]; position < items.criteriaOffsets[index + 1]; position += 1) {
    item.criteria.push(rubricateDecodeCriterion(run, chunk, position));
  }
  // Reports written before process rewards have no step rewards.
  const stepRewards = (items.stepRewards || []).find(function (entry) { return entry[0] === index; });
  if (stepRewards) item.step_rewards = stepRewards[1];
  const errorOffset = rubricateSparse(items.errors, 3).get(index);
  if (errorOffset !== undefined) {
    item.error = { code: run.strings[items.errors[errorOffset]], message: chunk ? chunk.strings[items.errors[errorOffset + 1]] : null };
  }
  if (chunk) {
    const local = index - chunk.firstItem;
    const flattened = chunk.prompts[local] || [];
    const prompt: Array<{ role: string; content: string }> = (item.prompt = []);
    for (let turn = 0; turn < flattened.length; turn += 2) prompt.push({ role: chunk.strings[flattened[turn]], content: chunk.strings[flattened[turn + 1]] });
    item.response = chunk.responses[local] >= 0 ? chunk.strings[chunk.responses[local]] : null;
    const referenceOffset = rubricateSparse(chunk.references, 2).get(index);
    item.reference = referenceOffset !== undefined ? chunk.strings[chunk.references[referenceOffset]] : null;
    const metadataOffset = rubricateSparse(chunk.metadata, 2).get(index);
    item.metadata = metadataOffset !== undefined ? chunk.strings[chunk.metadata[metadataOffset]] : null;
    // Chunks written before trajectories and images were shown have neither list.
    const trajectory = (chunk.trajectories || []).find(function (entry) { return entry[0] === index; });
    if (trajectory && typeof item.response === 'string') {
      const response = item.response, flattened = trajectory[1], indented = trajectory[2] === 1, steps: DecodedStep[] = [];
      for (let offset = 0; offset + 3 < flattened.length; offset += 4) {
        const shown = response.slice(flattened[offset + 2], flattened[offset + 3]);
        // Lines after a step's first are indented for the judge (no text may start a line): shown here as written.
        steps.push({ number: steps.length + 1, kind: STEP_KIND_NAMES[flattened[offset]] || 'user', toolName: flattened[offset + 1] >= 0 ? chunk.strings[flattened[offset + 1]] : null, body: indented ? shown.split('\n    ').join('\n') : shown });
      }
      item.trajectory = steps;
    }
    const images = (chunk.images || []).find(function (entry) { return entry[0] === index; });
    if (images) item.images = images[1];
    const calls = (chunk.calls || []).find(function (entry) { return entry[0] === index; });
    if (calls) item.calls = calls[1].map(function (call) { return rubricateDecodeCall(chunk, call); });
  }
  return item;
}
