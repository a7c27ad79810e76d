/**
 * `--dry-run` for the commands that call a judge: the run is planned through the real
 * pipeline with a counting judge and a read-only cache, and the estimate is printed as JSON.
 */
import type { Command } from 'commander';
import { estimateCost, type CostEstimate, type DryRunJudge, type DryRunTotals } from '../batch/dry-run.js';
import { addUsage, emptyUsage, priceFor, type ModelPrice, type Usage } from '../engine/usage.js';
import type { CommandContext } from './context.js';

export function addDryRunOption(
  command: Command,
  description = 'send nothing: print the exact number of judge calls, their tokens, the cache hits and the cost at synchronous, batch and prompt-cached prices',
): Command {
  return command.option('--dry-run', description);
}

/** Drains a result stream of a dry run, summing the usage of its records (cache hits). */
export async function dryRunUsage(results: AsyncIterable<{ usage?: Usage }>): Promise<Usage> {
  const usage = emptyUsage();
  for await (const result of results) if (result.usage) addUsage(usage, result.usage);
  return usage;
}

/** The totals of several counting judges (a jury) as one. */
export function combinedTotals(totals: readonly DryRunTotals[]): DryRunTotals {
  const sum = (pick: (total: DryRunTotals) => number) => totals.reduce((accumulated, total) => accumulated + pick(total), 0);
  return {
    calls: sum((total) => total.calls),
    input_tokens: sum((total) => total.input_tokens),
    cacheable_input_tokens: sum((total) => total.cacheable_input_tokens),
    expected_output_tokens: sum((total) => total.expected_output_tokens),
    tokenizer: totals[0]?.tokenizer ?? 'o200k_base',
    exact_tokenizer: totals.every((total) => total.exact_tokenizer),
  };
}

const tokenizerLabel = (totals: DryRunTotals) => (totals.exact_tokenizer ? totals.tokenizer : `${totals.tokenizer} (approximation: not this model's tokenizer)`);
const money = (value: number | null) => (value === null ? 'n/a (no price for this model)' : `$${value.toFixed(4)}`);
const costLine = (cost: CostEstimate) => `cost ${money(cost.synchronous)} synchronous, ${money(cost.batch)} batch, ${money(cost.prompt_cached)} with prompt caching`;

/** The cost of counting judges' totals, or none when they are not all one priced model. */
function costOfJudges(judges: readonly DryRunJudge[], totals: DryRunTotals, model: string | undefined, prices: Readonly<Record<string, ModelPrice>>): CostEstimate {
  const oneModel = judges.every((judge) => judge.provenance.model === model);
  return model && oneModel ? estimateCost(totals, priceFor(model, prices)) : { synchronous: null, batch: null, prompt_cached: null };
}

export function printDryRun(
  context: CommandContext,
  judges: DryRunJudge[],
  usage: Usage,
  model: string | undefined,
  prices: Readonly<Record<string, ModelPrice>>,
  options: {
    batch: boolean;
    cascade?: readonly DryRunJudge[];
    /** The items' image files read and image URLs a run would fetch (a dry run fetches none). */
    images?: { files_read: number; urls_not_fetched: number };
    /** `rubricate eval`: the model under test's calls, tokens and cost, apart from the judge's. */
    sampling?: Record<string, unknown> & { model_calls?: unknown; cost_usd?: unknown };
  },
): void {
  const combined = combinedTotals(judges.map((judge) => judge.totals));
  const cost = costOfJudges(judges, combined, model, prices);
  const images = options.images && options.images.files_read + options.images.urls_not_fetched > 0 ? options.images : undefined;
  const estimate = {
    dry_run: true,
    model: model ?? null,
    judge_calls: combined.calls,
    cache_hits: usage.cache_hits,
    input_tokens: combined.input_tokens,
    cacheable_input_tokens: combined.cacheable_input_tokens,
    expected_output_tokens: combined.expected_output_tokens,
    tokenizer: tokenizerLabel(combined),
    cost_usd: cost,
    ...(options.batch ? { mode: 'batch' } : {}),
    ...(images ? { images } : {}),
    ...(options.sampling ? { sampling: options.sampling } : {}),
    // A cascade's later judges: as if every judged criterion escalated to each (their calls depend on replies a dry run does not get).
    ...(options.cascade && options.cascade.length > 0
      ? {
          cascade: options.cascade.map((stage) => ({
            judge: stage.provenance.id,
            upper_bound: true,
            judge_calls: stage.totals.calls,
            input_tokens: stage.totals.input_tokens,
            expected_output_tokens: stage.totals.expected_output_tokens,
            cost_usd: costOfJudges([stage], stage.totals, stage.provenance.model, prices),
          })),
        }
      : {}),
  };
  context.stdout(JSON.stringify(estimate, null, 2));
  const imagesLine = images ? `; ${images.files_read} image file(s) read, ${images.urls_not_fetched} image URL(s) a run would fetch (not fetched)` : '';
  if (options.sampling) {
    const sampling = options.sampling as { model: string; model_calls: number; cache_hits: number; input_tokens: number; expected_output_tokens: number; cost_usd: CostEstimate };
    context.stderr(`dry run: model under test ${sampling.model}: ${sampling.model_calls} call(s), ${sampling.cache_hits} cache hit(s), ${sampling.input_tokens} input tokens, ~${sampling.expected_output_tokens} output tokens; ${costLine(sampling.cost_usd)}`);
  }
  context.stderr(`dry run: ${combined.calls} judge call(s), ${usage.cache_hits} cache hit(s), ${combined.input_tokens} input tokens, ~${combined.expected_output_tokens} output tokens; ${costLine(cost)}${imagesLine}`);
  for (const stage of options.cascade ?? []) context.stderr(`cascade ${stage.provenance.id}: at most ${stage.totals.calls} call(s) (every judged criterion escalated); ${costLine(costOfJudges([stage], stage.totals, stage.provenance.model, prices))}`);
}

