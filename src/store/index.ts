export { isPromise, settle, sharesInFlight, type SharedInFlight, type MaybePromise, type ReplyStore, type ReplyStoreOptions, type TransferableReplyStore } from './types.js';
export { SqliteReplyStore, defaultCacheDirectory, defaultCachePath, type SqliteReplyStoreOptions } from './sqlite.js';
export { RedisReplyStore, replyKeyPrefix, type RedisReplyStoreOptions } from './redis.js';
export { RedisConnection, describeRedisUrl, isRedisUrl, redisOptionsFromUrl, type RedisHealth } from './redis-connection.js';
export { openReplyStore, storeSpecFrom } from './open.js';
export { asJudgeReply, readStoredReply } from './reply-shape.js';
