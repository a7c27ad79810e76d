/**
 * One generator call through the judge-call loop grading uses (`engine/judge-call.ts`):
 * transport failures that may pass (timeouts, 429, 5xx, dropped connections) are retried with
 * backoff and Retry-After; answers that do not read as the requested JSON are asked again,
 * within the same attempt budget; after it the call fails with a RubricateError that says
 * why. A caller never gets half an answer.
 */
import type { ReplyStore } from '../store/index.js';
import { requestKey } from '../engine/request-key.js';
import { addReplyUsage, type Usage } from '../engine/usage.js';
import { afterAttempts, callJudge } from '../engine/judge-call.js';
import { RubricateError } from '../errors.js';
import { extractJson } from '../grading/parse.js';
import type { Judge, JudgeReply, JudgeRequest } from '../judges/types.js';

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
  /** Longest wait a server's Retry-After may impose per retry (default 60 s, never beyond the timeout). */
  maxRetryAfterMs?: number;
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

  let calls = 0;
  let lastReason = 'no answer';
  while (calls < maxAttempts) {
    // Asking again after an unreadable answer is a retry like any other.
    if (calls > 0 && options.usage) options.usage.retries += 1;
    const result = await callJudge((signal) => generator.complete(request, { signal }), {
      maxAttempts: maxAttempts - calls,
      timeoutMs: options.timeoutMs ?? 300_000,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
      retryMaxDelayMs: options.retryMaxDelayMs ?? 30_000,
      maxRetryAfterMs: options.maxRetryAfterMs,
      signal: options.signal,
      callee: 'generator',
      activity: 'generation',
    });
    calls += result.calls;
    if (options.usage) {
      options.usage.calls += result.calls;
      options.usage.retries += result.retries;
    }
    if (!result.reply) throw afterAttempts(result.error!, calls);
    const reply = result.reply;
    if (options.usage) addReplyUsage(options.usage, reply.usage);
    const read = readReply(reply, options);
    if (read.ok) {
      if (key !== undefined) await options.store!.put(key, reply);
      return { value: read.value, reply, calls, cached: false };
    }
    const truncated = reply.finishReason === 'length' ? ' (the reply hit the token limit: raise --generator-max-tokens)' : '';
    lastReason = `${read.reason}${truncated}`;
  }
  throw new RubricateError('JUDGE_UNPARSEABLE', `generator answer rejected after ${calls} attempt${calls === 1 ? '' : 's'}: ${lastReason}`, {
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
