/** Moved to `src/store/`; kept so code written against the old path still compiles. */
export { SqliteReplyStore, defaultCacheDirectory, defaultCachePath, type ReplyStore } from '../store/index.js';
