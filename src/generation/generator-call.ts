/**
 * One generator call with the engine's retry discipline: transport failures that may pass
 * (timeouts, 429, 5xx, dropped connections) are retried with backoff; answers that do not
 * read as the requested JSON are asked again; after a bounded number of attempts the call
 * fails with a RubricateError that says why. A caller never gets half an answer.
 */
import type { ReplyStore } from '../store/index.js';
import { requestKey } from '../engine/request-key.js';
import { addReplyUsage, type Usage } from '../engine/usage.js';
import { RubricateError, toRubricateError } from '../errors.js';
import { extractJson } from '../grading/parse.js';
import type { Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import { seededRandom } from '../util/random.js';
import { sleep } from '../util/sleep.js';

export type ReadResult<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface GeneratorCallOptions<T> {
  generator: Judge;
  request: JudgeRequest;
  /** Template version (`generate/v1`, …): part of the cache key. */
  promptVersion: string;
  /**
   * Turns the reply into a value or a reason to ask again. `json` (default) extracts the JSON
   * value first; `text` hands over the raw reply text (sampled responses).
   */
  read: (value: unknown) => ReadResult<T>;
  replyFormat?: 'json' | 'text';
  /** Calls before the error is final, transport failures and unreadable answers alike. */
  maxAttempts?: number;
  timeoutMs?: number;
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  signal?: AbortSignal;
  /** Reply store: a rerun reads the answers it already has instead of paying for them again. */
  store?: ReplyStore;
  /** Distinguishes repeated samples of one request in the store (rejection sampling, N responses). */
  sample?: number;
  /** Token and call counts are added here. */
  usage?: Usage;
}

export interface GeneratorCallResult<T> {
  value: T;
  reply: JudgeReply;
  /** Calls made (0 when the answer came from the store). */
  calls: number;
  cached: boolean;
}

const defaultMaxAttempts = 4;
/** Jitter only spreads concurrent retries apart; it never reaches a result. */
const jitter = seededRandom(0x6e6);

export async function callGenerator<T>(options: GeneratorCallOptions<T>): Promise<GeneratorCallResult<T>> {
  const { generator, request } = options;
  const maxAttempts = Math.max(1, options.maxAttempts ?? defaultMaxAttempts);
  const key = options.store ? requestKey(generator.provenance, options.promptVersion, request, options.sample ?? 0) : undefined;
  if (key !== undefined) {
    const stored = await options.store!.get(key);
    if (stored) {
      const read = readReply(stored, options);
      if (read.ok) {
        if (options.usage) options.usage.cache_hits += 1;
        return { value: read.value, reply: stored, calls: 0, cached: true };
      }
    }
  }

  let lastFailure: { kind: 'answer'; reason: string } | { kind: 'transport'; error: RubricateError } | undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    if (options.signal?.aborted) throw new RubricateError('DEADLINE_EXCEEDED', 'generation was cancelled');
    if (attempt > 1 && options.usage) options.usage.retries += 1;
    let reply: JudgeReply;
    try {
      if (options.usage) options.usage.calls += 1;
      reply = await callOnce(generator, request, options.timeoutMs ?? 300_000, options.signal);
    } catch (thrown) {
      const error = toRubricateError(thrown, 'JUDGE_CONNECTION');
      if (!error.retryable || options.signal?.aborted) throw error;
      lastFailure = { kind: 'transport', error };
      if (attempt < maxAttempts) await sleep(retryDelay(attempt, error, options), options.signal);
      continue;
    }
    if (options.usage) addReplyUsage(options.usage, reply.usage);
    const read = readReply(reply, options);
    if (read.ok) {
      if (key !== undefined) await options.store!.put(key, reply);
      return { value: read.value, reply, calls: attempt, cached: false };
    }
    const truncated = reply.finishReason === 'length' ? ' (the reply hit the token limit: raise --generator-max-tokens)' : '';
    lastFailure = { kind: 'answer', reason: `${read.reason}${truncated}` };
  }
  if (lastFailure?.kind === 'transport') {
    const { error } = lastFailure;
    throw new RubricateError(error.code, `${error.message} (after ${maxAttempts} attempts)`, error.details, { cause: error });
  }
  throw new RubricateError('JUDGE_UNPARSEABLE', `generator answer rejected after ${maxAttempts} attempt${maxAttempts === 1 ? '' : 's'}: ${lastFailure?.reason ?? 'no answer'}`, {
    generator: generator.provenance.id,
    promptVersion: options.promptVersion,
  });
}

function readReply<T>(reply: JudgeReply, options: GeneratorCallOptions<T>): ReadResult<T> {
  if (options.replyFormat === 'text') return options.read(reply.text);
  const extracted = extractJson(reply.text);
  if (!extracted.ok) return { ok: false, reason: extracted.reason };
  return options.read(extracted.value);
}

async function callOnce(generator: Judge, request: JudgeRequest, timeoutMs: number, outer?: AbortSignal): Promise<JudgeReply> {
  const timeout = new AbortController();
  const timer = setTimeout(() => {
    timeout.abort(new RubricateError('JUDGE_TIMEOUT', `generator did not answer within ${timeoutMs} ms`, { timeoutMs }));
  }, timeoutMs);
  // A derived signal instead of a listener on the caller's: many calls in flight share that signal.
  const signal = outer ? AbortSignal.any([outer, timeout.signal]) : timeout.signal;
  try {
    return await generator.complete(request, { signal });
  } catch (error) {
    if (timeout.signal.aborted && RubricateError.isInstance(timeout.signal.reason)) throw timeout.signal.reason;
    if (outer?.aborted) throw new RubricateError('DEADLINE_EXCEEDED', 'generation was cancelled');
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Exponential backoff with jitter; a server's Retry-After wins when it asks for longer. */
function retryDelay(attempt: number, error: RubricateError, options: Pick<GeneratorCallOptions<unknown>, 'retryBaseDelayMs' | 'retryMaxDelayMs'>): number {
  const base = options.retryBaseDelayMs ?? 500;
  const exponential = Math.min(options.retryMaxDelayMs ?? 30_000, base * 2 ** (attempt - 1));
  const asked = error.details.retryAfterMs;
  if (typeof asked === 'number') return Math.min(Math.max(asked, 0), 10 * 60_000) + jitter() * Math.min(250, base);
  return exponential * (0.5 + jitter() * 0.5);
}

