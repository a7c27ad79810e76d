/**
 * One judge over several endpoints that serve the same model (a pool of vLLM or SGLang
 * replicas). Each call goes to the healthy endpoint with the fewest calls outstanding; an
 * endpoint that cannot be reached is ejected for a cool-down (doubling on repeated failures)
 * and the call fails over to another one. After the cool-down the endpoint gets traffic
 * again; one success makes it fully healthy.
 *
 * The pool never throws JUDGE_UNAVAILABLE: the engine treats that code as fatal for its whole
 * lifetime, while "every replica is down right now" is transient. It throws a retryable
 * JUDGE_CONNECTION carrying the time until the first endpoint comes back instead.
 */
import { RubricateError, toRubricateError } from '../errors.js';
import type { CompleteOptions, Judge, JudgeCapabilities, JudgeProvenance, JudgeReply, JudgeRequest } from './types.js';
import { redactUrl } from '../util/redact.js';
import { extendJudge, wrapJudge } from './middleware.js';

export interface JudgePoolOptions {
  /** First ejection of an endpoint lasts this long. Default 5 s. */
  cooldownMs?: number;
  /** Repeated ejections double the cool-down up to this. Default 60 s. */
  maxCooldownMs?: number;
  /** Which failures eject an endpoint. Default: connection errors (refused, reset, DNS). */
  ejectOn?: (error: RubricateError) => boolean;
  /** Clock, for tests. */
  now?: () => number;
  onEvent?: (event: JudgePoolEvent) => void;
}

export type JudgePoolEvent =
  | { type: 'ejected'; endpoint: string; consecutiveFailures: number; cooldownMs: number; code: string }
  | { type: 'restored'; endpoint: string }
  | { type: 'failover'; from: string; code: string };

export interface JudgeEndpointStatus {
  endpoint: string;
  outstanding: number;
  healthy: boolean;
  consecutiveFailures: number;
  /** Milliseconds until an ejected endpoint gets traffic again (0 when healthy). */
  cooldownRemainingMs: number;
  calls: number;
  failures: number;
}

export interface JudgePool extends Judge {
  readonly size: number;
  status(): JudgeEndpointStatus[];
  close(): Promise<void>;
}

interface Endpoint {
  judge: Judge;
  name: string;
  outstanding: number;
  consecutiveFailures: number;
  ejectedUntil: number;
  calls: number;
  failures: number;
}

const defaultEjectOn = (error: RubricateError) => error.code === 'JUDGE_CONNECTION';

/** A pool's endpoints and how it treats them; each function below reads and updates it. */
interface PoolState {
  endpoints: Endpoint[];
  /** Rotates the tie-break so equally loaded endpoints share the work. */
  nextTieBreak: number;
  cooldownMs: number;
  maxCooldownMs: number;
  ejectOn: (error: RubricateError) => boolean;
  now: () => number;
  onEvent?: (event: JudgePoolEvent) => void;
}

export function createJudgePool(judges: readonly Judge[], options: JudgePoolOptions = {}): JudgePool {
  checkOneModel(judges);
  const cooldownMs = options.cooldownMs ?? 5_000;
  const state: PoolState = {
    endpoints: judges.map((judge, index) => ({
      judge,
      name: redactUrl(judge.provenance.baseUrl) ?? `${judge.provenance.id}#${index}`,
      outstanding: 0,
      consecutiveFailures: 0,
      ejectedUntil: 0,
      calls: 0,
      failures: 0,
    })),
    nextTieBreak: 0,
    cooldownMs,
    maxCooldownMs: Math.max(cooldownMs, options.maxCooldownMs ?? 60_000),
    ejectOn: options.ejectOn ?? defaultEjectOn,
    now: options.now ?? Date.now,
    onEvent: options.onEvent,
  };
  // The pool answers every call itself, on the endpoint it picks; the first judge stands for the model.
  const pool = wrapJudge(judges[0], {
    overrideProvenance: () => poolProvenance(judges),
    overrideCapabilities: () => poolCapabilities(judges),
    wrapComplete: ({ request, options: callOptions }) => completeOnPool(state, request, callOptions),
    wrapClose: async () => {
      await Promise.all(state.endpoints.map((endpoint) => endpoint.judge.close?.()));
    },
  });
  const members = { size: state.endpoints.length, status: () => poolStatus(state) };
  return extendJudge(pool, members);
}

function checkOneModel(judges: readonly Judge[]): void {
  if (judges.length === 0) throw new RubricateError('CONFIG_INVALID', 'a judge pool needs at least one judge', { field: 'judge-base-url' });
  const first = judges[0].provenance;
  for (const judge of judges) {
    // Replies are cached by judge id and model: mixing models in one pool would mix their verdicts.
    if (judge.provenance.id !== first.id || judge.provenance.model !== first.model) {
      throw new RubricateError(
        'CONFIG_INVALID',
        `every judge in a pool must serve the same model (got ${first.id} and ${judge.provenance.id})`,
        { field: 'judge-base-url' },
      );
    }
  }
}

