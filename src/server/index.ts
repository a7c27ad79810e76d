/** The reward service for RL training: HTTP app, server, and the pieces they are built from. */
export { createServerApp, type ServerAppOptions } from './app.js';
export { startServer, type RunningServer, type StartServerOptions, defaultPort, defaultHost } from './start.js';
export { RewardService, type RewardServiceOptions, type ScoreOptions, type ScoredItems, defaultMaxQueue, defaultDeadlineMs } from './reward-service.js';
export { parseErrorPolicy, type ErrorPolicy, type RewardResult } from './rewards.js';
export { groupAdvantages, type AdvantageEstimator } from './advantages.js';
export { serverAdapters, type ServerAdapter } from './adapters/index.js';
export type { ServerApp, ServerEnv } from './context.js';
