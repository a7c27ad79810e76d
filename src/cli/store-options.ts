/**
 * Store flags shared by every command that calls a judge: where replies are cached
 * (`--cache FILE`, `--no-cache`, or a shared `--store redis://…`), their TTL, and the
 * fleet-wide limits per judge endpoint that a shared store makes possible.
 */
import { existsSync, rmSync } from 'node:fs';
import type { Command } from 'commander';
import { RubricateError } from '../errors.js';
import type { Judge } from '../judges/types.js';
import { defaultCachePath, isRedisUrl, openReplyStore, RedisReplyStore, SqliteReplyStore, storeSpecFrom, type ReplyStore } from '../store/index.js';

export interface StoreFlags {
  cache?: string | false;
  /** redis://… or rediss://… (else RUBRICATE_STORE). */
  store?: string;
  /** Seconds after which a stored reply counts as absent. */
  cacheTtl?: number;
  /** Judge calls in flight across every process sharing the store. */
  globalConcurrency?: number;
  /** `RPM` or `RPM,TPM`, across every process sharing the store. */
  rateLimit?: { requestsPerMinute?: number; tokensPerMinute?: number };
  /** Seconds a crashed process's calls may hold their fleet slots. */
  lease?: number;
}

function parseRateLimit(value: string): { requestsPerMinute?: number; tokensPerMinute?: number } {
  const [rpm, tpm, ...rest] = value.split(',').map((part) => part.trim());
  const positive = (text: string | undefined) => text === undefined || text === '' || (Number.isInteger(Number(text)) && Number(text) > 0);
  if (rest.length > 0 || !positive(rpm) || !positive(tpm) || (!rpm && !tpm)) {
    throw new RubricateError('CONFIG_INVALID', `--rate-limit is RPM or RPM,TPM (positive integers; RPM may be empty: ",TPM"), got "${value}"`, { field: 'rate-limit' });
  }
  return { ...(rpm ? { requestsPerMinute: Number(rpm) } : {}), ...(tpm ? { tokensPerMinute: Number(tpm) } : {}) };
}

function parseCount(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1) throw new RubricateError('CONFIG_INVALID', `--${name} must be a positive integer, got "${value}"`, { field: name });
    return number;
  };
}

function parseSeconds(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isFinite(number) || number <= 0) throw new RubricateError('CONFIG_INVALID', `--${name} must be a positive number of seconds, got "${value}"`, { field: name });
    return number;
  };
}

export function addStoreOptions(command: Command): Command {
  return command
    .option('--store <url>', 'shared store for cached replies, fleet limits and evolving rubrics: redis://[user:password@]host:port[/db] or rediss://… for TLS (default: RUBRICATE_STORE, else the SQLite cache)')
    .option('--cache-ttl <seconds>', 'treat stored replies older than this as absent', parseSeconds('cache-ttl'))
    .option('--global-concurrency <n>', 'judge calls in flight per endpoint across every process sharing the Redis --store', parseCount('global-concurrency'))
    .option('--rate-limit <rpm[,tpm]>', 'requests (and tokens) per minute per endpoint across every process sharing the Redis --store', parseRateLimit)
    .option('--lease <seconds>', "with fleet limits: how long a crashed process's calls keep their slots", parseSeconds('lease'), 10);
}

export interface OpenedStore {
  store: ReplyStore | undefined;
  /** Called after a successful run: removes a run-only journal. */
  finish(): void;
  close(): void | Promise<void>;
}

function printWarning(message: string): void {
  process.stderr.write(`rubricate: warning: ${message}\n`);
}

/**
 * The reply store: the shared cache by default (a SQLite file, or Redis with --store); with
 * --no-cache, a journal beside the output that only a rerun of the same command reads,
 * deleted once the run completes. A Redis store is connected before anything runs, so a
 * wrong URL or password stops the command at once with a clear error.
 */
export async function openStore(flags: StoreFlags, outputPath: string | undefined, options: { failFast?: boolean } = {}): Promise<OpenedStore> {
  const ttlMs = flags.cacheTtl === undefined ? undefined : flags.cacheTtl * 1000;
  const spec = storeSpecFrom(flags.store);
  if (flags.cache === false) {
    if (!outputPath) return { store: undefined, finish() {}, close() {} };
    const journalPath = `${outputPath}.journal.sqlite`;
    const store = new SqliteReplyStore(journalPath, { onWarning: printWarning });
    return {
      store,
      finish() {
        store.close();
        for (const suffix of ['', '-wal', '-shm']) {
          if (existsSync(journalPath + suffix)) rmSync(journalPath + suffix, { force: true });
        }
      },
      close: () => store.close(),
    };
  }
  if (spec !== undefined && isRedisUrl(spec)) {
    if (typeof flags.cache === 'string') throw new RubricateError('CONFIG_INVALID', '--cache FILE and a Redis --store are two different caches: give one of them', { field: 'cache' });
    const store = new RedisReplyStore(spec, { ttlMs, claimLeaseMs: (flags.lease ?? 10) * 1000, whenDisconnected: options.failFast ? 'fail' : 'wait' });
    try {
      await store.connection.ready();
    } catch (error) {
      await store.close();
      throw error;
    }
    return { store, finish() {}, close: () => store.close() };
  }
  const path = typeof flags.cache === 'string' ? flags.cache : (spec ?? defaultCachePath());
  const store = openReplyStore(path, { ttlMs, onWarning: printWarning });
  return { store, finish() {}, close: () => store.close() };
}

/** Wraps the judges with the fleet-wide limits asked for (they need a Redis store). */
export async function applyFleetLimitsFrom(judges: Judge[], flags: StoreFlags): Promise<Judge[]> {
  // The fleet code and its Redis clients load only when a limit is asked for: every command start pays for them otherwise.
  if (flags.globalConcurrency === undefined && flags.rateLimit === undefined) return judges;
  const { applyFleetLimits } = await import('../fleet/limited-judge.js');
  const spec = storeSpecFrom(flags.store);
  return applyFleetLimits(judges, spec !== undefined && isRedisUrl(spec) ? spec : undefined, {
    globalConcurrency: flags.globalConcurrency,
    requestsPerMinute: flags.rateLimit?.requestsPerMinute,
    tokensPerMinute: flags.rateLimit?.tokensPerMinute,
    leaseMs: (flags.lease ?? 10) * 1000,
  });
}

/** The cache files a run reads and writes (--cache, or a --store that is a file): no output may replace them. */
export function storeFilesOf(flags: StoreFlags): Array<{ flag: string; path: string | undefined }> {
  const spec = storeSpecFrom(flags.store);
  return [
    { flag: 'cache', path: typeof flags.cache === 'string' ? flags.cache : undefined },
    { flag: 'store', path: spec !== undefined && !isRedisUrl(spec) ? spec : undefined },
  ];
}