/** One model of a planned dry run: what its calls took in all, and the part counted exactly. */
export interface PlannedRole {
  role: 'generator' | 'judge';
  judges: readonly DryRunJudge[];
  /** Calls made before any answer was needed (no synthetic answer behind them). */
  exact: DryRunTotals;
  total: DryRunTotals;
  cacheHits: number;
}

/**
 * The estimate of a command whose later calls depend on earlier answers (`generate`,
 * `refine`): per model (they may have different prices) and in total, what is exact and what
 * is planned on synthetic answers, and the assumptions behind the estimate.
 */
export function printPlannedDryRun(
  context: CommandContext,
  roles: readonly PlannedRole[],
  prices: Readonly<Record<string, ModelPrice>>,
  options: { command: string; batch: boolean; assumptions: readonly string[] },
): void {
  const described = roles.map((role) => {
    const model = role.judges[0]?.provenance.model;
    const cost = costOfJudges(role.judges, role.total, model, prices);
    return {
      role: role.role,
      estimated: role.total.calls - role.exact.calls,
      cost,
      figures: {
        model: model ?? null,
        calls: role.total.calls,
        exact_calls: role.exact.calls,
        estimated_calls: role.total.calls - role.exact.calls,
        cache_hits: role.cacheHits,
        input_tokens: role.total.input_tokens,
        exact_input_tokens: role.exact.input_tokens,
        cacheable_input_tokens: role.total.cacheable_input_tokens,
        expected_output_tokens: role.total.expected_output_tokens,
        tokenizer: tokenizerLabel(role.total),
        cost_usd: cost,
      },
    };
  });
  const add = (pick: (cost: CostEstimate) => number | null) => {
    const values = described.map((role) => pick(role.cost));
    return values.some((value) => value === null) ? null : Math.round(values.reduce((sum: number, value) => sum + value!, 0) * 1e6) / 1e6;
  };
  const totalCost: CostEstimate = { synchronous: add((cost) => cost.synchronous), batch: add((cost) => cost.batch), prompt_cached: add((cost) => cost.prompt_cached) };
  const calls = roles.reduce((sum, role) => sum + role.total.calls, 0);
  const exactCalls = roles.reduce((sum, role) => sum + role.exact.calls, 0);
  const cacheHits = roles.reduce((sum, role) => sum + role.cacheHits, 0);
  const estimate = {
    dry_run: true,
    command: options.command,
    exact: calls === exactCalls,
    assumptions: options.assumptions,
    ...Object.fromEntries(described.map((role) => [role.role, role.figures])),
    total: { calls, exact_calls: exactCalls, estimated_calls: calls - exactCalls, cache_hits: cacheHits, cost_usd: totalCost },
    ...(options.batch ? { mode: 'batch' } : {}),
  };
  context.stdout(JSON.stringify(estimate, null, 2));
  const perRole = described.map((role) => `${role.role} ${role.figures.calls} call(s) (${role.figures.exact_calls} exact), ${role.figures.cache_hits} cache hit(s), ${costLine(role.cost)}`);
  context.stderr(`dry run: ${perRole.join('; ')}; total ${costLine(totalCost)}${calls === exactCalls ? '' : ' (an estimate: see "assumptions")'}`);
}
