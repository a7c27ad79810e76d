/**
 * `--batch`: the judge's calls go through the provider's Batch API (half price, answered
 * within 24 hours). The ledger of submitted batches lives in the reply cache's SQLite file,
 * so a rerun of the same command attaches to the batches in flight.
 */
import { Option, type Command } from 'commander';
import { createBatchJudge, type BatchEvent, type BatchJudge, type BodyBuildingJudge } from '../batch/batch-judge.js';
import { BatchLedger } from '../batch/ledger.js';
import { OpenAIBatchApi } from '../batch/openai-batch-api.js';
import { RubricateError } from '../errors.js';
import type { Judge } from '../judges/types.js';
import { defaultCachePath, isRedisUrl, storeSpecFrom } from '../store/index.js';
import { parseNumber, type JudgeFlags } from './judge-options.js';
import type { StoreFlags } from './store-options.js';

export interface BatchFlags {
  batch?: boolean;
  batchFallback?: 'batch' | 'sync';
  batchPoll?: number;
}

const defaultOpenAIBaseUrl = 'https://api.openai.com/v1';

export function addBatchOptions(command: Command): Command {
  return command
    .option('--batch', "send the judge calls through the provider's Batch API (OpenAI: 50% price, answers within 24 h); rerun the same command to attach to batches in flight")
    .addOption(new Option('--batch-fallback <how>', 'requests a batch left unanswered (expired, cancelled, errored): in a new batch, or synchronously').choices(['batch', 'sync']).default('batch'))
    .option('--batch-poll <seconds>', 'seconds between batch status checks', parseNumber('batch-poll', 0.001), 30);
}

/** Where the batch ledger lives: the SQLite file of the reply store (the cache, or the run journal with --no-cache). */
export function ledgerPathFor(flags: StoreFlags, outputPath: string): string {
  const spec = storeSpecFrom(flags.store);
  if (flags.cache === false) return `${outputPath}.journal.sqlite`;
  if (spec !== undefined && isRedisUrl(spec)) {
    throw new RubricateError('CONFIG_INVALID', '--batch keeps its ledger in a SQLite cache; it does not work with a Redis --store yet', { field: 'batch' });
  }
  const path = typeof flags.cache === 'string' ? flags.cache : (spec ?? defaultCachePath());
  return path.startsWith('sqlite:') ? path.slice('sqlite:'.length) : path;
}

export interface BatchedJudges {
  judges: Judge[];
  batchJudge: BatchJudge;
  ledger: BatchLedger;
}

/** Wraps the one OpenAI judge for the Batch API. */
export function batchJudgesFrom(
  judges: Judge[],
  flags: BatchFlags & JudgeFlags & StoreFlags,
  outputPath: string,
  onEvent: (event: BatchEvent) => void,
): BatchedJudges {
  const spec = flags.judge?.[0] ?? '';
  if (judges.length !== 1 || !spec.startsWith('openai:') || typeof (judges[0] as Partial<BodyBuildingJudge>).requestBody !== 'function') {
    throw new RubricateError('CONFIG_INVALID', '--batch needs one openai:MODEL judge (the OpenAI Batch API); Anthropic and Azure batches are not supported yet', { field: 'batch' });
  }
  if (flags.judgeTransport === 'sdk') throw new RubricateError('CONFIG_INVALID', '--batch sends its own HTTP requests; leave out --judge-transport sdk', { field: 'batch' });
  const api = new OpenAIBatchApi({
    baseUrl: flags.judgeBaseUrl ?? process.env.OPENAI_BASE_URL ?? defaultOpenAIBaseUrl,
    apiKey: flags.judgeApiKey ?? process.env.OPENAI_API_KEY,
    headers: flags.judgeHeader,
  });
  const ledger = new BatchLedger(ledgerPathFor(flags, outputPath));
  const batchJudge = createBatchJudge({
    inner: judges[0] as BodyBuildingJudge,
    api,
    ledger,
    fallback: flags.batchFallback ?? 'batch',
    pollIntervalMs: Math.round((flags.batchPoll ?? 30) * 1000),
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
    case 'warning':
      return `warning: ${event.message}`;
    default:
      return undefined;
  }
}
