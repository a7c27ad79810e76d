/**
 * Connections to Redis or Valkey from a `redis://` or `rediss://` URL (TLS, user and
 * password, database number), shared by the reply store, the fleet limits, the evolving
 * rubrics and the grading queue. A lost connection is retried with backoff; commands wait
 * meanwhile, up to a bound, then fail with STORE_UNAVAILABLE. Credentials never appear
 * in a message: `describeRedisUrl` is what is shown.
 */
import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';
import { RubricateError } from '../errors.js';
import { noteDroppedRedisConnection } from './dropped-connections.js';

/** ioredis loads with the first connection: commands that never reach Redis do not pay for it at start-up. */
const loadRedis = (): typeof Redis => (createRequire(import.meta.url)('ioredis') as typeof import('ioredis')).Redis;

export function isRedisUrl(spec: string | undefined): boolean {
  return typeof spec === 'string' && /^rediss?:\/\//i.test(spec);
}

/** `redis://host:port/db` without user, password or query. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname.length > 1 ? parsed.pathname : ''}`;
  } catch {
    return 'redis://(unparseable URL)';
  }
}

export interface RedisConnectionOptions {
  /** Attempts a command waits through a lost connection before it fails (default 20, about 30 s). Null: wait for ever (BullMQ's blocking connections). */
  maxRetriesPerRequest?: number | null;
  /** Names the connection in CLIENT LIST, for operators. */
  connectionName?: string;
  /** Commands fail at once while disconnected instead of waiting for the reconnection. */
  failWhileDisconnected?: boolean;
  /** What the Redis is to the user, in messages and the error's field (default: the store). */
  role?: 'store' | 'queue';
}

export function redisOptionsFromUrl(url: string, options: RedisConnectionOptions = {}): RedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RubricateError('CONFIG_INVALID', `not a Redis URL: ${describeRedisUrl(url)}`, { field: 'store' });
  }
  const secure = parsed.protocol === 'rediss:';
  if (!secure && parsed.protocol !== 'redis:') throw new RubricateError('CONFIG_INVALID', `a Redis URL starts with redis:// or rediss:// (got ${parsed.protocol})`, { field: 'store' });
  const database = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isInteger(database) || database < 0) throw new RubricateError('CONFIG_INVALID', `the Redis database in ${describeRedisUrl(url)} must be a number`, { field: 'store' });
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 6379,
    db: database,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(secure ? { tls: { servername: parsed.hostname } } : {}),
    connectionName: options.connectionName ?? 'rubricate',
    maxRetriesPerRequest: options.maxRetriesPerRequest === undefined ? 20 : options.maxRetriesPerRequest,
    // Reconnect quickly at first, then every 2 s: a restarted Redis is back within a few seconds.
    retryStrategy: (times) => Math.min(100 * times, 2_000),
    connectTimeout: 5_000,
    // Until the first connection, commands always wait (start-up checks `ready()` with its own bound).
    enableOfflineQueue: true,
    lazyConnect: false,
  };
}

export interface RedisHealth {
  status: 'ok' | 'unavailable';
  /** Why, without credentials. */
  reason?: string;
}

/** One client with an error listener (an unheard 'error' event would end the process) and a health view. */
export class RedisConnection {
  readonly client: Redis;
  readonly description: string;
  private lastError: string | undefined;
  private readonly role: 'store' | 'queue';

  constructor(url: string, options: RedisConnectionOptions = {}) {
    this.description = describeRedisUrl(url);
    this.role = options.role ?? 'store';
    this.client = new (loadRedis())(redisOptionsFromUrl(url, options));
    this.client.on('error', (error: Error) => {
      this.lastError = error.message;
    });
    this.client.on('ready', () => {
      this.lastError = undefined;
      // A server must answer 503 at once while its store is away, not hold requests for the reconnection.
      if (options.failWhileDisconnected) this.client.options.enableOfflineQueue = false;
    });
  }

  health(): RedisHealth {
    if (this.client.status === 'ready') return { status: 'ok' };
    return { status: 'unavailable', reason: `${this.description} is ${this.client.status}${this.lastError ? ` (${this.lastError})` : ''}` };
  }

  /** Waits for the first connection, failing clearly when Redis cannot be reached. */
  async ready(timeoutMs = 5_000): Promise<void> {
    if (this.client.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(this.unavailable(`could not connect within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      const onReady = () => {
        cleanup();
        resolve();
      };
      const onEnd = () => {
        cleanup();
        reject(this.unavailable('the connection was closed'));
      };
      const cleanup = () => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        this.client.off('end', onEnd);
      };
      this.client.on('ready', onReady);
      this.client.on('end', onEnd);
    });
  }

  unavailable(reason: string, cause?: unknown): RubricateError {
    return new RubricateError('STORE_UNAVAILABLE', `the ${this.role} at ${this.description} is unavailable: ${reason}${this.lastError && !reason.includes(this.lastError) ? ` (${this.lastError})` : ''}`, { field: this.role }, { cause });
  }

  async close(): Promise<void> {
    if (this.client.status === 'end') return;
    // QUIT waits in the offline queue for a connection that may never come (a server that
    // accepts and never answers): without one, the connection is simply dropped.
    if (this.client.status !== 'ready') {
      noteDroppedRedisConnection();
      this.client.disconnect();
      return;
    }
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}
