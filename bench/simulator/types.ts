import type { Dialect } from './dialects.js';

export interface SimulatorOptions {
  /** Interface to listen on; loopback by default. */
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Fixed part of every request's service time. Default 100 ms. */
  fixedMs?: number;
  /** Per input token not served from the prefix cache. Default 0. */
  perInputTokenMs?: number;
  /** Per input token served from the prefix cache. Default 0. */
  perCachedInputTokenMs?: number;
  /** Per output token. Default 0. */
  perOutputTokenMs?: number;
  /** Requests in service at once; unset or null means unlimited. */
  maxConcurrent?: number | null;
  /** What happens beyond `maxConcurrent`: wait in a FIFO queue (default) or HTTP 429. */
  overflow?: 'queue' | 'reject';
  /** Retry-After sent with 429 (header rounded up to whole seconds; `retry-after-ms` exact). Default 1. */
  retryAfterSeconds?: number;
  /** Prefix-cache block size in tokens. Default 64. */
  prefixBlockTokens?: number;
  /** Prefix-cache capacity in blocks (LRU). Default 100000; 0 disables caching. */
  prefixCacheBlocks?: number;
  /** Words in each simulated explanation. Default 25. */
  explanationWords?: number;
}

export interface ResolvedSimulatorOptions {
  host: string;
  port: number;
  fixedMs: number;
  perInputTokenMs: number;
  perCachedInputTokenMs: number;
  perOutputTokenMs: number;
  maxConcurrent: number;
  overflow: 'queue' | 'reject';
  retryAfterSeconds: number;
  prefixBlockTokens: number;
  prefixCacheBlocks: number;
  explanationWords: number;
}

/** One answered (or refused) request. */
export interface RequestRecord {
  dialect: Dialect | 'unknown';
  /** HTTP status sent; 499 when the client went away before its answer. */
  status: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Criteria graded in this request. */
  criteria: number;
  /** When the request was ready to be served (body read, tokenised), ms since the last reset. */
  arrivedAtMs: number;
  /** When its service began, ms since the last reset (equal to arrival for refused requests). */
  startedAtMs: number;
  /** Time waiting for a service slot. */
  queueMs: number;
  /** Time in service (the modelled latency, as actually slept). */
  serviceMs: number;
  /** The modelled latency it was given (fixed plus per-token costs); absent for requests never served. */
  modelledMs?: number;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface DialectTotals {
  requests: number;
  criteria: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

export interface SimulatorStats {
  /** All requests that reached the chat endpoint, whatever their status. */
  requests: number;
  /** Requests answered 200. */
  completed: number;
  /** Requests answered 429 (reject mode). */
  rejected: number;
  /** Requests answered 400 (unreadable or unrecognised). */
  invalid: number;
  /** Clients that disconnected before their answer. */
  abandoned: number;
  criteria: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  byDialect: Partial<Record<Dialect, DialectTotals>>;
  /** Over completed requests. */
  queueMs: Percentiles;
  serviceMs: Percentiles;
  /** queue + service. */
  latencyMs: Percentiles;
  /** Most requests in service at once since the last reset. */
  peakInService: number;
  /** Most requests waiting at once since the last reset. */
  peakQueued: number;
  /** Milliseconds since the last reset. */
  elapsedMs: number;
  /** CPU (user + system) the simulator process used since the last reset, and per request. */
  cpuMs: number;
  cpuMsPerRequest: number;
  /** Settings in force; `maxConcurrent` is null when unlimited. */
  options: Omit<ResolvedSimulatorOptions, 'maxConcurrent'> & { maxConcurrent: number | null };
  /** Per-request records, only when asked for (`stats({ records: true })`, `GET /__stats?records=1`). */
  records?: RequestRecord[];
}
