/**
 * Refusals without the framework. When the admission queue is full (or the server drains), a
 * scoring request is answered 503 + Retry-After straight from Node's request handler, before
 * the request body is read and before Hono builds its request, context and response objects.
 * Under a flood of work the server then spends almost nothing per refusal, so it keeps
 * answering, and keeps its memory, instead of falling behind on requests it will refuse anyway.
 *
 * Native routes are refused here as soon as the queue is full (their clients back off on 503).
 * Trainer adapter routes (OpenRLHF, slime, Vertex, NeMo Gym, CaRR) wait for room in the Hono path (in
 * the line, or held behind it until their deadline) and are refused here only while the server
 * drains. Requests without
 * valid credentials also take the Hono path (and get their 401): the queue's state is not
 * disclosed to them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { RubricateError } from '../errors.js';
import { waitingRoutes } from './adapters/index.js';
import { credentialCheck } from './auth.js';
import { errorBody, retryAfterHeader } from './http-error.js';
import type { RewardService } from './reward-service.js';
import { scoreRoutes } from './score.js';
import type { ServerState } from './state.js';

const refusableRoutes = new Set<string>(scoreRoutes);

export interface FastRefusalOptions {
  service: RewardService;
  state: ServerState;
  token?: string;
  logger?: Logger;
}

/** Returns a handler that answers the request and returns true, or returns false to pass it on. */
export function createFastRefusal({ service, state, token, logger }: FastRefusalOptions): (incoming: IncomingMessage, outgoing: ServerResponse) => boolean {
  const authorized = credentialCheck(token);
  return (incoming, outgoing) => {
    if (incoming.method !== 'POST' || (!state.draining && !service.admission.full)) return false;
    const url = incoming.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    const refused = refusableRoutes.has(path) || (waitingRoutes.has(path) && state.draining);
    if (!refused) return false;
    const queryToken = queryStart === -1 ? undefined : (new URLSearchParams(url.slice(queryStart + 1)).get('token') ?? undefined);
    if (!authorized(incoming.headers.authorization, queryToken)) return false;

    const started = performance.now();
    const draining = state.draining;
    const error = draining ? new RubricateError('OVERLOADED', 'the server is shutting down; retry on another replica', { retryAfterMs: 1000 }) : service.admission.refusal(1);
    service.metrics.rejected.inc({ reason: draining ? 'draining' : 'queue_full' });
    const body = JSON.stringify(errorBody(error));
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'retry-after': retryAfterHeader(error) ?? '1',
    };
    if (draining) headers.connection = 'close';
    outgoing.writeHead(503, headers);
    outgoing.end(body);
    // The body is never read; discarding it keeps the connection usable for the next request.
    incoming.resume();
    const seconds = (performance.now() - started) / 1000;
    service.metrics.recordRequest(path, 503, seconds);
    logger?.info({ method: 'POST', route: path, status: 503, duration_ms: Math.round(seconds * 1e4) / 10, refused: draining ? 'draining' : 'queue_full' }, 'request');
    return true;
  };
}
