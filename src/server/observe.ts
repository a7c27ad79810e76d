/**
 * The outermost middleware: counts requests in flight (for drain), refuses new work while
 * draining, and after each answer records the metrics and writes one structured log line.
 */
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { RubricateError } from '../errors.js';
import type { ServerEnv } from './context.js';
import { requestHeader } from './body.js';
import { errorResponse } from './http-error.js';
import type { RewardService } from './reward-service.js';
import type { ServerState } from './state.js';

export interface ObserveOptions {
  service: RewardService;
  state: ServerState;
  logger?: Logger;
  /** Paths reported under their own name in metrics; anything else is `other`. */
  routes: ReadonlySet<string>;
}

/** Probes keep working while draining: they are how the outside learns about it. */
const alwaysServed = new Set(['/healthz', '/metrics']);

export function observeRequests({ service, state, logger, routes }: ObserveOptions): MiddlewareHandler<ServerEnv> {
  let sequence = 0;
  const prefix = process.pid.toString(36);
  return async (context, next) => {
    const started = performance.now();
    state.requestStarted();
    service.inFlightRequests = state.inFlightRequests;
    const path = context.req.path;
    const route = routes.has(path) ? path : 'other';
    const requestId = requestHeader(context, 'x-request-id') ?? `${prefix}-${(sequence += 1).toString(36)}`;
    try {
      if (state.draining && !alwaysServed.has(path)) {
        service.metrics.rejected.inc({ reason: 'draining' });
        context.header('Connection', 'close');
        context.res = errorResponse(context, new RubricateError('OVERLOADED', 'the server is shutting down; retry on another replica', { retryAfterMs: 1000 }));
        return;
      }
      await next();
    } finally {
      state.requestFinished();
      service.inFlightRequests = state.inFlightRequests;
      const seconds = (performance.now() - started) / 1000;
      const status = context.res.status;
      service.metrics.recordRequest(route, status, seconds);
      // No request line is built when its level is off (`--log-level warn`: the hot path of cached rewards).
      const level = status >= 500 && status !== 503 ? 'warn' : 'info';
      if (logger?.isLevelEnabled(level)) {
        const line = {
          request_id: requestId,
          method: context.req.method,
          route,
          status,
          duration_ms: Math.round(seconds * 1e4) / 10,
          items: context.get('items'),
          fallbacks: context.get('fallbacks') || undefined,
        };
        // A 503 refusal is the queue doing its job, not a server fault: it is logged as info.
        logger[level](line, 'request');
      }
    }
  };
}
