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
import type { Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import { wrapJudge } from '../judges/middleware.js';
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

/** `inner` with the fleet's slots and pace around each call; closing it lets go of them and the Redis connection. */
function fleetLimited(inner: Judge, connection: RedisConnection, limits: FleetLimits): Judge {
  const name = fleetKeyOf(inner);
  const leaseMs = limits.leaseMs ?? 10_000;
  const slots =
    limits.globalConcurrency === undefined
      ? undefined
      : new FleetSlots(connection.client, `rubricate:slots:${name}`, limits.globalConcurrency, { leaseMs, describe: connection.description });
  const pace = new FleetPace(connection.client, name, limits, connection.description);
  return wrapJudge(inner, {
    wrapComplete: ({ request, options, doComplete }) => limitedCall(slots, pace, request, options.signal, doComplete),
    async wrapClose(doClose) {
      await slots?.close();
      await connection.close();
      await doClose();
    },
  });
}

async function limitedCall(slots: FleetSlots | undefined, pace: FleetPace, request: JudgeRequest, signal: AbortSignal, doComplete: () => Promise<JudgeReply>): Promise<JudgeReply> {
  const lease = slots ? await slots.take(signal) : undefined;
  try {
    const reserved = await pace.beforeCall(request, signal);
    let reply: JudgeReply;
    try {
      reply = await doComplete();
    } catch (thrown) {
      const error = toRubricateError(thrown, 'JUDGE_CONNECTION');
      // The judge says it is overloaded: pause the whole fleet, not just this process.
      if (isOverloaded(error)) await pace.overloaded(typeof error.details.retryAfterMs === 'number' ? error.details.retryAfterMs : undefined);
      throw thrown;
    }
    await pace.afterCall(reserved, reply);
    return reply;
  } finally {
    if (lease) slots!.give(lease);
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
    wrapped.push(fleetLimited(judge, connection, limits));
  }
  return wrapped;
}
