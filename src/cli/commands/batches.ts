import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { BatchLedger, type LedgerBatch } from '../../batch/ledger.js';
import type { BatchService } from '../../batch/batch-service.js';
import { batchPriceFactor, costOf, defaultPrices, emptyUsage, loadPriceTable, priceFor } from '../../engine/usage.js';
import { RubricateError, exitCodes } from '../../errors.js';
import { defaultCachePath } from '../../store/index.js';
import { batchServiceFor } from '../../batch/services.js';
import { checkInputs } from '../../util/files.js';
import { organizeHelp } from '../help.js';
import type { CommandContext } from '../context.js';

interface BatchesFlags {
  cache?: string;
  cancel?: string[];
  refresh?: boolean;
  prices?: string;
  judgeBaseUrl?: string;
  judgeApiKey?: string;
  azureApiVersion?: string;
  json?: boolean;
}

/** Ledger statuses after which a batch changes no more (OpenAI's and Anthropic's words). */
const finalStatuses: ReadonlySet<string> = new Set(['failed', 'completed', 'expired', 'cancelled', 'ended', 'abandoned']);

/**
 * `rubricate batches`: the provider batches a cache holds (submitted by `grade`, `compare`,
 * `generate` or `refine` with `--batch`),
 * with status, request counts, tokens and cost at batch prices; `--refresh` asks the
 * provider for the current status, `--cancel ID` cancels one (its answered requests are kept
 * by the next run of the command that submitted it; the rest are sent again).
 */
