export { startSimulator, resolveSimulatorOptions, type SimulatorHandle } from './server.js';
export { simulatedVerdict, simulatedExplanation } from './verdict.js';
export { interpretRequest, readMessages, buildReply, dialects, type Dialect, type InterpretedRequest, type ExtractedCriterion } from './dialects.js';
export { encodeChatPrompt, countTextTokens, encodeText, framingTokensPerMessage, replyPrimingTokens } from './tokens.js';
export { PrefixCache } from './prefix-cache.js';
export type { SimulatorOptions, SimulatorStats, RequestRecord, Percentiles, DialectTotals, ResolvedSimulatorOptions } from './types.js';
