import type { Command } from 'commander';
import { BatchLedger, type LedgerBatch } from '../../batch/ledger.js';
import { finishedBatchStatuses, OpenAIBatchApi } from '../../batch/openai-batch-api.js';
import { batchPriceFactor, costOf, defaultPrices, emptyUsage, loadPriceTable, priceFor } from '../../engine/usage.js';
import { RubricateError, exitCodes } from '../../errors.js';
import { defaultCachePath } from '../../store/index.js';
import type { CommandContext } from '../context.js';

interface BatchesFlags {
  cache?: string;
  cancel?: string[];
  refresh?: boolean;
  prices?: string;
  judgeBaseUrl?: string;
  judgeApiKey?: string;
  json?: boolean;
}

/**
 * `rubricate batches`: the provider batches a cache holds (submitted by `grade --batch`),
 * with status, request counts, tokens and cost at batch prices; `--refresh` asks the
 * provider for the current status, `--cancel ID` cancels one (its answered requests are kept
 * by the next run of the command that submitted it; the rest are sent again).
 */
export function registerBatchesCommand(program: Command, context: CommandContext): void {
  program
    .command('batches')
    .description('list the provider batches submitted with --batch (status, counts, cost) and cancel them')
    .option('--cache <file>', 'the SQLite cache holding the batch ledger (default: the user cache directory)')
    .option('--refresh', 'ask the provider for the current status of unfinished batches')
    .option('--cancel <id>', 'cancel this batch (a batch id or the local id); repeatable', (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
    .option('--prices <file>', 'price table (USD per 1M tokens); batch cost is half of it')
    .option('--judge-base-url <url>', 'the Batch API base URL (default: OPENAI_BASE_URL, else the OpenAI API)')
    .option('--judge-api-key <key>', 'API key (default: OPENAI_API_KEY)')
    .option('--json', 'one JSON object per batch')
    .action(async (flags: BatchesFlags) => {
      context.exitCode = await runBatches(flags, context);
    });
}

async function runBatches(flags: BatchesFlags, context: CommandContext): Promise<number> {
  const ledger = new BatchLedger(flags.cache ?? defaultCachePath());
  const prices = flags.prices ? loadPriceTable(flags.prices) : defaultPrices;
  try {
    const needsApi = flags.refresh || (flags.cancel?.length ?? 0) > 0;
    const api = needsApi ? new OpenAIBatchApi({ baseUrl: flags.judgeBaseUrl ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', apiKey: flags.judgeApiKey ?? process.env.OPENAI_API_KEY }) : undefined;
    for (const id of flags.cancel ?? []) {
      const batch = ledger.get(id);
      if (!batch?.batchId) throw new RubricateError('CONFIG_INVALID', `no submitted batch "${id}" in this cache`, { field: 'cancel' });
      const remote = await api!.cancelBatch(batch.batchId);
      ledger.update(batch.localId, { status: remote.status });
      context.stderr(`batch ${batch.batchId}: ${remote.status}`);
    }
    if (flags.refresh) {
      for (const batch of ledger.all()) {
        if (!batch.batchId || finishedBatchStatuses.has(batch.status)) continue;
        const remote = await api!.retrieveBatch(batch.batchId);
        ledger.update(batch.localId, { status: remote.status, completed: remote.request_counts?.completed, failed: remote.request_counts?.failed });
      }
    }
    const rows = ledger.all().map((batch) => describe(batch, prices));
    if (flags.json) {
      for (const row of rows) context.stdout(JSON.stringify(row));
    } else {
      context.stdout(['batch', 'status', 'model', 'requests', 'answered', 'failed', 'cost_usd'].join('\t'));
      for (const row of rows) context.stdout([row.batch_id ?? row.local_id, row.status, row.model, row.requests, row.answered, row.failed, row.cost_usd ?? 'n/a'].join('\t'));
    }
    return exitCodes.success;
  } finally {
    ledger.close();
  }
}

function describe(batch: LedgerBatch, prices: Parameters<typeof priceFor>[1]) {
  const usage = emptyUsage();
  usage.prompt_tokens = batch.promptTokens;
  usage.cached_prompt_tokens = batch.cachedPromptTokens;
  usage.completion_tokens = batch.completionTokens;
  usage.batch = { calls: batch.completed, prompt_tokens: batch.promptTokens, cached_prompt_tokens: batch.cachedPromptTokens, completion_tokens: batch.completionTokens };
  const cost = costOf(usage, priceFor(batch.model, prices));
  return {
    local_id: batch.localId,
    batch_id: batch.batchId,
    provider: batch.provider,
    endpoint: batch.endpoint,
    model: batch.model,
    status: batch.status,
    created_at: new Date(batch.createdAt).toISOString(),
    requests: batch.requestCount,
    answered: batch.completed,
    failed: batch.failed,
    prompt_tokens: batch.promptTokens,
    completion_tokens: batch.completionTokens,
    cost_usd: cost,
    price_factor: batchPriceFactor,
    delivered: batch.delivered,
  };
}
