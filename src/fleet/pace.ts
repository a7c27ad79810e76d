/**
 * Fleet pace: requests and tokens per minute across every process sharing a Redis, and a
 * shared pause after the judge says it is overloaded, on rate-limiter-flexible's Redis
 * counters (one Lua script per consumption, windows that expire by themselves).
 *
 * Providers enforce a per-minute limit over shorter periods (60,000 TPM as about 1,000
 * tokens a second), so the budget is paced in short windows: RPM and TPM are split into
 * windows of whole seconds (`paceWindow`). Tokens are reserved before a call from an
 * estimate (prompt characters / 4 + the output budget, as providers count `max_tokens`),
 * and corrected from the reply's usage afterwards.
 */
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { RubricateError } from '../errors.js';
import type { JudgeReply, JudgeRequest } from '../judges/types.js';
import { sleep } from '../util/sleep.js';

interface PaceLimits {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

/** A per-minute budget as windows of whole seconds: the smallest window in which it divides evenly. */
function paceWindow(perMinute: number): { points: number; durationSeconds: number } {
  let divisor = 60;
  for (let candidate = 60; candidate >= 1; candidate -= 1) {
    if (perMinute % candidate === 0 && 60 % candidate === 0) {
      divisor = candidate;
      break;
    }
  }
  // `divisor` divides both: windows of 60 / divisor seconds holding perMinute / divisor each.
  return { points: perMinute / divisor, durationSeconds: 60 / divisor };
}

/** What a call will count against a tokens-per-minute budget before its usage is known. */
export function estimateRequestTokens(request: JudgeRequest): number {
  const characters = request.messages.reduce((total, message) => total + message.content.length, 0);
  return Math.max(1, Math.ceil(characters / 4) + (request.maxTokens ?? 1_024));
}

/** How often a process reads the shared pause. */
const pauseRefreshMs = 200;

function replyTokens(reply: JudgeReply): number {
  return Math.max(0, Math.round((reply.usage.inputTokens ?? 0) + (reply.usage.outputTokens ?? 0)));
}

export class FleetPace {
  private readonly requests: RateLimiterRedis | undefined;
  private readonly tokens: RateLimiterRedis | undefined;
  /** The shared pause: blocked while the judge asked everyone to wait. */
  private readonly pause: RateLimiterRedis;
  /** Overloaded replies in a row seen here: the pause doubles with each when the judge gives no Retry-After. */
  private overloadedInARow = 0;
  /** This process's view of the shared pause, and when it last read it. */
  private pausedUntil = 0;
  private pauseReadAt = Number.NEGATIVE_INFINITY;
  private pauseRead: Promise<void> | undefined;
  private pauseReadFailure: unknown;

  constructor(
    client: Redis,
    name: string,
    limits: PaceLimits,
    private readonly describe: string,
  ) {
    const limiter = (kind: string, perMinute: number) => {
      const { points, durationSeconds } = paceWindow(perMinute);
      return new RateLimiterRedis({ storeClient: client, keyPrefix: `rubricate:${kind}:${name}`, points, duration: durationSeconds });
    };
    this.requests = limits.requestsPerMinute === undefined ? undefined : limiter('rpm', limits.requestsPerMinute);
    this.tokens = limits.tokensPerMinute === undefined ? undefined : limiter('tpm', limits.tokensPerMinute);
    this.pause = new RateLimiterRedis({ storeClient: client, keyPrefix: `rubricate:pause:${name}`, points: 1, duration: 1 });
  }

  /** Waits for the fleet's pause, a request and the call's estimated tokens; returns the tokens reserved. */
  async beforeCall(request: JudgeRequest, signal: AbortSignal): Promise<number> {
    await this.waitOutPause(signal);
    if (this.requests) await this.consume(this.requests, 1, signal);
    if (!this.tokens) return 0;
    const estimate = estimateRequestTokens(request);
    // A call larger than one window's budget takes that many windows.
    for (let remaining = estimate; remaining > 0; ) {
      const take = Math.min(remaining, this.tokens.points);
      await this.consume(this.tokens, take, signal);
      remaining -= take;
    }
    return estimate;
  }

  /** Counts the reply's real tokens in place of the estimate. */
  async afterCall(reserved: number, reply: JudgeReply): Promise<void> {
    this.overloadedInARow = 0;
    if (!this.tokens) return;
    const difference = replyTokens(reply) - reserved;
    try {
      if (difference > 0) await this.tokens.penalty('fleet', difference);
      else if (difference < 0) await this.tokens.reward('fleet', -difference);
    } catch {
      // Redis away: the estimate stands (the next call's reservation reports the outage).
    }
  }

  /** The judge said it is overloaded: every process waits (Retry-After, else 1 s doubling per overloaded reply in a row, up to 60 s). */
  async overloaded(retryAfterMs: number | undefined): Promise<void> {
    this.overloadedInARow += 1;
    const wanted = retryAfterMs ?? Math.min(60_000, 1_000 * 2 ** (this.overloadedInARow - 1));
    // Whole seconds: rate-limiter-flexible's windows are seconds.
    const seconds = Math.max(1, Math.ceil(wanted / 1000));
    try {
      const current = await this.pause.get('fleet');
      if (current && current.consumedPoints > this.pause.points && current.msBeforeNext >= seconds * 1000) return;
      await this.pause.block('fleet', seconds);
      this.pausedUntil = Math.max(this.pausedUntil, Date.now() + seconds * 1000);
    } catch {
      // Redis away: this process's own retry back-off still applies.
    }
  }

  /**
   * Waits while the fleet is paused. The shared pause is read at most every pauseRefreshMs,
   * in the background: a pause set elsewhere is seen within that, and no call waits for the read.
   */
  private async waitOutPause(signal: AbortSignal): Promise<void> {
    if (Date.now() - this.pauseReadAt >= pauseRefreshMs && !this.pauseRead) {
      this.pauseRead = this.pause
        .get('fleet')
        .then((state) => {
          this.pauseReadAt = Date.now();
          this.pausedUntil = state && state.consumedPoints > this.pause.points ? Math.max(this.pausedUntil, this.pauseReadAt + state.msBeforeNext) : this.pausedUntil;
          this.pauseReadFailure = undefined;
        })
        .catch((error: unknown) => {
          this.pauseReadFailure = error;
        })
        .finally(() => {
          this.pauseRead = undefined;
        });
    }
    // Never read yet (this process's first calls): wait for it, so a process joining a paused fleet waits too.
    if (this.pauseReadAt === Number.NEGATIVE_INFINITY) await this.pauseRead;
    // The store is away: fail clearly rather than call past a pause we cannot see.
    if (this.pauseReadFailure !== undefined) {
      await this.pauseRead;
      if (this.pauseReadFailure !== undefined) throw this.unavailable(this.pauseReadFailure);
    }
    for (let wait = this.pausedUntil - Date.now(); wait > 0 && !signal.aborted; wait = this.pausedUntil - Date.now()) await sleep(wait, signal);
    signal.throwIfAborted();
  }

  private async consume(limiter: RateLimiterRedis, points: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await limiter.consume('fleet', points);
        return;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw this.unavailable(rejection);
        // Over this window's budget: try again when it ends (the next window starts with the first to ask).
        await sleep(Math.max(1, rejection.msBeforeNext), signal);
      }
    }
    signal.throwIfAborted();
  }

  private unavailable(error: unknown): RubricateError {
    return new RubricateError('STORE_UNAVAILABLE', `cannot read the fleet's rate limits on ${this.describe}: ${(error as Error).message}`, { field: 'store' }, { cause: error });
  }
}
