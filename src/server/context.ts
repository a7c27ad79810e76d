/** What route modules share: the Hono environment and the service they call. */
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { RewardService } from './reward-service.js';

export interface ServerVariables {
  /** Items in the request, for the request log line. */
  items: number;
  /** Rewards that are fallbacks standing in for failures, for the request log line. */
  fallbacks: number;
}

export type ServerEnv = { Variables: ServerVariables };

export type ServerApp = Hono<ServerEnv>;

export interface RouteContext {
  service: RewardService;
  maxBodyBytes: number;
  logger?: Logger;
}