function poolProvenance(judges: readonly Judge[]): JudgeProvenance {
  const first = judges[0].provenance;
  const baseUrls = judges.map((judge) => judge.provenance.baseUrl).filter((url): url is string => url !== undefined);
  return {
    id: first.id,
    model: first.model,
    ...(baseUrls.length > 0 ? { baseUrl: baseUrls.join(',') } : {}),
    ...(first.settings ? { settings: first.settings } : {}),
    ...(first.variant !== undefined ? { variant: first.variant } : {}),
    ...(first.cacheNamespace !== undefined ? { cacheNamespace: first.cacheNamespace } : {}),
  };
}

function pick(state: PoolState, tried: ReadonlySet<Endpoint>, at: number): Endpoint | undefined {
  const { endpoints } = state;
  let best: Endpoint | undefined;
  for (let offset = 0; offset < endpoints.length; offset += 1) {
    const endpoint = endpoints[(state.nextTieBreak + offset) % endpoints.length];
    if (tried.has(endpoint) || endpoint.ejectedUntil > at) continue;
    if (!best || endpoint.outstanding < best.outstanding) best = endpoint;
  }
  state.nextTieBreak = (state.nextTieBreak + 1) % endpoints.length;
  return best;
}

function eject(state: PoolState, endpoint: Endpoint, error: RubricateError): void {
  endpoint.consecutiveFailures += 1;
  const duration = Math.min(state.maxCooldownMs, state.cooldownMs * 2 ** (endpoint.consecutiveFailures - 1));
  endpoint.ejectedUntil = state.now() + duration;
  state.onEvent?.({ type: 'ejected', endpoint: endpoint.name, consecutiveFailures: endpoint.consecutiveFailures, cooldownMs: duration, code: error.code });
}

function allEjectedError(state: PoolState, at: number, last: RubricateError | undefined): RubricateError {
  const { endpoints } = state;
  const soonest = Math.min(...endpoints.map((endpoint) => endpoint.ejectedUntil));
  const waitMs = Math.max(0, soonest - at);
  return new RubricateError(
    'JUDGE_CONNECTION',
    `all ${endpoints.length} judge endpoints are unreachable; the first comes back in ${Math.ceil(waitMs)} ms${last ? ` (last error: ${last.message})` : ''}`,
    { retryAfterMs: waitMs, endpoints: endpoints.map((endpoint) => endpoint.name) },
    { cause: last },
  );
}

async function completeOnPool(state: PoolState, request: JudgeRequest, callOptions: CompleteOptions): Promise<JudgeReply> {
  const tried = new Set<Endpoint>();
  let lastError: RubricateError | undefined;
  for (;;) {
    const at = state.now();
    const endpoint = pick(state, tried, at);
    // Every endpoint tried in this call was ejected, and the others are cooling down.
    if (!endpoint) throw allEjectedError(state, at, lastError);
    tried.add(endpoint);
    endpoint.outstanding += 1;
    endpoint.calls += 1;
    try {
      const reply = await endpoint.judge.complete(request, callOptions);
      if (endpoint.consecutiveFailures > 0) {
        endpoint.consecutiveFailures = 0;
        state.onEvent?.({ type: 'restored', endpoint: endpoint.name });
      }
      return reply;
    } catch (thrown) {
      const error = toRubricateError(thrown, 'JUDGE_CONNECTION');
      endpoint.failures += 1;
      // A cancelled call (deadline, shutdown) says nothing about the endpoint's health.
      if (callOptions.signal.aborted || !state.ejectOn(error)) throw error;
      eject(state, endpoint, error);
      lastError = error;
      state.onEvent?.({ type: 'failover', from: endpoint.name, code: error.code });
    } finally {
      endpoint.outstanding -= 1;
    }
  }
}

function poolStatus(state: PoolState): JudgeEndpointStatus[] {
  const at = state.now();
  return state.endpoints.map((endpoint) => ({
    endpoint: endpoint.name,
    outstanding: endpoint.outstanding,
    healthy: endpoint.ejectedUntil <= at,
    consecutiveFailures: endpoint.consecutiveFailures,
    cooldownRemainingMs: Math.max(0, endpoint.ejectedUntil - at),
    calls: endpoint.calls,
    failures: endpoint.failures,
  }));
}

/**
 * Replicas serve one model: the pool takes images only when each replica does, returns token
 * probabilities unless one cannot, holds as many calls as its replicas together, and the first
 * replica's learned limits stand for all. Read live, as the replicas learn.
 */
function poolCapabilities(judges: readonly Judge[]): JudgeCapabilities {
  return {
    get images() {
      return judges.every((judge) => judge.capabilities.images);
    },
    get tokenProbabilities() {
      return judges.some((judge) => judge.capabilities.tokenProbabilities === false) ? false : judges[0].capabilities.tokenProbabilities;
    },
    get maxConcurrency() {
      const limits = judges.map((judge) => judge.capabilities.maxConcurrency);
      return limits.every((limit): limit is number => typeof limit === 'number') ? limits.reduce((sum, limit) => sum + limit, 0) : undefined;
    },
    get limits() {
      return judges[0].capabilities.limits;
    },
    get defaults() {
      return judges[0].capabilities.defaults;
    },
    get embedded() {
      return judges[0].capabilities.embedded;
    },
  };
}
