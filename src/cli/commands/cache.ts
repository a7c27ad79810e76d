import type { Command } from 'commander';
import { RubricateError, exitCodes } from '../../errors.js';
import { defaultCachePath, isRedisUrl, RedisReplyStore, SqliteReplyStore, storeSpecFrom, type TransferableReplyStore } from '../../store/index.js';
import type { CommandContext } from '../context.js';
import { checkInputs } from '../../util/files.js';

interface CacheFlags {
  cache?: string;
  store?: string;
}

/**
 * `rubricate cache export|import`: moves replies between the local SQLite cache and a shared
 * Redis/Valkey store. Keys are the same request hashes on both, so a moved reply is found
 * by the same call on the other side.
 */
export function registerCacheCommand(program: Command, context: CommandContext): void {
  const cache = program.command('cache').description('move cached judge replies between the SQLite cache and a shared Redis/Valkey store');
  const options = (command: Command) =>
    command
      .option('--cache <file>', 'the SQLite cache (default: the user cache directory)')
      .option('--store <url>', 'the Redis/Valkey store, redis://… or rediss://… (default: RUBRICATE_STORE)');
  options(cache.command('export').description('copy every reply of the SQLite cache into the store')).action(async (flags: CacheFlags) => {
    context.exitCode = await transfer(flags, 'export', context);
  });
  options(cache.command('import').description('copy every reply of the store into the SQLite cache')).action(async (flags: CacheFlags) => {
    context.exitCode = await transfer(flags, 'import', context);
  });
}

async function transfer(flags: CacheFlags, direction: 'export' | 'import', context: CommandContext): Promise<number> {
  const spec = storeSpecFrom(flags.store);
  if (spec === undefined || !isRedisUrl(spec)) {
    throw new RubricateError('CONFIG_INVALID', `cache ${direction} needs a Redis store: --store redis://host:port (or RUBRICATE_STORE)`, { field: 'store' });
  }
  const cachePath = flags.cache ?? defaultCachePath();
  // Exporting reads the cache: a missing one is an error, never an empty file made to read from.
  if (direction === 'export') checkInputs([{ flag: 'cache', path: cachePath }]);
  const sqlite = new SqliteReplyStore(cachePath);
  const redis = new RedisReplyStore(spec);
  try {
    await redis.connection.ready();
    const [from, to]: [TransferableReplyStore, TransferableReplyStore] = direction === 'export' ? [sqlite, redis] : [redis, sqlite];
    let moved = 0;
    let batch: Array<[string, Awaited<ReturnType<TransferableReplyStore['get']>> & object]> = [];
    for await (const entry of from.entries()) {
      batch.push(entry);
      if (batch.length >= 1000) {
        await to.putMany(batch);
        moved += batch.length;
        batch = [];
      }
    }
    if (batch.length > 0) await to.putMany(batch);
    moved += batch.length;
    context.stderr(
      direction === 'export'
        ? `exported ${moved} replies from ${sqlite.path} to ${redis.description}`
        : `imported ${moved} replies from ${redis.description} into ${sqlite.path}`,
    );
    return exitCodes.success;
  } finally {
    sqlite.close();
    await redis.close();
  }
}
