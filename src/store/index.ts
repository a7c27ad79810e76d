export { type ReplyStore, type TransferableReplyStore } from './types.js';
export { SqliteReplyStore, defaultCachePath } from './sqlite.js';
export { RedisReplyStore } from './redis.js';
export { isRedisUrl } from './redis-connection.js';
export { openReplyStore, storeSpecFrom } from './open.js';
export { batchRecentReplies } from './memory.js';
