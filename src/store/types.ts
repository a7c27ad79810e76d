/**
 * The store interface behind the reply cache and the run journal. Two implementations:
 * SQLite (embedded, the default) and Redis/Valkey (shared by a fleet). Both keep the same
 * promises: a reply is stored before its verdict is used, a damaged entry reads as absent,
 * entries may expire after a TTL, and keys are the same bytes on both (so a cache can be
 * moved between them).
 *
 * Embedded stores answer synchronously (a cache hit costs no event-loop turn); network
 * stores answer with a promise. Callers await only when they get a promise (`settle`).
 */
import type { JudgeReply } from '../judges/types.js';

export type MaybePromise<T> = T | Promise<T>;

export interface ReplyStore {
  /** The stored reply, or undefined when absent, expired or damaged. Rejects (STORE_BUSY, STORE_UNAVAILABLE) when the store cannot answer. */
  get(key: string): MaybePromise<JudgeReply | undefined>;
  /** Resolves once the reply is durable (a later get, in any process sharing the store, reads it). */
  put(key: string, reply: JudgeReply): MaybePromise<void>;
  close(): MaybePromise<void>;
}

/**
 * A store shared by several processes can also share the in-flight dedupe: the first
 * process to claim a key makes the call; the others wait for its reply to be stored.
 */
export interface SharedInFlight {
  /** True when this process now owns the call for `key` (until `release`, or until its process dies and the lease runs out). */
  claim(key: string): Promise<boolean>;
  /** The reply once the owner stores it; undefined when the owner gave up or vanished (then claim again). */
  awaitReply(key: string, signal?: AbortSignal): Promise<JudgeReply | undefined>;
  release(key: string): Promise<void>;
}

export function sharesInFlight(store: ReplyStore | undefined): store is ReplyStore & SharedInFlight {
  return typeof (store as Partial<SharedInFlight> | undefined)?.claim === 'function';
}

/** A store whose entries can be listed and written in bulk (`rubricate cache export|import`). */
export interface TransferableReplyStore extends ReplyStore {
  entries(): AsyncIterable<[string, JudgeReply]>;
  putMany(entries: Iterable<[string, JudgeReply]>): MaybePromise<void>;
}

export interface ReplyStoreOptions {
  /** Entries older than this are treated as absent (and, on Redis, expire). */
  ttlMs?: number;
}

export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}
