/**
 * The HTTP app: native reward API, trainer adapters, probes. Built on Hono so tests drive
 * it with `app.request()` and no network; `startServer` binds it to a port.
 */
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { RubricateError } from '../errors.js';
import { serverAdapters, type ServerAdapter } from './adapters/index.js';
import { bearerAuth, credentialCheck } from './auth.js';
import { browserGuard } from './browser-guard.js';
import { registerSecret } from '../util/redact.js';
import { defaultMaxBodyBytes } from './body.js';
import type { RouteContext, ServerApp, ServerEnv } from './context.js';
import { registerHealthRoute, registerMetricsRoute } from './health.js';
import { errorResponse } from './http-error.js';
import { observeRequests } from './observe.js';
import type { RewardService } from './reward-service.js';
import { registerScoreRoutes, scoreRoutes } from './score.js';
import { registerRlRoutes, rlRoutes } from './rl-routes.js';
import { evolvingRubricRoutes, registerEvolvingRubricRoutes } from './evolving-rubrics.js';
import type { RubricEvolver } from '../generation/evolver.js';
import { distillRoutes, registerDistillRoute, type DistillRouteOptions } from './distill.js';
import { ServerState } from './state.js';

export interface ServerAppOptions {
  service: RewardService;
  /** Bearer token every route but /healthz requires; none = open. */
  token?: string;
  /** Largest request body accepted (413 beyond). Default 16 MiB. */
  maxBodyBytes?: number;
  /** One JSON line per request; none = silent. */
  logger?: Logger;
  /** Trainer adapters to serve, by name; default all of them. */
  adapters?: readonly string[];
  /** Lifecycle state shared with `startServer` (drain). */
  state?: ServerState;
  /** Evolving rubrics (RLER / OnlineRubrics): serves /v1/rubrics/… when given. */
  evolver?: RubricEvolver;
  /** Rubric distillation (`POST /v1/rubrics/distill`) with this generator, when given. */
  distill?: DistillRouteOptions;
  /** The address the server is bound to: Host and Origin headers must name it. Default loopback. */
  bindHost?: string;
  /** Origins or host names accepted besides the bind address (`--allow-origin`). */
  allowOrigins?: readonly string[];
}

export function resolveAdapters(names: readonly string[] | undefined): ServerAdapter[] {
  if (names === undefined) return [...serverAdapters.values()];
  return names.map((name) => {
    const adapter = serverAdapters.get(name);
    if (!adapter) throw new RubricateError('CONFIG_INVALID', `unknown adapter "${name}" (known: ${[...serverAdapters.keys()].join(', ')})`, { field: 'adapters' });
    return adapter;
  });
}

/**
 * The reward service as a Hono app: mount it in a server of your own, or call `app.fetch`.
 *
 * @example
 * ```ts
 * import { createJudge } from 'rubricate';
 * import { RewardService, createServer } from 'rubricate/server';
 * const service = new RewardService({ grading: { judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) } });
 * const app = createServer({ service, token: 'a-long-random-token' });
 * const health = await app.fetch(new Request('http://127.0.0.1/healthz'));
 * ```
 */
export function createServerApp(options: ServerAppOptions): ServerApp {
  const { service, logger } = options;
  const state = options.state ?? new ServerState();
  const adapters = resolveAdapters(options.adapters);
  const context: RouteContext = { service, maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes, ...(logger ? { logger } : {}) };
  const routes = new Set<string>(['/healthz', '/metrics', ...scoreRoutes, ...rlRoutes, ...adapters.flatMap((adapter) => adapter.routes), ...(options.evolver ? evolvingRubricRoutes : []), ...(options.distill ? distillRoutes : [])]);

  registerSecret(options.token);
  const app = new Hono<ServerEnv>();
  app.use('*', observeRequests({ service, state, logger, routes }));
  // Before everything else, probes included: a web page must not reach the server through the browser.
  app.use('*', browserGuard({ bindHost: options.bindHost, allowOrigins: options.allowOrigins }));
  // Registered before authentication: load balancers probe without credentials (and get only the status).
  registerHealthRoute(app, context, state, options.token ? credentialCheck(options.token) : undefined);
  app.use('*', bearerAuth(options.token));
  registerMetricsRoute(app, context);
  registerScoreRoutes(app, context);
  registerRlRoutes(app, context);
  for (const adapter of adapters) adapter.register(app, context);
  // Before the evolving routes: `distill` is a fixed path, not a prompt id.
  if (options.distill) registerDistillRoute(app, context, options.distill);
  if (options.evolver) registerEvolvingRubricRoutes(app, context, options.evolver);

  app.notFound((request) => errorResponse(request, new RubricateError('NOT_FOUND', `no route for ${request.req.method} ${request.req.path}`)));
  app.onError((error, request) => {
    if (!RubricateError.isInstance(error) || error.code === 'INTERNAL') logger?.error({ err: error, route: request.req.path }, 'internal error');
    return errorResponse(request, error);
  });
  return app;
}
