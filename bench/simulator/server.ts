/**
 * The judge simulator: a loopback OpenAI-compatible chat-completions server whose latency,
 * capacity and prompt caching follow a tunable model, and whose verdicts are a deterministic
 * function of (criterion, response). Benchmarks point graders at it to compare their judge
 * cost (calls, tokens, waiting) on equal terms.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RubricateError } from '../../src/errors.js';
import { safeParseJson } from '../../src/util/json.js';
import { buildReply, interpretRequest, readMessages, verdictCount, type Dialect, type InterpretedRequest } from './dialects.js';
import { PrefixCache } from './prefix-cache.js';
import { countTextTokens, encodeChatPrompt, encodeText } from './tokens.js';
import type { DialectTotals, Percentiles, RequestRecord, ResolvedSimulatorOptions, SimulatorOptions, SimulatorStats } from './types.js';

export interface SimulatorHandle {
  /** Base URL for OpenAI clients, ending in `/v1`. */
  url: string;
  port: number;
  stats(options?: { records?: boolean }): SimulatorStats;
  /** Forgets records, peaks, CPU baseline and the prefix cache. */
  reset(): void;
  close(): Promise<void>;
}

function nonNegative(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RubricateError('CONFIG_INVALID', `simulator option ${name} must be a finite number >= 0`, { field: name });
  }
  return value;
}

function positiveInteger(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RubricateError('CONFIG_INVALID', `simulator option ${name} must be an integer >= 1`, { field: name });
  }
  return value;
}

export function resolveSimulatorOptions(options: SimulatorOptions = {}): ResolvedSimulatorOptions {
  const overflow = options.overflow ?? 'queue';
  if (overflow !== 'queue' && overflow !== 'reject') {
    throw new RubricateError('CONFIG_INVALID', "simulator option overflow must be 'queue' or 'reject'", { field: 'overflow' });
  }
  const maxConcurrent = options.maxConcurrent === undefined || options.maxConcurrent === null ? Number.POSITIVE_INFINITY : positiveInteger('maxConcurrent', options.maxConcurrent, 1);
  const prefixCacheBlocks = nonNegative('prefixCacheBlocks', options.prefixCacheBlocks, 100_000);
  if (!Number.isInteger(prefixCacheBlocks)) throw new RubricateError('CONFIG_INVALID', 'simulator option prefixCacheBlocks must be an integer', { field: 'prefixCacheBlocks' });
  const explanationWords = nonNegative('explanationWords', options.explanationWords, 25);
  if (!Number.isInteger(explanationWords)) throw new RubricateError('CONFIG_INVALID', 'simulator option explanationWords must be an integer', { field: 'explanationWords' });
  const port = nonNegative('port', options.port, 0);
  return {
    host: options.host ?? '127.0.0.1',
    port,
    fixedMs: nonNegative('fixedMs', options.fixedMs, 100),
    perInputTokenMs: nonNegative('perInputTokenMs', options.perInputTokenMs, 0),
    perCachedInputTokenMs: nonNegative('perCachedInputTokenMs', options.perCachedInputTokenMs, 0),
    perOutputTokenMs: nonNegative('perOutputTokenMs', options.perOutputTokenMs, 0),
    maxConcurrent,
    overflow,
    retryAfterSeconds: nonNegative('retryAfterSeconds', options.retryAfterSeconds, 1),
    prefixBlockTokens: positiveInteger('prefixBlockTokens', options.prefixBlockTokens, 64),
    prefixCacheBlocks,
    explanationWords,
  };
}

interface Job {
  request: InterpretedRequest;
  model: string;
  stream: boolean;
  includeUsageInStream: boolean;
  promptTokens: number[];
  reply: string;
  outputTokens: number;
  arrivedAt: number;
  response: ServerResponse;
  abandoned: boolean;
}