export function registerBatchesCommand(program: Command, context: CommandContext): void {
  organizeHelp(
    program
      .command('batches')
      .description('list the provider batches submitted with --batch (status, counts, cost) and cancel them')
      .option('--cache <file>', 'the SQLite cache holding the batch ledger (default: the user cache directory)')
      .option('--refresh', 'ask the provider for the current status of unfinished batches')
      .option('--cancel <id>', 'cancel this batch (a batch id or the local id); repeatable', (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
      .option('--prices <file>', 'price table (USD per 1M tokens); batch cost is half of it')
      .option('--judge-base-url <url>', "the Batch API base URL (default: the provider's variable, OPENAI_BASE_URL, AZURE_OPENAI_ENDPOINT or ANTHROPIC_BASE_URL, else its public API)")
      .option('--judge-api-key <key>', "API key (default: the provider's variable, OPENAI_API_KEY, AZURE_OPENAI_API_KEY or ANTHROPIC_API_KEY)")
      .option('--azure-api-version <version>', 'Azure OpenAI api-version for azure batches')
      .option('--json', 'one JSON object per batch'),
    [
      'rubricate batches',
      'rubricate batches --refresh --json',
    ],
  )
    .action(async (flags: BatchesFlags) => {
      context.exitCode = await runBatches(flags, context);
    });
}

/** What a batch id can hold: the providers' (`batch_…`, `msgbatch_…`) and the ledger's own (`rbatch_<uuid>`). */
const batchIdPattern = /^[A-Za-z0-9_.:-]{1,200}$/;

/** An id as the user typed it, safe to print (quoted, control characters escaped, shortened). */
function shownId(id: string): string {
  const quoted = JSON.stringify(id);
  return quoted.length > 80 ? `${quoted.slice(0, 77)}…"` : quoted;
}

function cancelRefused(message: string, id: string): RubricateError {
  return new RubricateError('CONFIG_INVALID', message, { field: 'cancel', batch: id });
}

/**
 * Cancels one batch the ledger holds. A batch that has already ended (in the ledger, or at the
 * provider when the ledger is behind) is a usage error, not a judge failure: nothing is cancelled.
 */
async function cancelBatch(batch: LedgerBatch & { batchId: string }, service: BatchService, ledger: BatchLedger): Promise<string> {
  try {
    const remote = await service.cancel(batch.batchId);
    ledger.update(batch.localId, { status: remote.status });
    return remote.status;
  } catch (error) {
    const status = RubricateError.isInstance(error) ? error.details.status : undefined;
    if (typeof status !== 'number' || status === 401 || status === 403 || status === 429 || status >= 500) throw error;
    // The provider refused the cancel itself (400, 404, 409): say why, in its words and ours.
    const remote = await service.retrieve(batch.batchId).catch(() => undefined);
    if (remote?.finished) {
      ledger.update(batch.localId, { status: remote.status });
      throw cancelRefused(`batch ${batch.batchId} has already ended (${remote.status}): there is nothing to cancel`, batch.batchId);
    }
    throw cancelRefused(`the provider refused to cancel batch ${batch.batchId}: ${(error as Error).message}`, batch.batchId);
  }
}

async function runBatches(flags: BatchesFlags, context: CommandContext): Promise<number> {
  const cache = flags.cache ?? defaultCachePath();
  for (const id of flags.cancel ?? []) {
    if (!batchIdPattern.test(id)) throw cancelRefused(`--cancel takes a batch id (letters, digits, _ . : -), got ${shownId(id)}`, shownId(id));
  }
  const prices = flags.prices ? loadPriceTable(flags.prices) : defaultPrices;
  // A cache that does not exist holds no batch: nothing to list, nothing to cancel, and no file is made for it.
  if (!existsSync(cache)) {
    const [first] = flags.cancel ?? [];
    if (first !== undefined) throw cancelRefused(`no submitted batch ${shownId(first)}: there is no cache at ${cache}`, first);
    printRows([], flags, context);
    return exitCodes.success;
  }
  checkInputs([{ flag: 'cache', path: cache }]);
  const ledger = new BatchLedger(cache);
  try {
    // Each batch is asked through its own provider's API (the ledger names it).
    const services = new Map<string, BatchService>();
    const serviceOf = (provider: string) => {
      let service = services.get(provider);
      if (!service) {
        // The model behind a batch does not matter to its Batch API: the provider's endpoint and key do.
        const model = { model: `${provider}:batch`, endpoint: { baseUrl: flags.judgeBaseUrl }, ...(flags.azureApiVersion ? { openai: { azureApiVersion: flags.azureApiVersion } } : {}) };
        services.set(provider, (service = batchServiceFor(provider, model, { apiKey: flags.judgeApiKey })));
      }
      return service;
    };
    // Every id is checked against the ledger before the first cancel is sent.
    const toCancel = (flags.cancel ?? []).map((id) => {
      const batch = ledger.get(id);
      if (!batch?.batchId) throw cancelRefused(`no submitted batch ${shownId(id)} in ${cache}`, id);
      if (finalStatuses.has(batch.status)) throw cancelRefused(`batch ${batch.batchId} has already ended (${batch.status}): there is nothing to cancel`, batch.batchId);
      return { ...batch, batchId: batch.batchId };
    });
    for (const batch of toCancel) {
      const status = await cancelBatch(batch, serviceOf(batch.provider), ledger);
      context.stderr(`batch ${batch.batchId}: ${status}`);
    }
    if (flags.refresh) {
      for (const batch of ledger.all()) {
        if (!batch.batchId || finalStatuses.has(batch.status)) continue;
        const remote = await serviceOf(batch.provider).retrieve(batch.batchId);
        ledger.update(batch.localId, { status: remote.status });
      }
    }
    printRows(
      ledger.all().map((batch) => describe(batch, prices)),
      flags,
      context,
    );
    return exitCodes.success;
  } finally {
    ledger.close();
  }
}

function printRows(rows: Array<ReturnType<typeof describe>>, flags: BatchesFlags, context: CommandContext): void {
  if (flags.json) {
    for (const row of rows) context.stdout(JSON.stringify(row));
    return;
  }
  context.stdout(['batch', 'status', 'model', 'requests', 'answered', 'failed', 'cost_usd'].join('\t'));
  for (const row of rows) context.stdout([row.batch_id ?? row.local_id, row.status, row.model, row.requests, row.answered, row.failed, row.cost_usd ?? 'n/a'].join('\t'));
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
    role: batch.role,
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
