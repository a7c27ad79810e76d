/**
 * Synthetic `rubricate compare` records for the compare view's tests and benchmark: every
 * outcome (A, B, tie, order-inconsistent, failed calls, invalid input), gold labels, sources
 * and rubric criteria, seeded so every run writes the same bytes. Verdicts are drawn, not
 * judged; winner and consistency are combined from the two orders as the Comparer does.
 */
import { comparisonFromOrders, type CompareRecord, type ComparisonResult } from '../pipeline/compare.js';
import { overallCriterionId, overallCriterionText } from '../grading/pairwise.js';
import type { PairLabel } from '../rubric/schema.js';
import { randomInteger, seededRandom, type RandomSource } from '../util/random.js';
import { rubricateVersion } from '../version.js';

export interface SyntheticCompareOptions {
  pairs: number;
  seed?: number;
  /** Rubric criteria per pair (0: overall only). */
  criteriaPerPair?: number;
  /** Judge both orders (default true). */
  swap?: boolean;
  /** Probability that response A is the better one, which tilts the judge's verdicts. */
  strengthOfA?: number;
  /** How often one order's verdict is redrawn at random (position noise). */
  positionNoise?: number;
  /** Share of judge calls that fail. */
  callErrorRate?: number;
  /** Share of pairs that were invalid input. */
  invalidRate?: number;
  /** Give pairs gold labels. */
  labels?: boolean;
  /** Sources the pairs cycle through (none when empty). */
  sources?: readonly string[];
  /** Leave prompts and responses out (as --no-text). */
  omitText?: boolean;
}

const criterionTexts = [
  'Answers the question that was asked',
  'States facts correctly',
  'Follows the requested format',
  'Is concise',
  'Uses a rude or dismissive tone',
  'Explains its reasoning',
];

function pick<Value>(random: RandomSource, values: readonly Value[]): Value {
  return values[randomInteger(random, values.length)];
}

function drawVerdict(random: RandomSource, strengthOfA: number): PairLabel {
  const roll = random();
  if (roll < 0.12) return 'tie';
  return random() < strengthOfA ? 'A' : 'B';
}

/** One comparison in both orders, combined as the Comparer combines them. */
function drawComparison(random: RandomSource, id: string, text: string, options: Required<Omit<SyntheticCompareOptions, 'sources' | 'omitText' | 'labels' | 'seed' | 'pairs' | 'criteriaPerPair'>>): ComparisonResult {
  const orders: ComparisonResult['orders'] = {};
  const explanations: NonNullable<ComparisonResult['explanations']> = {};
  const first = drawVerdict(random, options.strengthOfA);
  const judged = options.swap ? (['ab', 'ba'] as const) : (['ab'] as const);
  let error: ComparisonResult['error'];
  for (const order of judged) {
    if (random() < options.callErrorRate) {
      orders[order] = null;
      error ??= { code: 'JUDGE_UNPARSEABLE', message: `${order === 'ab' ? 'original' : 'swapped'} order: "winner" must be "1", "2" or "tie", got "both"` };
      continue;
    }
    const verdict = order === 'ba' && random() < options.positionNoise ? drawVerdict(random, 0.5) : first;
    orders[order] = verdict;
    const shownFirst = order === 'ab' ? 'A' : 'B';
    explanations[order] = verdict === 'tie' ? `Both responses do this equally (${text.toLowerCase()}).` : `Response ${verdict === shownFirst ? 1 : 2} does this better: ${text.toLowerCase()}.`;
  }
  return comparisonFromOrders(id, text, orders, explanations, error);
}

export function* syntheticCompareRecords(options: SyntheticCompareOptions): Generator<CompareRecord> {
  const random = seededRandom(options.seed ?? 1);
  const drawing = {
    swap: options.swap ?? true,
    strengthOfA: options.strengthOfA ?? 0.6,
    positionNoise: options.positionNoise ?? 0.15,
    callErrorRate: options.callErrorRate ?? 0.03,
    invalidRate: options.invalidRate ?? 0.02,
  };
  const sources = options.sources ?? [];
  for (let index = 0; index < options.pairs; index += 1) {
    const id = `pair-${String(index + 1).padStart(4, '0')}`;
    const line = index + 1;
    if (random() < drawing.invalidRate) {
      yield { id, status: 'invalid', winner: null, consistent: null, orders: {}, criteria: [], error: { code: 'INPUT_INVALID', message: `pairs.jsonl:${line}: response_b is missing` }, line, rubricate_version: rubricateVersion };
      continue;
    }
    const overall = drawComparison(random, overallCriterionId, overallCriterionText, drawing);
    const criteria = Array.from({ length: options.criteriaPerPair ?? 0 }, (_, position) => drawComparison(random, `c${position + 1}`, criterionTexts[position % criterionTexts.length], drawing));
    const failed = [overall, ...criteria].find((comparison) => comparison.status === 'error');
    const label: PairLabel | undefined = options.labels ? (random() < drawing.strengthOfA ? 'A' : 'B') : undefined;
    const record: CompareRecord = {
      id,
      status: failed ? 'error' : 'ok',
      winner: overall.winner,
      consistent: overall.consistent,
      orders: overall.orders,
      ...(label ? { label, correct: overall.winner ? overall.winner === label : null } : {}),
      ...(sources.length > 0 ? { source: pick(random, sources) } : {}),
      overall,
      criteria,
      rubricate_version: rubricateVersion,
    };
    if (!options.omitText) {
      record.prompt = [{ role: 'user', content: `Question ${index + 1}: which ${pick(random, ['planet', 'river', 'prime', 'poet'])} comes first?` }];
      record.response_a = `Answer A to question ${index + 1}.`;
      record.response_b = `Answer B to question ${index + 1}, a little longer than A.`;
    }
    record.judge = { id: 'openai:gpt-4.1-mini', model: 'gpt-4.1-mini', template_version: 'pairwise/v1', mode: drawing.swap ? 'pairwise-swap' : 'pairwise', temperature: 0, max_tokens: 512 };
    const calls = (1 + criteria.length) * (drawing.swap ? 2 : 1);
    record.usage = { prompt_tokens: 700 * calls, completion_tokens: 40 * calls, cached_prompt_tokens: 0, calls, cache_hits: 0, retries: 0, gate_calls_saved: 0 };
    if (failed?.error) record.error = failed.error;
    record.line = line;
    yield record;
  }
}
