/**
 * What a benchmark pack holds and what a full run of it costs at its default judge, for
 * `rubricate benchmarks`. Sizes are counted from the data file. Calls, tokens and dollars come
 * from the dry run's counting judge (`batch/dry-run.ts`) driven through the real `Grader` with
 * the pack's plan, so they are what `grade --dry-run` would say; the responses are a stated
 * assumption (a filler answer of `assumedResponseWords` words), since a pack has none of its own.
 * A large pack is counted on its first items, up to `estimatedCriteria` judged criteria, and the
 * rest scaled by their judged criteria.
 */
import { createDryRunJudge, estimateCost, type CostEstimate, type DryRunTotals } from '../batch/dry-run.js';
import { defaultPrices, priceFor, type ModelPrice } from '../engine/usage.js';
import { createJudge } from '../judges/registry.js';
import { getItemImporter } from '../formats/index.js';
import type { ImportRecord } from '../rubric/records.js';
import type { BenchmarkPack } from './benchmark-packs.js';
import { Grader } from './grader.js';

/** Words of the filler response every item is priced with. */
export const assumedResponseWords = 300;
/** Judged criteria run through the counting judge (whole items, at least one); the rest are scaled from them. */
export const estimatedCriteria = 1500;

export interface BenchmarkSize {
  items: number;
  criteria: number;
  /** Criteria decided by a deterministic check (no judge call). */
  check_criteria: number;
  /** Records the importer could not read (each an error naming its line). */
  invalid: number;
}

export interface BenchmarkEstimate {
  judge: string;
  model: string | null;
  calls: number;
  input_tokens: number;
  expected_output_tokens: number;
  tokenizer: string | null;
  cost_usd: CostEstimate;
  /** The price the cost assumes (USD per 1M tokens), or null when the model has none in the table. */
  price: ModelPrice | null;
  /** How many items were run through the counting judge (the rest scaled by their criteria). */
  counted_items: number;
  assumed_response_words: number;
}

/** Items and criteria of a data file, read with the pack's importer (responses are not needed to count). */
export async function countBenchmark(file: string, pack: BenchmarkPack): Promise<BenchmarkSize> {
  const size: BenchmarkSize = { items: 0, criteria: 0, check_criteria: 0, invalid: 0 };
  for await (const record of getItemImporter(pack.format).read(file, { withoutResponses: true, judgeProtocol: pack.protocol })) {
    if (record.kind !== 'item') {
      size.invalid += 1;
      continue;
    }
    size.items += 1;
    size.criteria += record.item.rubric.criteria.length;
    size.check_criteria += record.item.rubric.criteria.filter((criterion) => criterion.check !== undefined).length;
  }
  return size;
}

const fillerWords = 'the answer explains each step of its reasoning and names what it is unsure of before it gives its final recommendation'.split(' ');
const fillerResponse = Array.from({ length: assumedResponseWords }, (_, index) => fillerWords[index % fillerWords.length]).join(' ');

/** The first items of the file up to `estimatedCriteria` judged criteria, each given the filler response; `counted` tallies them and their judged criteria. */
async function* pricedItems(file: string, pack: BenchmarkPack, counted: { items: number; criteria: number }): AsyncGenerator<ImportRecord> {
  for await (const record of getItemImporter(pack.format).read(file, { withoutResponses: true, judgeProtocol: pack.protocol })) {
    if (record.kind !== 'item') continue;
    if (counted.criteria >= estimatedCriteria) return;
    counted.items += 1;
    counted.criteria += record.item.rubric.criteria.filter((criterion) => criterion.check === undefined).length;
    yield { kind: 'item', line: record.line, item: { ...record.item, response: fillerResponse } };
  }
}

/** The judge calls, tokens and cost of a full run at the pack's default judge, at the given prices. */
export async function estimateBenchmark(file: string, pack: BenchmarkPack, size: BenchmarkSize, prices: Readonly<Record<string, ModelPrice>> = defaultPrices): Promise<BenchmarkEstimate> {
  const base = { judge: pack.judge, counted_items: 0, assumed_response_words: assumedResponseWords };
  // The counting judge never sends a call: the backend is built only for its model, limits and
  // tokenizer, with a placeholder key (the environment's own keys are not read).
  const judge = pack.judge === 'none' ? undefined : await createJudge({ model: pack.judge }, { environment: {}, apiKey: 'unused-by-the-dry-run' });
  if (!judge) return { ...base, model: null, calls: 0, input_tokens: 0, expected_output_tokens: 0, tokenizer: null, cost_usd: { synchronous: 0, batch: 0, prompt_cached: 0 }, price: null };
  const counting = createDryRunJudge(judge);
  const grader = new Grader({ judge: counting, scoring: pack.scoring, plan: { protocol: pack.protocol } });
  const counted = { items: 0, criteria: 0 };
  try {
    for await (const result of grader.gradeStream(pricedItems(file, pack, counted))) void result;
  } finally {
    await judge.close?.();
  }
  // Calls and tokens grow with the criteria a judge decides (checks make no call): the items not
  // counted are scaled by theirs, which makes the calls of a per-criterion plan exact.
  const scale = counted.criteria === 0 ? 1 : (size.criteria - size.check_criteria) / counted.criteria;
  const totals: DryRunTotals = {
    ...counting.totals,
    calls: Math.round(counting.totals.calls * scale),
    input_tokens: Math.round(counting.totals.input_tokens * scale),
    cacheable_input_tokens: Math.round(counting.totals.cacheable_input_tokens * scale),
    expected_output_tokens: Math.round(counting.totals.expected_output_tokens * scale),
  };
  const price = priceFor(judge.provenance.model, prices);
  return {
    ...base,
    model: judge.provenance.model,
    calls: totals.calls,
    input_tokens: totals.input_tokens,
    expected_output_tokens: totals.expected_output_tokens,
    tokenizer: totals.exact_tokenizer ? totals.tokenizer : `${totals.tokenizer} (approximation)`,
    cost_usd: estimateCost(totals, price),
    price: price ?? null,
    counted_items: counted.items,
  };
}

