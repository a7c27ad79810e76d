/**
 * `--dry-run` for the commands that call a judge: the run is planned through the real
 * pipeline with a counting judge and a read-only cache, and the estimate is printed as JSON.
 */
import type { Command } from 'commander';
import { estimateCost, type DryRunJudge } from '../batch/dry-run.js';
import { addUsage, emptyUsage, priceFor, type ModelPrice, type Usage } from '../engine/usage.js';
import type { CommandContext } from './context.js';

export function addDryRunOption(command: Command): Command {
  return command.option('--dry-run', 'send nothing: print the exact number of judge calls, their tokens, the cache hits and the cost at synchronous, batch and prompt-cached prices');
}

/** Drains a result stream of a dry run, summing the usage of its records (cache hits). */
export async function dryRunUsage(results: AsyncIterable<{ usage?: Usage }>): Promise<Usage> {
  const usage = emptyUsage();
  for await (const result of results) if (result.usage) addUsage(usage, result.usage);
  return usage;
}

export function printDryRun(context: CommandContext, judges: DryRunJudge[], usage: Usage, model: string | undefined, prices: Readonly<Record<string, ModelPrice>>, options: { batch: boolean }): void {
  const totals = judges.map((judge) => judge.totals);
  const sum = (pick: (total: (typeof totals)[number]) => number) => totals.reduce((accumulated, total) => accumulated + pick(total), 0);
  const combined = {
    calls: sum((total) => total.calls),
    input_tokens: sum((total) => total.input_tokens),
    cacheable_input_tokens: sum((total) => total.cacheable_input_tokens),
    expected_output_tokens: sum((total) => total.expected_output_tokens),
    tokenizer: totals[0]?.tokenizer ?? 'o200k_base',
    exact_tokenizer: totals.every((total) => total.exact_tokenizer),
  };
  const oneModel = judges.every((judge) => judge.provenance.model === model);
  const cost = model && oneModel ? estimateCost(combined, priceFor(model, prices)) : { synchronous: null, batch: null, prompt_cached: null };
  const estimate = {
    dry_run: true,
    model: model ?? null,
    judge_calls: combined.calls,
    cache_hits: usage.cache_hits,
    input_tokens: combined.input_tokens,
    cacheable_input_tokens: combined.cacheable_input_tokens,
    expected_output_tokens: combined.expected_output_tokens,
    tokenizer: combined.exact_tokenizer ? combined.tokenizer : `${combined.tokenizer} (approximation: not this model's tokenizer)`,
    cost_usd: cost,
    ...(options.batch ? { mode: 'batch' } : {}),
  };
  context.stdout(JSON.stringify(estimate, null, 2));
  const money = (value: number | null) => (value === null ? 'n/a (no price for this model)' : `$${value.toFixed(4)}`);
  context.stderr(
    `dry run: ${combined.calls} judge call(s), ${usage.cache_hits} cache hit(s), ${combined.input_tokens} input tokens, ~${combined.expected_output_tokens} output tokens; ` +
      `cost ${money(cost.synchronous)} synchronous, ${money(cost.batch)} batch, ${money(cost.prompt_cached)} with prompt caching`,
  );
}