function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: 0, p90: 0, p99: 0, max: 0, mean: 0 };
  const sorted = Float64Array.from(values).sort();
  // Nearest-rank percentiles: the smallest value with at least p% of values at or below it.
  const rank = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
  let sum = 0;
  for (const value of sorted) sum += value;
  const round = (value: number) => Math.round(value * 1000) / 1000;
  return { p50: round(rank(0.5)), p90: round(rank(0.9)), p99: round(rank(0.99)), max: round(sorted[sorted.length - 1]), mean: round(sum / sorted.length) };
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), ...headers });
  response.end(payload);
}

function sendError(response: ServerResponse, status: number, message: string, type: string, code: string | null = null, headers: Record<string, string> = {}): void {
  sendJson(response, status, { error: { message, type, param: null, code } }, headers);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      text += chunk;
    });
    request.on('end', () => resolve(text));
    request.on('error', reject);
    // A client that hangs up mid-body never sends 'end'; settle instead of waiting forever.
    request.on('close', () => {
      if (!request.complete) reject(new Error('client closed the connection before sending the whole body'));
    });
  });
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const settings = resolveSimulatorOptions(options);
  // The tokenizer builds its tables on first use; do it now, not inside the first request.
  encodeText('warm up the tokenizer');
  const cache = new PrefixCache(settings.prefixBlockTokens, settings.prefixCacheBlocks);
  let records: RequestRecord[] = [];
  let inService = 0;
  let peakInService = 0;
  let peakQueued = 0;
  let resetAt = performance.now();
  let cpuBaseline = process.cpuUsage();
  let completionCounter = 0;
  const queue: Job[] = [];
  let queueHead = 0;
  const timers = new Set<NodeJS.Timeout>();

  function record(entry: RequestRecord): void {
    records.push(entry);
  }

  function sinceReset(time: number): number {
    return Math.round((time - resetAt) * 1000) / 1000;
  }

  function recordFor(job: Job, status: number, queueMs: number, serviceMs: number, cachedInputTokens: number, modelledMs?: number): RequestRecord {
    return {
      ...(modelledMs === undefined ? {} : { modelledMs }),
      dialect: job.request.dialect,
      status,
      arrivedAtMs: sinceReset(job.arrivedAt),
      startedAtMs: sinceReset(job.arrivedAt + queueMs),
      inputTokens: job.promptTokens.length,
      cachedInputTokens,
      outputTokens: status === 200 ? job.outputTokens : 0,
      criteria: verdictCount(job.request),
      queueMs,
      serviceMs,
    };
  }

  function beginService(job: Job): void {
    inService += 1;
    if (inService > peakInService) peakInService = inService;
    const startedAt = performance.now();
    const queueMs = startedAt - job.arrivedAt;
    const { cachedTokens } = cache.lookupAndInsert(job.promptTokens);
    const uncachedTokens = job.promptTokens.length - cachedTokens;
    const delay =
      settings.fixedMs +
      settings.perInputTokenMs * uncachedTokens +
      settings.perCachedInputTokenMs * cachedTokens +
      settings.perOutputTokenMs * job.outputTokens;
    const timer = setTimeout(() => {
      timers.delete(timer);
      const serviceMs = performance.now() - startedAt;
      if (job.abandoned) {
        record(recordFor(job, 499, queueMs, serviceMs, cachedTokens, delay));
      } else {
        record(recordFor(job, 200, queueMs, serviceMs, cachedTokens, delay));
        sendCompletion(job, cachedTokens);
      }
      inService -= 1;
      drainQueue();
    }, delay);
    timers.add(timer);
  }

  function drainQueue(): void {
    while (inService < settings.maxConcurrent && queueHead < queue.length) {
      const job = queue[queueHead];
      queue[queueHead] = undefined as unknown as Job;
      queueHead += 1;
      if (job.abandoned) {
        record(recordFor(job, 499, performance.now() - job.arrivedAt, 0, 0));
        continue;
      }
      beginService(job);
    }
    if (queueHead === queue.length) {
      queue.length = 0;
      queueHead = 0;
    }
  }

  function sendCompletion(job: Job, cachedTokens: number): void {
    completionCounter += 1;
    const id = `chatcmpl-sim-${completionCounter}`;
    const created = Math.floor(Date.now() / 1000);
    const usage = {
      prompt_tokens: job.promptTokens.length,
      completion_tokens: job.outputTokens,
      total_tokens: job.promptTokens.length + job.outputTokens,
      prompt_tokens_details: { cached_tokens: cachedTokens, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    };
    if (!job.stream) {
      sendJson(job.response, 200, {
        id,
        object: 'chat.completion',
        created,
        model: job.model,
        choices: [{ index: 0, message: { role: 'assistant', content: job.reply, refusal: null }, logprobs: null, finish_reason: 'stop' }],
        usage,
        system_fingerprint: 'rubricate-judge-simulator',
      });
      return;
    }
    // Streaming: the whole reply in one delta, then the finish chunk and, if asked, usage.
    const base = { id, object: 'chat.completion.chunk', created, model: job.model, system_fingerprint: 'rubricate-judge-simulator' };
    const events = [
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: job.reply }, logprobs: null, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] },
    ];
    if (job.includeUsageInStream) events.push({ ...base, choices: [], usage } as unknown as (typeof events)[number]);
    job.response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    job.response.end(`${events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('')}data: [DONE]\n\n`);
  }

  async function handleCompletion(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const text = await readBody(request);
    const invalid = (message: string) => {
      const now = sinceReset(performance.now());
      record({ dialect: 'unknown', status: 400, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, criteria: 0, arrivedAtMs: now, startedAtMs: now, queueMs: 0, serviceMs: 0 });
      sendError(response, 400, message, 'invalid_request_error');
    };
    const parsed = safeParseJson(text);
    if (!parsed.ok) return invalid(`request body is not valid JSON: ${parsed.error}`);
    const messages = readMessages(parsed.value);
    if (!messages.ok) return invalid(messages.error);
    const interpretation = interpretRequest(parsed.value, messages.messages);
    if (!interpretation.ok) return invalid(interpretation.error);
    const body = parsed.value as { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } };

    if (inService >= settings.maxConcurrent && settings.overflow === 'reject') {
      const now = sinceReset(performance.now());
      record({
        dialect: interpretation.request.dialect,
        status: 429,
        inputTokens: 0,
        cachedInputTokens: 0,
        outputTokens: 0,
        criteria: verdictCount(interpretation.request),
        arrivedAtMs: now,
        startedAtMs: now,
        queueMs: 0,
        serviceMs: 0,
      });
      sendError(response, 429, 'Rate limit reached for requests (simulated). Please try again later.', 'requests', 'rate_limit_exceeded', {
        'retry-after': String(Math.ceil(settings.retryAfterSeconds)),
        'retry-after-ms': String(Math.round(settings.retryAfterSeconds * 1000)),
      });
      return;
    }

    const reply = buildReply(interpretation.request, settings.explanationWords);
    const job: Job = {
      request: interpretation.request,
      model: typeof body.model === 'string' ? body.model : 'simulated-judge',
      stream: body.stream === true,
      includeUsageInStream: body.stream_options?.include_usage === true,
      promptTokens: encodeChatPrompt(messages.messages),
      reply,
      outputTokens: countTextTokens(reply),
      // Queue time counts from here: reading and tokenising are the simulator's own overhead.
      arrivedAt: performance.now(),
      response,
      abandoned: false,
    };
    response.on('close', () => {
      if (!response.writableEnded) job.abandoned = true;
    });
    if (inService < settings.maxConcurrent) {
      beginService(job);
    } else {
      queue.push(job);
      const waiting = queue.length - queueHead;
      if (waiting > peakQueued) peakQueued = waiting;
    }
  }

  function stats(options: { records?: boolean } = {}): SimulatorStats {
    const byDialect: Partial<Record<Dialect, DialectTotals>> = {};
    const queueTimes: number[] = [];
    const serviceTimes: number[] = [];
    const latencies: number[] = [];
    let completed = 0;
    let rejected = 0;
    let invalid = 0;
    let abandoned = 0;
    let criteria = 0;
    let inputTokens = 0;
    let cachedInputTokens = 0;
    let outputTokens = 0;
    for (const entry of records) {
      if (entry.status === 200) {
        completed += 1;
        criteria += entry.criteria;
        inputTokens += entry.inputTokens;
        cachedInputTokens += entry.cachedInputTokens;
        outputTokens += entry.outputTokens;
        queueTimes.push(entry.queueMs);
        serviceTimes.push(entry.serviceMs);
        latencies.push(entry.queueMs + entry.serviceMs);
      } else if (entry.status === 429) rejected += 1;
      else if (entry.status === 400) invalid += 1;
      else if (entry.status === 499) abandoned += 1;
      if (entry.dialect === 'unknown') continue;
      const totals = (byDialect[entry.dialect] ??= { requests: 0, criteria: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 });
      totals.requests += 1;
      if (entry.status === 200) {
        totals.criteria += entry.criteria;
        totals.inputTokens += entry.inputTokens;
        totals.cachedInputTokens += entry.cachedInputTokens;
        totals.outputTokens += entry.outputTokens;
      }
    }
    const cpu = process.cpuUsage(cpuBaseline);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    return {
      requests: records.length,
      completed,
      rejected,
      invalid,
      abandoned,
      criteria,
      inputTokens,
      cachedInputTokens,
      outputTokens,
      byDialect,
      queueMs: percentiles(queueTimes),
      serviceMs: percentiles(serviceTimes),
      latencyMs: percentiles(latencies),
      peakInService,
      peakQueued,
      elapsedMs: Math.round((performance.now() - resetAt) * 1000) / 1000,
      cpuMs: Math.round(cpuMs * 1000) / 1000,
      cpuMsPerRequest: records.length === 0 ? 0 : Math.round((cpuMs / records.length) * 1000) / 1000,
      options: { ...settings, maxConcurrent: Number.isFinite(settings.maxConcurrent) ? settings.maxConcurrent : null },
      ...(options.records ? { records: records.slice() } : {}),
    };
  }

  function reset(): void {
    records = [];
    cache.clear();
    peakInService = inService;
    peakQueued = queue.length - queueHead;
    resetAt = performance.now();
    cpuBaseline = process.cpuUsage();
  }

  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0].replace(/\/+$/, '');
    const query = (request.url ?? '').includes('?') ? new URLSearchParams((request.url ?? '').split('?')[1]) : new URLSearchParams();
    if (request.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) {
      handleCompletion(request, response).catch((error: unknown) => {
        if (!response.headersSent) sendError(response, 500, error instanceof Error ? error.message : String(error), 'server_error');
        else response.destroy();
      });
      return;
    }
    if (request.method === 'GET' && path === '/__stats') return sendJson(response, 200, stats({ records: query.get('records') === '1' }));
    if (request.method === 'POST' && path === '/__reset') {
      reset();
      return sendJson(response, 200, { ok: true });
    }
    if (request.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      return sendJson(response, 200, { object: 'list', data: [{ id: 'simulated-judge', object: 'model', created: 0, owned_by: 'rubricate' }] });
    }
    // Drain any body so the keep-alive connection stays usable.
    request.resume();
    sendError(response, 404, `no route for ${request.method} ${path || '/'}`, 'invalid_request_error');
  });
  // Long keep-alive so benchmark clients reuse connections rather than reconnecting.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  server.requestTimeout = 0;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostForUrl = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  reset();

  return {
    url: `http://${hostForUrl}:${port}/v1`,
    port,
    stats,
    reset,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
