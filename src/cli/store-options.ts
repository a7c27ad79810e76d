/**
 * Store flags shared by every command that calls a judge: where replies are cached
 * (`--cache FILE`, `--no-cache`, or a shared `--store redis://…`). Their TTL and the fleet-wide
 * limits a shared store makes possible are run settings (`--cache-ttl`, `--global-concurrency`,
 * `--rate-limit`, `--lease` in `run-spec-flags.ts`).
 */
import { existsSync, rmSync } from 'node:fs';
import type { Command } from 'commander';
import { RubricateError } from '../errors.js';
import type { Judge } from '../judges/types.js';
import type { FleetLimits, RunSpec } from '../spec/run-spec.js';
import { defaultCachePath, isRedisUrl, openReplyStore, RedisReplyStore, SqliteReplyStore, storeSpecFrom, type ReplyStore } from '../store/index.js';

/** Where replies are kept: machine-local, never part of the run spec (a worker uses its own). */
export interface StoreFlags {
  cache?: string | false;
  /** redis://… or rediss://… (else RUBRICATE_STORE). */
  store?: string;
}

export function addStoreOptions(command: Command): Command {
  return command
    .option('--cache <path>', 'reply cache (SQLite) path (default: the user cache directory)')
    .option('--no-cache', 'do not reuse replies from earlier runs (a killed run still resumes)')
    .option('--store <url>', 'shared store for cached replies, fleet limits and evolving rubrics: redis://[user:password@]host:port[/db] or rediss://… for TLS (default: RUBRICATE_STORE, else the SQLite cache)');
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
export async function openStore(flags: StoreFlags, run: Pick<RunSpec, 'cacheTtlMs' | 'fleet'>, outputPath: string | undefined, options: { failFast?: boolean; recentReplies?: number } = {}): Promise<OpenedStore> {
  const ttlMs = run.cacheTtlMs;
  const spec = storeSpecFrom(flags.store);
  if (flags.cache === false) {
    if (!outputPath) return { store: undefined, finish() {}, close() {} };
    const journalPath = `${outputPath}.journal.sqlite`;
    const store = new SqliteReplyStore(journalPath, { onWarning: printWarning, recentReplies: options.recentReplies });
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
    const store = new RedisReplyStore(spec, { ttlMs, claimLeaseMs: run.fleet.leaseMs ?? defaultLeaseMs, whenDisconnected: options.failFast ? 'fail' : 'wait' });
    try {
      await store.connection.ready();
    } catch (error) {
      await store.close();
      throw error;
    }
    return { store, finish() {}, close: () => store.close() };
  }
  const path = typeof flags.cache === 'string' ? flags.cache : (spec ?? defaultCachePath());
  const store = openReplyStore(path, { ttlMs, onWarning: printWarning, recentReplies: options.recentReplies });
  return { store, finish() {}, close: () => store.close() };
}

/** How long a crashed process's calls keep their fleet slots and shared-store claims. */
const defaultLeaseMs = 10_000;

/** Wraps the judges with the fleet-wide limits asked for (they need a Redis store). */
export async function applyFleetLimitsFrom(judges: Judge[], flags: StoreFlags, fleet: FleetLimits): Promise<Judge[]> {
  // The fleet code and its Redis clients load only when a limit is asked for: every command start pays for them otherwise.
  if (fleet.globalConcurrency === undefined && fleet.requestsPerMinute === undefined && fleet.tokensPerMinute === undefined) return judges;
  const { applyFleetLimits } = await import('../fleet/limited-judge.js');
  const spec = storeSpecFrom(flags.store);
  return applyFleetLimits(judges, spec !== undefined && isRedisUrl(spec) ? spec : undefined, { ...fleet, leaseMs: fleet.leaseMs ?? defaultLeaseMs });
}

/** The cache files a run reads and writes (--cache, or a --store that is a file): no output may replace them. */
export function storeFilesOf(flags: StoreFlags): Array<{ flag: string; path: string | undefined }> {
  const spec = storeSpecFrom(flags.store);
  return [
    { flag: 'cache', path: typeof flags.cache === 'string' ? flags.cache : undefined },
    { flag: 'store', path: spec !== undefined && !isRedisUrl(spec) ? spec : undefined },
  ];
}
