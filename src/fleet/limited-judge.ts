/**
 * Fleet-wide limits per judge endpoint, shared through Redis by every process that calls it:
 * - at most `globalConcurrency` calls in flight across all processes (`slots.ts`: leases on
 *   redis-semaphore's semaphore, so a crashed process's slots return within one lease);
 * - at most `requestsPerMinute` and `tokensPerMinute`, paced in short windows, and a pause
 *   for everyone when the judge answers 429 or 503 (`pace.ts`: rate-limiter-flexible).
 * The call itself is made by the process that wants it, so a limited call costs a few Redis
 * commands and no hand-over between processes.
 */
import { RubricateError, toRubricateError } from '../errors.js';
import type { CompleteOptions, Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import { RedisConnection } from '../store/redis-connection.js';
import { sha256Hex } from '../util/hash.js';
import { FleetPace } from './pace.js';
import { FleetSlots } from './slots.js';
import type { FleetLimits } from '../spec/run-spec.js';


/** The endpoint's name in Redis: the same for every process calling the same judge at the same place. */
function fleetKeyOf(judge: Judge): string {
  const { id, model, baseUrl } = judge.provenance;
  return `judge-${sha256Hex(`${id}\u0000${model}\u0000${baseUrl ?? ''}`).slice(0, 20)}`;
}

function isOverloaded(error: RubricateError): boolean {
  return error.code === 'JUDGE_RATE_LIMITED' || (error.code === 'JUDGE_SERVER_ERROR' && error.details.status === 503);
}

class FleetLimitedJudge implements Judge {
  readonly provenance: Judge['provenance'];
  private readonly slots: FleetSlots | undefined;
  private readonly pace: FleetPace;

  /** The inner judge's capabilities, live as it learns them. */
  get capabilities(): Judge['capabilities'] {
    return this.inner.capabilities;
  }

  constructor(
    private readonly inner: Judge,
    private readonly connection: RedisConnection,
    limits: FleetLimits,
  ) {
    this.provenance = inner.provenance;
    const name = fleetKeyOf(inner);
    const leaseMs = limits.leaseMs ?? 10_000;
    this.slots =
      limits.globalConcurrency === undefined
        ? undefined
        : new FleetSlots(connection.client, `rubricate:slots:${name}`, limits.globalConcurrency, { leaseMs, describe: connection.description });
    this.pace = new FleetPace(connection.client, name, limits, connection.description);
  }

  async complete(request: JudgeRequest, options: CompleteOptions): Promise<JudgeReply> {
    const lease = this.slots ? await this.slots.take(options.signal) : undefined;
    try {
      const reserved = await this.pace.beforeCall(request, options.signal);
      let reply: JudgeReply;
      try {
        reply = await this.inner.complete(request, options);
      } catch (thrown) {
        const error = toRubricateError(thrown, 'JUDGE_CONNECTION');
        // The judge says it is overloaded: pause the whole fleet, not just this process.
        if (isOverloaded(error)) await this.pace.overloaded(typeof error.details.retryAfterMs === 'number' ? error.details.retryAfterMs : undefined);
        throw thrown;
      }
      await this.pace.afterCall(reserved, reply);
      return reply;
    } finally {
      if (lease) this.slots!.give(lease);
    }
  }

  async close(): Promise<void> {
    await this.slots?.close();
    await this.connection.close();
    await this.inner.close?.();
  }
}

/** Wraps each judge with the fleet limits when any is asked for; otherwise returns them as they are. */
export async function applyFleetLimits(judges: Judge[], url: string | undefined, limits: FleetLimits): Promise<Judge[]> {
  const wanted = limits.globalConcurrency !== undefined || limits.requestsPerMinute !== undefined || limits.tokensPerMinute !== undefined;
  if (!wanted) return judges;
  if (!url) throw new RubricateError('CONFIG_INVALID', '--global-concurrency and --rate-limit are shared through a Redis store: add --store redis://… (or set RUBRICATE_STORE)', { field: 'store' });
  const wrapped: Judge[] = [];
  for (const judge of judges) {
    const connection = new RedisConnection(url, { connectionName: 'rubricate-fleet' });
    try {
      await connection.ready();
    } catch (error) {
      await connection.close();
      throw error;
    }
    wrapped.push(new FleetLimitedJudge(judge, connection, limits));
  }
  return wrapped;
}
