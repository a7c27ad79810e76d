/**
 * The shared reply store on Redis or Valkey: every process pointed at the same server
 * reads every reply any of them stored. Entries are plain strings under
 * `rubricate:reply:<key>` (the key is the same request hash as in SQLite), written with
 * SET before the verdict is used, optionally with an expiry. Recently used replies are
 * also kept in memory (entries never change once written, so this is safe).
 */
import type { JudgeReply } from '../judges/types.js';
import { RecentReplies } from './memory.js';
import { RedisConnection } from './redis-connection.js';
import { readStoredReply } from './reply-shape.js';
import { randomUUID } from 'node:crypto';
import { sleep } from '../util/sleep.js';
import type { ReplyStoreOptions, SharedInFlight, TransferableReplyStore } from './types.js';

export const replyKeyPrefix = 'rubricate:reply:';
const claimKeyPrefix = 'rubricate:inflight:';
/** Deletes a claim only if this process still owns it (a lapsed lease may belong to another by now). */
const releaseScript = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const renewScript = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

export interface RedisReplyStoreOptions extends ReplyStoreOptions {
  /** Prefix of every key (default `rubricate:reply:`), to share one Redis between deployments. */
  keyPrefix?: string;
  /**
   * While Redis is unreachable: `wait` (commands wait for the reconnection, up to a bound: batch
   * runs pause and resume) or `fail` (commands fail at once: a server answers 503 at once).
   */
  whenDisconnected?: 'wait' | 'fail';
  /** How long a claim outlives a process that stopped renewing it (it died): default 10 s. */
  claimLeaseMs?: number;
}

/**
 * Judge replies kept in Redis or Valkey, shared by a fleet of workers and replicas.
 *
 * @example
 * ```ts
 * import { Grader, createJudge } from 'rubricate';
 * import { RedisReplyStore } from 'rubricate/store';
 * const store = new RedisReplyStore('redis://localhost:6379');
 * const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), store });
 * await store.close();
 * ```
 */
export class RedisReplyStore implements TransferableReplyStore, SharedInFlight {
  readonly connection: RedisConnection;
  private readonly prefix: string;
  private readonly ttlMs: number | undefined;
  private readonly memory = new RecentReplies();
  private readonly ownsConnection: boolean;
  /** Identifies this process's claims. */
  private readonly owner = randomUUID();
  private readonly claimLeaseMs: number;
  /** Claims held by this process, renewed while their calls run. */
  private readonly renewals = new Map<string, NodeJS.Timeout>();

  constructor(urlOrConnection: string | RedisConnection, options: RedisReplyStoreOptions = {}) {
    this.ownsConnection = typeof urlOrConnection === 'string';
    this.connection =
      typeof urlOrConnection === 'string'
        ? new RedisConnection(urlOrConnection, { connectionName: 'rubricate-store', ...(options.whenDisconnected === 'fail' ? { failWhileDisconnected: true } : {}) })
        : urlOrConnection;
    this.prefix = options.keyPrefix ?? replyKeyPrefix;
    this.ttlMs = options.ttlMs;
    this.claimLeaseMs = Math.max(500, options.claimLeaseMs ?? 10_000);
  }

  get description(): string {
    return this.connection.description;
  }

  get(key: string): JudgeReply | undefined | Promise<JudgeReply | undefined> {
    return this.memory.get(key) ?? this.fetch(key);
  }

  private async fetch(key: string): Promise<JudgeReply | undefined> {
    let text: string | null;
    try {
      text = await this.connection.client.get(this.prefix + key);
    } catch (error) {
      throw this.connection.unavailable(`reading a stored reply failed: ${(error as Error).message}`, error);
    }
    if (text === null) return undefined;
    // A damaged entry is treated as absent: the call is simply made again.
    const reply = readStoredReply(text);
    if (reply) this.memory.set(key, reply, this.ttlMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + this.ttlMs);
    return reply;
  }

  async put(key: string, reply: JudgeReply): Promise<void> {
    const text = JSON.stringify(reply);
    try {
      if (this.ttlMs === undefined) await this.connection.client.set(this.prefix + key, text);
      else await this.connection.client.set(this.prefix + key, text, 'PX', Math.max(1, Math.round(this.ttlMs)));
    } catch (error) {
      throw this.connection.unavailable(`storing a reply failed: ${(error as Error).message}`, error);
    }
    this.memory.set(key, reply, this.ttlMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + this.ttlMs);
  }

  async putMany(entries: Iterable<[string, JudgeReply]>): Promise<void> {
    let batch = this.connection.client.pipeline();
    let size = 0;
    const run = async () => {
      const results = await batch.exec();
      const failed = results?.find(([error]) => error);
      if (failed) throw this.connection.unavailable(`storing replies failed: ${failed[0]!.message}`, failed[0]);
      batch = this.connection.client.pipeline();
      size = 0;
    };
    for (const [key, reply] of entries) {
      const text = JSON.stringify(reply);
      if (this.ttlMs === undefined) batch.set(this.prefix + key, text);
      else batch.set(this.prefix + key, text, 'PX', Math.max(1, Math.round(this.ttlMs)));
      size += 1;
      if (size >= 500) await run();
    }
    if (size > 0) await run();
  }

  async *entries(): AsyncIterable<[string, JudgeReply]> {
    let cursor = '0';
    do {
      const [next, keys] = await this.connection.client.scan(cursor, 'MATCH', `${escapeGlob(this.prefix)}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length === 0) continue;
      const texts = await this.connection.client.mget(keys);
      for (let index = 0; index < keys.length; index += 1) {
        const text = texts[index];
        const reply = text === null ? undefined : readStoredReply(text);
        if (reply) yield [keys[index].slice(this.prefix.length), reply];
      }
    } while (cursor !== '0');
  }

  /** Claims the call for `key`; the claim is renewed while this process lives, so a dead owner's lapses within the lease. */
  async claim(key: string): Promise<boolean> {
    let claimed: boolean;
    try {
      claimed = (await this.connection.client.set(claimKeyPrefix + key, this.owner, 'PX', this.claimLeaseMs, 'NX')) === 'OK';
    } catch (error) {
      throw this.connection.unavailable(`claiming a call failed: ${(error as Error).message}`, error);
    }
    if (claimed) {
      const timer = setInterval(() => {
        this.connection.client.eval(renewScript, 1, claimKeyPrefix + key, this.owner, this.claimLeaseMs).catch(() => undefined);
      }, Math.round(this.claimLeaseMs / 3));
      timer.unref();
      this.renewals.set(key, timer);
    }
    return claimed;
  }

  async awaitReply(key: string, signal?: AbortSignal): Promise<JudgeReply | undefined> {
    for (let delay = 20; !signal?.aborted; delay = Math.min(500, Math.round(delay * 1.5))) {
      await sleep(delay, signal);
      const reply = await this.get(key);
      if (reply) return reply;
      // The owner released its claim without storing a reply (its call failed), or its lease ran out.
      if ((await this.connection.client.exists(claimKeyPrefix + key)) === 0) return (await this.get(key)) ?? undefined;
    }
    return undefined;
  }

  async release(key: string): Promise<void> {
    clearInterval(this.renewals.get(key));
    this.renewals.delete(key);
    await this.connection.client.eval(releaseScript, 1, claimKeyPrefix + key, this.owner);
  }

  async close(): Promise<void> {
    for (const timer of this.renewals.values()) clearInterval(timer);
    this.renewals.clear();
    if (this.ownsConnection) await this.connection.close();
  }
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

