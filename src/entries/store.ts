/**
 * `rubricate/store`: where judge replies are kept (cache and resume). SQLite on one machine,
 * Redis for a fleet. Kept out of the root entry so importing `rubricate` never loads SQLite.
 */
export { SqliteReplyStore, defaultCachePath, type SqliteReplyStoreOptions } from '../store/sqlite.js';
export { RedisReplyStore, type RedisReplyStoreOptions } from '../store/redis.js';
export { openReplyStore } from '../store/open.js';
export type { ReplyStore } from '../store/types.js';
