/**
 * `rubricate/server`: the reward service as a library. `createServer` builds the Hono app (mount
 * it in your own server or call `app.fetch`); `startServer` listens on a port.
 */
export { createServerApp as createServer, type ServerAppOptions as CreateServerOptions } from '../server/app.js';
export { startServer, defaultHost, defaultPort, type RunningServer, type StartServerOptions } from '../server/start.js';
export { RewardService, type RewardServiceOptions, type ScoreOptions, type ScoredItems } from '../server/reward-service.js';
export { parseErrorPolicy, type ErrorPolicy, type RewardResult } from '../server/rewards.js';
export { groupAdvantages, type AdvantageEstimator } from '../server/advantages.js';
export type { ServerApp } from '../server/context.js';
