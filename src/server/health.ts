/**
 * Operations endpoints. /healthz answers 200 while the service can grade, and 503 when it
 * is draining or its judge refused the credentials for good (a restart with a fixed
 * configuration is then the only cure, so orchestrators should replace the instance).
 * Probes come without credentials, so an unauthenticated caller gets the status and nothing
 * else; the details (judge, queue, endpoints, the fatal error) need the token, and are
 * redacted even then. /metrics is the Prometheus scrape target.
 */
import type { CredentialCheck } from './auth.js';
import { requestHeader } from './body.js';
import type { RouteContext, ServerApp } from './context.js';
import { prometheusContentType } from './metrics.js';
import type { ServerState } from './state.js';
import { redactDeep, redactText } from '../util/redact.js';

export function registerHealthRoute(app: ServerApp, { service }: RouteContext, state: ServerState, credentials?: CredentialCheck): void {
  app.get('/healthz', (context) => {
    const fatal = service.fatalError;
    const store = service.storeHealth?.();
    const storeDown = store !== undefined && store.status !== 'ok';
    const status = state.draining ? 'draining' : fatal ? 'unhealthy' : storeDown ? 'degraded' : 'ok';
    const httpStatus = state.draining || fatal || storeDown ? 503 : 200;
    if (credentials && !credentials(requestHeader(context, 'authorization'), context.req.query('token'))) return context.json({ status }, httpStatus);
    const endpoints = service.judgeEndpoints?.();
    const body = {
      status,
      ...(store ? { store: store.status } : {}),
      judge: service.grader.judgeInfo ? { id: service.grader.judgeInfo.id, model: service.grader.judgeInfo.model } : null,
      scoring: service.grader.scoring.name,
      queue: { depth: service.admission.used, waiting: service.admission.waiting, held: service.admission.heldCount, capacity: service.admission.capacity },
      ...(endpoints ? { judge_endpoints: endpoints.map((entry) => ({ endpoint: redactText(entry.endpoint), healthy: entry.healthy, outstanding: entry.outstanding })) } : {}),
      ...(fatal ? { error: { code: fatal.code, message: fatal.message } } : {}),
    };
    return context.json(redactDeep(body), httpStatus);
  });
}

export function registerMetricsRoute(app: ServerApp, { service }: RouteContext): void {
  app.get('/metrics', (context) => {
    context.header('Content-Type', prometheusContentType);
    return context.body(redactText(service.metrics.render()));
  });
}
