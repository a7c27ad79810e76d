/**
 * `--batch`: a command's model calls (the judge's; on `generate` and `refine` the generator's
 * too, on `eval` the model under test's) go through their providers' Batch APIs (half price,
 * answered within 24 hours). The ledger of submitted batches lives in the reply cache's SQLite
 * file (beside the output with a Redis store), so a rerun of the same command attaches to the
 * batches in flight.
 */
import { Option, type Command } from 'commander';
import { createBatchJudge, type BatchEvent, type BatchJudge, type BodyBuildingJudge } from '../batch/batch-judge.js';
import { BatchLedger } from '../batch/ledger.js';
import { batchServiceFor } from '../batch/services.js';
import { RubricateError } from '../errors.js';
import type { Judge } from '../judges/types.js';
import { defaultCachePath, isRedisUrl, storeSpecFrom } from '../store/index.js';
import { parseNumber, parsePositiveInteger } from './run-spec-flags.js';
import type { Credentials, ModelSpec } from '../spec/run-spec.js';
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
    .option('--batch', "send every model call (the judge's; the generator's too on generate and refine, the model under test's on eval) through its provider's Batch API (OpenAI, Azure OpenAI, Anthropic: 50% price, answers within 24 h); rerun the same command to attach to batches in flight")
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

/** A model a command calls, as `--batch` wraps it: its role, its spec and its key. */
export interface BatchedModel {
  /** `judge`, `generator` or `model` (eval's model under test): the ledger keeps it, and messages name its flag (`--judge`, `--generator`, `--model`). */
  role: 'judge' | 'generator' | 'model';
  model: ModelSpec;
  credentials: Credentials;
}

/** The judge of a command (`--judge`, `--judge-base-url`, …). */
export function judgeModelOf(model: ModelSpec, credentials: Credentials): BatchedModel {
  return { role: 'judge', model, credentials };
}

/** Every call waits in a batch: the engine hands over all it has (the window bounds memory) and waits up to the 24 h window. */
export const batchEngineOptions = { concurrency: 50_000, timeoutMs: 7 * 24 * 3600 * 1000 } as const;

/** One ledger for a run, and the models of the run wrapped for their providers' Batch APIs. */
export interface Batching {
  readonly ledger: BatchLedger;
  /** Wraps one OpenAI, Azure or Anthropic model; anything else is CONFIG_INVALID. */
  wrap(judge: Judge, model: BatchedModel): BatchJudge;
  /** Marks the finished batches of every wrapped model delivered (after a run that completed). */
  finish(): void;
  /** Closes the ledger; the wrapped judges are closed by whoever holds them. */
  close(): void;
}

export function openBatching(flags: BatchFlags & StoreFlags, outputPath: string, onEvent: (event: BatchEvent) => void): Batching {
  // Opened with the first model wrapped: a refused configuration leaves no ledger file behind.
  let ledger: BatchLedger | undefined;
  const ledgerOf = () => (ledger ??= new BatchLedger(ledgerPathFor(flags, outputPath)));
  const wrapped: BatchJudge[] = [];
  return {
    get ledger() {
      return ledgerOf();
    },
    wrap(judge, { role, model, credentials }) {
      const spec = model.model ?? judge.provenance.id;
      const provider = /^(openai|azure|anthropic):/.exec(spec)?.[1];
      if (!provider || typeof (judge as Partial<BodyBuildingJudge>).requestBody !== 'function') {
        throw new RubricateError('CONFIG_INVALID', `--batch sends every model call through a Batch API: --${role} must be openai:MODEL, azure:DEPLOYMENT or anthropic:MODEL${spec ? `, not ${spec}` : ''}`, { field: 'batch' });
      }
      if (model.openai?.transport === 'sdk') throw new RubricateError('CONFIG_INVALID', `--batch sends its own HTTP requests; leave out --${role}-transport sdk`, { field: 'batch' });
      const service = batchServiceFor(provider, model, credentials);
      const batchJudge = createBatchJudge({
        inner: judge as BodyBuildingJudge,
        service,
        ledger: ledgerOf(),
        role,
        fallback: flags.batchFallback ?? 'batch',
        pollIntervalMs: Math.round((flags.batchPoll ?? 30) * 1000),
        maxEnqueuedTokens: flags.batchMaxEnqueuedTokens,
        onEvent,
      });
      wrapped.push(batchJudge);
      return batchJudge;
    },
    finish() {
      for (const batchJudge of wrapped) batchJudge.finish();
    },
    close() {
      ledger?.close();
    },
  };
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
