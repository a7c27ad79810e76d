/**
 * Turns the compare view's columns back into records. No DOM access: the tests run this very
 * module in Node to check the encoding round-trips.
 */
import type { CompareReportPayload, PairTexts } from '../types.js';
import { ITEM_STATUS_NAMES, rubricateSparse, type ItemStatusName } from './decode.js';

export type PairVerdictName = 'A' | 'B' | 'tie' | 'inconsistent';
export const PAIR_VERDICT_NAMES: readonly PairVerdictName[] = ['A', 'B', 'tie', 'inconsistent'];

/** Verdict per presentation order: ab = A shown first, ba = swapped; null when the call failed. */
export interface PairOrders {
  ab?: PairVerdictName | null;
  ba?: PairVerdictName | null;
}

export interface DecodedComparison {
  id: string;
  text: string;
  status: 'ok' | 'error';
  winner: PairVerdictName | null;
  consistent: boolean | null;
  orders: PairOrders;
  explanations?: { ab?: string; ba?: string };
  error?: { code: string; message: string };
}

export interface DecodedPair {
  id: string;
  status: ItemStatusName;
  winner: PairVerdictName | null;
  consistent: boolean | null;
  orders: PairOrders;
  line: number;
  criteria: DecodedComparison[];
  overall?: DecodedComparison;
  label?: PairVerdictName;
  correct?: boolean | null;
  source?: string;
  error?: { code: string; message: string };
  prompt?: Array<{ role: string; content: string }>;
  response_a?: string | null;
  response_b?: string | null;
}

type PairColumnsPayload = Pick<CompareReportPayload, 'strings' | 'pairs' | 'comparisons'>;

/** A verdict code back to its value: a name, null (no verdict), or undefined (not judged). */
export function rubricatePairVerdict(code: number): PairVerdictName | null | undefined {
  if (code >= 0) return PAIR_VERDICT_NAMES[code];
  return code === -1 ? null : undefined;
}

function rubricateTriState(code: number): boolean | null { return code === 1 ? true : code === 0 ? false : null; }

function rubricatePairOrders(original: number, swapped: number): PairOrders {
  const orders: PairOrders = {};
  const ab = rubricatePairVerdict(original), ba = rubricatePairVerdict(swapped);
  if (ab !== undefined) orders.ab = ab;
  if (ba !== undefined) orders.ba = ba;
  return orders;
}

/** One comparison (overall or a criterion) as in the compare file; explanations need the pair's text chunk. */
function rubricateDecodeComparison(payload: PairColumnsPayload, chunk: PairTexts | null, position: number): DecodedComparison {
  const columns = payload.comparisons;
  const winner = rubricatePairVerdict(columns.winners[position]);
  const comparison: DecodedComparison = {
    id: payload.strings[columns.ids[position]],
    text: payload.strings[columns.texts[position]],
    status: columns.status[position] === 1 ? 'error' : 'ok',
    winner: winner === undefined ? null : winner,
    consistent: rubricateTriState(columns.consistent[position]),
    orders: rubricatePairOrders(columns.originalOrder[position], columns.swappedOrder[position])
  };
  if (chunk) {
    const offset = 2 * (position - chunk.firstComparison);
    const explanations: { ab?: string; ba?: string } = {};
    if (chunk.explanations[offset] >= 0) explanations.ab = chunk.strings[chunk.explanations[offset]];
    if (chunk.explanations[offset + 1] >= 0) explanations.ba = chunk.strings[chunk.explanations[offset + 1]];
    if (explanations.ab !== undefined || explanations.ba !== undefined) comparison.explanations = explanations;
  }
  const errorOffset = rubricateSparse(columns.errors, 3).get(position);
  if (errorOffset !== undefined) comparison.error = { code: payload.strings[columns.errors[errorOffset]], message: payload.strings[columns.errors[errorOffset + 1]] };
  return comparison;
}

/**
 * One pair as in the compare file: the fields the view shows. chunk is the pair's text chunk,
 * or null to decode only the columns (texts and explanations then stay undefined).
 */
export function rubricateDecodePair(payload: PairColumnsPayload, chunk: PairTexts | null, index: number): DecodedPair {
  const pairs = payload.pairs;
  const winner = rubricatePairVerdict(pairs.winners[index]);
  const pair: DecodedPair = {
    id: pairs.ids[index],
    status: ITEM_STATUS_NAMES[pairs.status[index]],
    winner: winner === undefined ? null : winner,
    consistent: rubricateTriState(pairs.consistent[index]),
    orders: rubricatePairOrders(pairs.originalOrder[index], pairs.swappedOrder[index]),
    line: pairs.lines[index],
    criteria: []
  };
  if (pairs.labels[index] >= 0) {
    pair.label = PAIR_VERDICT_NAMES[pairs.labels[index]];
    pair.correct = rubricateTriState(pairs.correct[index]);
  } else if (pairs.correct[index] >= 0) pair.correct = pairs.correct[index] === 1;
  if (pairs.sources[index] >= 0) pair.source = payload.strings[pairs.sources[index]];
  const first = pairs.comparisonOffsets[index], end = pairs.comparisonOffsets[index + 1];
  for (let position = first; position < end; position += 1) {
    const comparison = rubricateDecodeComparison(payload, chunk, position);
    if (position === first && (pairs.flags[index] & 1) === 1) pair.overall = comparison;
    else pair.criteria.push(comparison);
  }
  const errorOffset = rubricateSparse(pairs.errors, 3).get(index);
  if (errorOffset !== undefined) pair.error = { code: payload.strings[pairs.errors[errorOffset]], message: payload.strings[pairs.errors[errorOffset + 1]] };
  if (chunk) {
    const local = index - chunk.firstPair;
    const flattened = chunk.prompts[local] || [];
    const prompt: Array<{ role: string; content: string }> = (pair.prompt = []);
    for (let turn = 0; turn < flattened.length; turn += 2) prompt.push({ role: chunk.strings[flattened[turn]], content: chunk.strings[flattened[turn + 1]] });
    pair.response_a = chunk.responsesA[local] >= 0 ? chunk.strings[chunk.responsesA[local]] : null;
    pair.response_b = chunk.responsesB[local] >= 0 ? chunk.strings[chunk.responsesB[local]] : null;
  }
  return pair;
}
