/** Opens the evolver's state store; apart from `evolver-state.ts` (the contract), which both implementations import. */
import type { EvolverStateStore } from './evolver-state.js';
import { RedisEvolverStateStore } from './evolver-state-redis.js';
import { SqliteEvolverStateStore } from './evolver-state-sqlite.js';
import { isRedisUrl } from './redis-connection.js';

/** The evolver's store from a spec: a `redis://`/`rediss://` URL, or a SQLite file path (`:memory:` for a throwaway one). `failFast`: Redis commands fail at once while it is away (a server's 503) instead of waiting for it. */
export function openEvolverStateStore(spec: string, options: { failFast?: boolean } = {}): EvolverStateStore {
  return isRedisUrl(spec) ? new RedisEvolverStateStore(spec, options) : new SqliteEvolverStateStore(spec);
}
