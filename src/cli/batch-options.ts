/**
 * `--batch`: the judge's calls go through the provider's Batch API (half price, answered
 * within 24 hours). The ledger of submitted batches lives in the reply cache's SQLite file
 * (beside the output with a Redis store), so a rerun of the same command attaches to the
 * batches in flight.
 */
import { Option, type Command } from 'commander';
import { createBatchJudge, type BatchEvent, type BatchJudge, type BodyBuildingJudge } from '../batch/batch-judge.js';
import { BatchLedger } from '../batch/ledger.js';
import { batchServiceFor } from '../batch/services.js';
import { RubricateError } from '../errors.js';
import type { Judge } from '../judges/types.js';
import { defaultCachePath, isRedisUrl, storeSpecFrom } from '../store/index.js';
import { parseNumber, parsePositiveInteger, type JudgeFlags } from './judge-options.js';
import type { StoreFlags } from './store-options.js';

export interface BatchFlags {
  batch?: boolean;
  batchFallback?: 'batch' | 'sync';
  batchPoll?: number;
  batchMaxEnqueuedTokens?: number;
  batchLedger?: string;
}

export function addBatchOptions(command: Command): Command {
  return command
    .option('--batch', "send the judge calls through the provider's Batch API (OpenAI, Azure OpenAI, Anthropic: 50% price, answers within 24 h); rerun the same command to attach to batches in flight")
    .addOption(new Option('--batch-fallback <how>', 'requests a batch left unanswered (expired, cancelled, errored): in a new batch, or synchronously').choices(['batch', 'sync']).default('batch'))
    .option('--batch-poll <seconds>', 'seconds between batch status checks', parseNumber('batch-poll', 0.001), 30)
    .option('--batch-max-enqueued-tokens <n>', "input tokens all open batches may hold at once (your provider's enqueued-token limit for the model); a batch that would go over waits for earlier ones", parsePositiveInteger('batch-max-enqueued-tokens'))
    .option('--batch-ledger <file>', 'SQLite file of the batch ledger (default: the SQLite cache; with a Redis --store, OUT.batches.sqlite)');
}

/** Where the batch ledger lives: the SQLite file of the reply store (the cache, or the run journal with --no-cache); beside the output with a Redis store. */
export function ledgerPathFor(flags: StoreFlags & Pick<BatchFlags, 'batchLedger'>, outputPath: string): string {
  if (flags.batchLedger) return flags.batchLedger;
  const spec = storeSpecFrom(flags.store);
  if (flags.cache === false) return `${outputPath}.journal.sqlite`;
  // Replies go to Redis as they are read; the ledger only has to outlive this process, on this machine.
  if (spec !== undefined && isRedisUrl(spec)) return `${outputPath}.batches.sqlite`;
  const path = typeof flags.cache === 'string' ? flags.cache : (spec ?? defaultCachePath());
  return path.startsWith('sqlite:') ? path.slice('sqlite:'.length) : path;
}

export interface BatchedJudges {
  judges: Judge[];
  batchJudge: BatchJudge;
  ledger: BatchLedger;
}

/** Wraps the one OpenAI, Azure or Anthropic judge for its provider's Batch API. */
export function batchJudgesFrom(
  judges: Judge[],
  flags: BatchFlags & JudgeFlags & StoreFlags,
  outputPath: string,
  onEvent: (event: BatchEvent) => void,
): BatchedJudges {
  const spec = flags.judge?.[0] ?? '';
  const provider = /^(openai|azure|anthropic):/.exec(spec)?.[1];
  if (judges.length !== 1 || !provider || typeof (judges[0] as Partial<BodyBuildingJudge>).requestBody !== 'function') {
    throw new RubricateError('CONFIG_INVALID', '--batch needs one openai:MODEL, azure:DEPLOYMENT or anthropic:MODEL judge (their Batch APIs); juries and other judges are not supported', { field: 'batch' });
  }
  if (flags.judgeTransport === 'sdk') throw new RubricateError('CONFIG_INVALID', '--batch sends its own HTTP requests; leave out --judge-transport sdk', { field: 'batch' });
  const service = batchServiceFor(provider, flags);
  const ledger = new BatchLedger(ledgerPathFor(flags, outputPath));
  const batchJudge = createBatchJudge({
    inner: judges[0] as BodyBuildingJudge,
    service,
    ledger,
    fallback: flags.batchFallback ?? 'batch',
    pollIntervalMs: Math.round((flags.batchPoll ?? 30) * 1000),
    maxEnqueuedTokens: flags.batchMaxEnqueuedTokens,
    onEvent,
  });
  return { judges: [batchJudge], batchJudge, ledger };
}

/** One line on stderr per batch event a user wants to see. */
export function describeBatchEvent(event: BatchEvent): string | undefined {
  switch (event.type) {
    case 'submitted':
      return `batch ${event.batchId}: submitted ${event.requests} request(s)`;
    case 'attached':
      return `batch ${event.batchId ?? event.localId}: attached to ${event.requests} request(s) submitted by an earlier run`;
    case 'finished':
      return `batch ${event.batchId}: ${event.status}, ${event.answered} answered, ${event.failed} failed`;
    case 'waiting':
      return `batch ${event.localId}: waits for queue room (${event.enqueuedTokens} tokens enqueued, this batch ${event.batchTokens})`;
    case 'warning':
      return `warning: ${event.message}`;
    default:
      return undefined;
  }
}
