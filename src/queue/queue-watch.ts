/**
 * How the producer and the workers notice that the queue's Redis is away. BullMQ's own
 * connections wait for ever (`maxRetriesPerRequest: null`, which its blocking commands need),
 * so each side keeps one small connection of its own beside them and pings it. The first
 * connection must come within `queueConnectTimeoutMs`; a lost one must come back (and answer)
 * within the reconnect window (`--queue-timeout`). Otherwise `failed` rejects with
 * STORE_UNAVAILABLE and the caller stops, dropping BullMQ's connections instead of waiting on them.
 */
import type { RubricateError } from '../errors.js';
import { RedisConnection } from '../store/redis-connection.js';
import { noteDroppedRedisConnection } from '../store/dropped-connections.js';

/** The first connection, as for every Redis `--store`. */
export const queueConnectTimeoutMs = 5_000;
/** How long a lost queue may take to come back before the run stops (`--queue-timeout`). */
export const defaultQueueReconnectWindowMs = 30_000;
const heartbeatMs = 250;
/** A ping unanswered this long counts as a lost connection (a server that went silent without closing it). */
const silenceMs = 2_000;

export interface QueueWatchOptions {
  /** Default `defaultQueueReconnectWindowMs`; the first connection waits at most the shorter of this and `queueConnectTimeoutMs`. */
  reconnectWindowMs?: number;
  /** Once per outage, as it starts: why, without credentials, and how long it will be waited for. */
  onLost?: (message: string) => void;
  onBack?: (message: string) => void;
}

export class QueueWatch {
  readonly description: string;
  /** Rejects with STORE_UNAVAILABLE once the queue is given up on; never resolves. */
  readonly failed: Promise<never>;
  private readonly connection: RedisConnection;
  private readonly windowMs: number;
  private giveUp!: (error: RubricateError) => void;
  private given: RubricateError | undefined;
  private lastAnswerAt = 0;
  private lostSince: number | undefined;
  private pinging = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    url: string,
    private readonly options: QueueWatchOptions = {},
  ) {
    this.connection = new RedisConnection(url, { connectionName: 'rubricate-queue-watch', role: 'queue' });
    this.description = this.connection.description;
    this.windowMs = options.reconnectWindowMs ?? defaultQueueReconnectWindowMs;
    this.failed = new Promise<never>((_, reject) => (this.giveUp = reject));
    // Callers race it; one that has stopped racing must not turn it into an unhandled rejection.
    this.failed.catch(() => undefined);
    this.connection.client.on('close', () => this.lost());
  }

  /** Waits for the first connection (STORE_UNAVAILABLE when it does not come in time), then keeps watching it. */
  async start(): Promise<void> {
    try {
      await this.connection.ready(Math.min(queueConnectTimeoutMs, this.windowMs));
    } catch (error) {
      await this.connection.close();
      throw error;
    }
    this.lastAnswerAt = Date.now();
    this.timer = setInterval(() => this.beat(), heartbeatMs);
    this.timer.unref();
  }

  /** The queue answers now: worth asking it to clean up before leaving. */
  get reachable(): boolean {
    return this.given === undefined && this.lostSince === undefined && this.connection.client.status === 'ready';
  }

  /** `promise`, unless the queue is given up on first. */
  guard<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([promise, this.failed]);
  }

  private beat(): void {
    const now = Date.now();
    if (this.connection.client.status === 'ready' && !this.pinging) {
      this.pinging = true;
      this.connection.client.ping().then(
        () => {
          this.pinging = false;
          this.lastAnswerAt = Date.now();
          if (this.lostSince !== undefined) {
            this.lostSince = undefined;
            this.options.onBack?.(`the queue at ${this.description} answers again`);
          }
        },
        () => (this.pinging = false),
      );
    }
    if (now - this.lastAnswerAt >= silenceMs) this.lost();
    if (this.lostSince !== undefined && now - this.lostSince >= this.windowMs) {
      this.stop(this.connection.unavailable(`no answer for ${seconds(now - this.lostSince)}`));
    }
  }

  private lost(): void {
    if (this.lostSince !== undefined || this.given || !this.timer) return;
    this.lostSince = this.lastAnswerAt;
    const health = this.connection.health();
    this.options.onLost?.(`lost the queue at ${this.description}${health.reason ? ` (${health.reason})` : ''}; waiting up to ${seconds(this.windowMs)} for it to come back`);
  }

  private stop(error: RubricateError): void {
    if (this.given) return;
    this.given = error;
    clearInterval(this.timer);
    this.giveUp(error);
    noteDroppedRedisConnection();
    this.connection.client.disconnect();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.connection.close();
  }
}

function seconds(milliseconds: number): string {
  return `${Math.round(milliseconds / 100) / 10} s`;
}
