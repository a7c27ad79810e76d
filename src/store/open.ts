/** Chooses the reply store from a spec: a `redis://`/`rediss://` URL, or a SQLite file path. */
import { RedisReplyStore } from './redis.js';
import { isRedisUrl } from './redis-connection.js';
import { SqliteReplyStore, type SqliteReplyStoreOptions } from './sqlite.js';
import type { ReplyStoreOptions, TransferableReplyStore } from './types.js';

/** The store named by `--store`, else by RUBRICATE_STORE; undefined means the SQLite default. */
export function storeSpecFrom(flag: string | undefined, environment: NodeJS.ProcessEnv = process.env): string | undefined {
  const spec = flag ?? environment.RUBRICATE_STORE;
  return spec === undefined || spec.trim() === '' ? undefined : spec.trim();
}

/**
 * The reply store a spec names: a `redis://` URL, or a SQLite file.
 *
 * @example
 * ```ts
 * import { openReplyStore } from 'rubricate/store';
 * const store = openReplyStore(process.env.RUBRICATE_STORE ?? 'cache.sqlite');
 * await store.close();
 * ```
 */
export function openReplyStore(spec: string, options: ReplyStoreOptions & Pick<SqliteReplyStoreOptions, 'onWarning' | 'recentReplies'> = {}): TransferableReplyStore {
  if (isRedisUrl(spec)) return new RedisReplyStore(spec, { ttlMs: options.ttlMs });
  return new SqliteReplyStore(spec.startsWith('sqlite:') ? spec.slice('sqlite:'.length) : spec, options);
}
