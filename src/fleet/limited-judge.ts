/**
 * Fleet-wide limits per judge endpoint, on BullMQ's global concurrency and global rate
 * limiter rather than locks of our own. Every call to a limited judge becomes a job on the
 * endpoint's queue in the shared Redis; every process using that endpoint runs a worker on
 * the queue, so whichever process has a free fleet slot makes the call and hands the reply
 * back through the job's result. Hence:
 * - at most `globalConcurrency` calls are in flight across all processes (BullMQ counts active jobs);
 * - at most `requestsPerMinute` start per minute, paced per second (BullMQ's limiter);
 * - a 429/503 pauses the whole queue for its Retry-After (BullMQ's shared manual rate limit);
 * - a crashed process's calls hold their slots only until their job lock expires (the lease),
 *   then the stalled-job check frees them and they fail as retryable for whoever waits.
 * Tokens per minute are counted in Redis after each call; past the budget the queue pauses
 * until the minute ends.
 */
import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import { RubricateError, toRubricateError, type ErrorCode } from '../errors.js';
import type { CompleteOptions, Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import { describeRedisUrl, RedisConnection, redisOptionsFromUrl } from '../store/redis-connection.js';
import { sha256Hex } from '../util/hash.js';

export interface FleetLimits {
  /** Calls in flight to this endpoint across every process sharing the store. */
  globalConcurrency?: number;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  /** How long a crashed process's calls may keep their fleet slots (default 10 s). */
  leaseMs?: number;
  /** Calls this process makes for the fleet at once (its --concurrency). */
  localConcurrency: number;
  /** Per-call timeout for calls made on behalf of the fleet. */
  callTimeoutMs: number;
}

interface CallJob {
  request: JudgeRequest;
}

const queuePrefix = 'rubricate';

/** The endpoint's queue name: the same for every process calling the same judge at the same place. */
export function fleetQueueName(judge: Judge): string {
  const { id, model, baseUrl } = judge.provenance;
  return `judge-${sha256Hex(`${id}\u0000${model}\u0000${baseUrl ?? ''}`).slice(0, 20)}`;
}

/** RPM as BullMQ limiter settings, paced per second rather than allowed as one burst per minute. */
export function rateWindow(requestsPerMinute: number): { max: number; duration: number } {
  if (requestsPerMinute >= 60) return { max: Math.floor(requestsPerMinute / 60), duration: 1_000 };
  return { max: 1, duration: Math.ceil(60_000 / requestsPerMinute) };
}

function isOverloaded(error: RubricateError): boolean {
  return error.code === 'JUDGE_RATE_LIMITED' || (error.code === 'JUDGE_SERVER_ERROR' && error.details.status === 503);
}

/** A failed job carries its RubricateError as JSON in the failure reason. */
function errorFromJobFailure(reason: unknown): RubricateError {
  const message = reason instanceof Error ? reason.message : String(reason);
  try {
    const parsed = JSON.parse(message) as { code?: ErrorCode; message?: string; details?: Record<string, unknown> };
    if (parsed && typeof parsed.code === 'string' && typeof parsed.message === 'string') return new RubricateError(parsed.code, parsed.message, parsed.details ?? {});
  } catch {
    // Not ours: BullMQ's own reasons, such as a stalled job whose process died.
  }
  return new RubricateError('JUDGE_CONNECTION', `the fleet call failed: ${message}`);
}

export class FleetLimitedJudge implements Judge {
  readonly provenance: Judge['provenance'];
  readonly maxConcurrency: number | undefined;
  readonly supportsTokenProbabilities: boolean | undefined;
  private readonly queue: Queue;
  private readonly events: QueueEvents;
  private readonly worker: Worker;
  private readonly tokenKeyPrefix: string;
  private readonly tokenCounter: RedisConnection | undefined;

  /** The inner judge's model limits, as it learns them. */
  get modelLimits(): Judge['modelLimits'] {
    return this.inner.modelLimits;
  }

  private constructor(
    private readonly inner: Judge,
    private readonly url: string,
    private readonly limits: FleetLimits,
  ) {
    this.provenance = inner.provenance;
    this.maxConcurrency = inner.maxConcurrency;
    this.supportsTokenProbabilities = inner.supportsTokenProbabilities;
    const name = fleetQueueName(inner);
    const connection = redisOptionsFromUrl(url, { maxRetriesPerRequest: null, connectionName: 'rubricate-fleet' });
    this.tokenKeyPrefix = `${queuePrefix}:tpm:${name}:`;
    this.tokenCounter = limits.tokensPerMinute === undefined ? undefined : new RedisConnection(url, { connectionName: 'rubricate-fleet-tokens' });
    this.queue = new Queue(name, { connection, prefix: queuePrefix });
    this.events = new QueueEvents(name, { connection, prefix: queuePrefix });
    const leaseMs = limits.leaseMs ?? 10_000;
    this.worker = new Worker(name, (job: Job<CallJob>) => this.callForFleet(job), {
      connection,
      prefix: queuePrefix,
      concurrency: Math.max(1, limits.localConcurrency),
      lockDuration: leaseMs,
      stalledInterval: Math.max(500, Math.round(leaseMs / 2)),
      // A call whose process died is not made again by the fleet: its waiting caller (if alive) retries it.
      maxStalledCount: 0,
      autorun: true,
    });
    for (const emitter of [this.queue, this.events, this.worker] as Array<{ on(event: 'error', listener: (error: Error) => void): unknown }>) {
      emitter.on('error', () => {
        // Connection trouble surfaces on the calls themselves; an unheard 'error' would end the process.
      });
    }
  }

  static async create(inner: Judge, url: string, limits: FleetLimits): Promise<FleetLimitedJudge> {
    const judge = new FleetLimitedJudge(inner, url, limits);
    try {
      await Promise.all([judge.queue.waitUntilReady(), judge.events.waitUntilReady(), judge.worker.waitUntilReady()]);
      if (limits.globalConcurrency !== undefined) await judge.queue.setGlobalConcurrency(limits.globalConcurrency);
      if (limits.requestsPerMinute !== undefined) {
        const { max, duration } = rateWindow(limits.requestsPerMinute);
        await judge.queue.setGlobalRateLimit(max, duration);
      }
    } catch (error) {
      await judge.close();
      throw new RubricateError('STORE_UNAVAILABLE', `cannot set up fleet limits on ${describeRedisUrl(url)}: ${(error as Error).message}`, { field: 'store' }, { cause: error });
    }
    return judge;
  }

  async complete(request: JudgeRequest, options: CompleteOptions): Promise<JudgeReply> {
    let job: Job<CallJob>;
    try {
      job = await this.queue.add('call', { request }, { attempts: 1, removeOnComplete: { age: 600 }, removeOnFail: { age: 600 } });
    } catch (error) {
      throw new RubricateError('STORE_UNAVAILABLE', `cannot queue a judge call on ${describeRedisUrl(this.url)}: ${(error as Error).message}`, { field: 'store' }, { cause: error });
    }
    const finished = job.waitUntilFinished(this.events) as Promise<JudgeReply>;
    const aborted = new Promise<never>((_, reject) => {
      const onAbort = () => {
        // Still waiting for a slot: take it off the queue (an active call finishes on its own).
        job.remove().catch(() => undefined);
        reject(options.signal.reason ?? new RubricateError('DEADLINE_EXCEEDED', 'the call was cancelled'));
      };
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener('abort', onAbort, { once: true });
      finished.finally(() => options.signal.removeEventListener('abort', onAbort)).catch(() => undefined);
    });
    try {
      return await Promise.race([finished, aborted]);
    } catch (error) {
      if (RubricateError.isInstance(error)) throw error;
      throw errorFromJobFailure(error);
    }
  }

  /** A call made by this process for whichever process queued it. */
  private async callForFleet(job: Job<CallJob>): Promise<JudgeReply> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new RubricateError('JUDGE_TIMEOUT', `judge did not answer within ${this.limits.callTimeoutMs} ms`, { timeoutMs: this.limits.callTimeoutMs })), this.limits.callTimeoutMs);
    try {
      const reply = await this.inner.complete(job.data.request, { signal: controller.signal });
      await this.countTokens(reply);
      return reply;
    } catch (thrown) {
      const error = controller.signal.aborted && RubricateError.isInstance(controller.signal.reason) ? controller.signal.reason : toRubricateError(thrown, 'JUDGE_CONNECTION');
      // The judge says it is overloaded: pause the whole fleet's queue, not just this process.
      if (isOverloaded(error)) await this.worker.rateLimit(Math.max(250, Number(error.details.retryAfterMs ?? 1_000))).catch(() => undefined);
      // BullMQ keeps only an Error's message: the coded error travels in it, as JSON.
      throw new Error(JSON.stringify({ code: error.code, message: error.message, details: error.details }), { cause: thrown });
    } finally {
      clearTimeout(timer);
    }
  }

  private async countTokens(reply: JudgeReply): Promise<void> {
    const budget = this.limits.tokensPerMinute;
    if (budget === undefined || !this.tokenCounter) return;
    const minute = Math.floor(Date.now() / 60_000);
    const key = `${this.tokenKeyPrefix}${minute}`;
    const tokens = Math.max(0, Math.round((reply.usage.inputTokens ?? 0) + (reply.usage.outputTokens ?? 0)));
    const [[, total]] = (await this.tokenCounter.client.multi().incrby(key, tokens).pexpire(key, 120_000).exec()) as [[Error | null, number]];
    if (total >= budget) await this.worker.rateLimit(Math.max(1, (minute + 1) * 60_000 - Date.now()));
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.worker.close(), this.events.close()]);
    await Promise.allSettled([this.queue.close(), this.tokenCounter?.close()]);
    await this.inner.close?.();
  }
}

/** Wraps each judge with the fleet limits when any is asked for; otherwise returns them as they are. */
export async function applyFleetLimits(judges: Judge[], url: string | undefined, limits: Omit<FleetLimits, 'localConcurrency' | 'callTimeoutMs'> & Partial<FleetLimits>): Promise<Judge[]> {
  const wanted = limits.globalConcurrency !== undefined || limits.requestsPerMinute !== undefined || limits.tokensPerMinute !== undefined;
  if (!wanted) return judges;
  if (!url) throw new RubricateError('CONFIG_INVALID', '--global-concurrency and --rate-limit are shared through a Redis store: add --store redis://… (or set RUBRICATE_STORE)', { field: 'store' });
  const wrapped: Judge[] = [];
  for (const judge of judges) wrapped.push(await FleetLimitedJudge.create(judge, url, { localConcurrency: 16, callTimeoutMs: 120_000, ...limits }));
  return wrapped;
}
