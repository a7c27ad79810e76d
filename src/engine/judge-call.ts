/**
 * The one judge-call loop. Grading (the engine, for per-criterion, batched, holistic,
 * pairwise and evidence calls) and rubric generation send their requests through it, so
 * attempts, backoff, Retry-After, the per-call timeout, cancellation and the split between
 * errors worth retrying and errors that stop the run are decided in one place.
 *
 * It never throws and never invents a reply: it returns the reply, or the error that ended
 * the call with its reason (and how many attempts it took).
 */
import { setMaxListeners } from 'node:events';
import { RubricateError, toRubricateError, type ErrorCode } from '../errors.js';
import type { JudgeReply } from '../judges/types.js';
import { sleep } from '../util/sleep.js';
import type { CallOutcome } from './limiter.js';

/** Default cap on a judge's Retry-After per retry. */
export const defaultMaxRetryAfterMs = 60_000;

export interface JudgeCallPolicy {
  /** Calls before the error is final (1 = no retry). */
  maxAttempts: number;
  /** Per call: a call not answered by then is aborted with JUDGE_TIMEOUT (and may be retried). */
  timeoutMs: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  /** Longest wait a server's Retry-After may impose per retry (also capped by `timeoutMs`). */
  maxRetryAfterMs?: number;
  /** Cancels everything: a call in flight is aborted, a backoff wait ends, no call starts (DEADLINE_EXCEEDED). */
  signal?: AbortSignal;
  /** Once aborted, no new call starts; a call in flight goes on (a graceful stop). */
  stopSignal?: AbortSignal;
  /** Who answers and what is cancelled, for messages: `judge`/`grading` (default) or `generator`/`generation`. */
  callee?: string;
  activity?: string;
  /** Source of jitter (tests pass a seeded one). Jitter only spreads retries apart; it never reaches a result. */
  random?: () => number;
}

/** Where the caller takes part in each attempt. */
export interface JudgeCallHooks {
  /** Concurrency slots (the engine's adaptive limiter): taken before each attempt, given back with its outcome. */
  slots?: { acquire(urgent: boolean): Promise<void>; release(outcome: CallOutcome): void };
  /** An error that stops the loop before an attempt starts (another call already stopped the run). */
  stopReason?(): RubricateError | undefined;
  onSuccess?(): void;
  /** Each failed attempt; returning an error ends the loop with it as fatal (a circuit breaker opening). */
  onFailure?(error: RubricateError): RubricateError | undefined;
  onRetry?(error: RubricateError, delayMs: number): void;
}

export interface JudgeCallResult {
  reply?: JudgeReply;
  error?: RubricateError;
  /** Calls started (attempts that reached the judge). */
  calls: number;
  retries: number;
  /** The error is one no later call can escape: the caller should stop its run. */
  fatal: boolean;
}

/** Errors no later call can escape (bad key, no judge, a request the judge never accepts, no such model). */
const fatalCodes = new Set<ErrorCode>(['JUDGE_AUTH', 'JUDGE_UNAVAILABLE', 'JUDGE_UNSUPPORTED', 'JUDGE_NOT_FOUND']);

function isFatalJudgeError(error: RubricateError): boolean {
  return fatalCodes.has(error.code);
}

/** How an attempt went, for the limiter: 429, 503 and Anthropic's 529 "overloaded" lower concurrency. */
function callOutcomeOf(error: RubricateError): CallOutcome {
  if (error.code === 'JUDGE_RATE_LIMITED') return 'overloaded';
  if (error.code === 'JUDGE_SERVER_ERROR' && (error.details.status === 503 || error.details.status === 529)) return 'overloaded';
  return 'failure';
}

/**
 * The wait before retry `attempt + 1`: exponential backoff with jitter, or the server's
 * Retry-After (honoured up to `maxRetryAfterMs` and never beyond `timeoutMs`) when it sent one.
 */
export function retryDelay(attempt: number, error: RubricateError, policy: Pick<JudgeCallPolicy, 'retryBaseDelayMs' | 'retryMaxDelayMs' | 'maxRetryAfterMs' | 'timeoutMs' | 'random'>): number {
  const random = policy.random ?? Math.random;
  const asked = error.details.retryAfterMs;
  if (typeof asked === 'number' && Number.isFinite(asked)) {
    const cap = Math.min(policy.maxRetryAfterMs ?? defaultMaxRetryAfterMs, policy.timeoutMs);
    return Math.min(Math.max(asked, 0), cap) + random() * Math.min(250, policy.retryBaseDelayMs);
  }
  const exponential = Math.min(policy.retryMaxDelayMs, policy.retryBaseDelayMs * 2 ** (attempt - 1));
  return exponential * (0.5 + random() * 0.5);
}

/** The error with `(after N attempts)` at the end of its message (replacing a count already there). */
export function afterAttempts(error: RubricateError, attempts: number): RubricateError {
  if (attempts <= 1) return error;
  const message = `${error.message.replace(/ \(after \d+ attempts\)$/, '')} (after ${attempts} attempts)`;
  if (message === error.message) return error;
  return new RubricateError(error.code, message, error.details, { cause: error });
}

/** Signals whose listener warning is lifted. */
const widened = new WeakSet<AbortSignal>();

/**
 * Every call in flight listens on its run's signal (and stops listening when it ends): that is
 * `concurrency` listeners at once, not a leak, so Node's warning threshold is lifted.
 */
export function allowListenerPerCall(signal: AbortSignal): void {
  if (widened.has(signal)) return;
  setMaxListeners(0, signal);
  widened.add(signal);
}

/**
 * One attempt: `send` gets a signal that aborts on the timeout or on `policy.signal`;
 * either way the call rejects with the reason (JUDGE_TIMEOUT or DEADLINE_EXCEEDED).
 */
async function attempt(send: (signal: AbortSignal) => Promise<JudgeReply>, policy: JudgeCallPolicy): Promise<JudgeReply> {
  const controller = new AbortController();
  const { timeoutMs } = policy;
  const timer = setTimeout(() => {
    controller.abort(new RubricateError('JUDGE_TIMEOUT', `${policy.callee ?? 'judge'} did not answer within ${timeoutMs} ms`, { timeoutMs }));
  }, timeoutMs);
  const outer = policy.signal;
  // A listener removed when the call ends (AbortSignal.any keeps derived signals alive until collected).
  const onOuterAbort = () => controller.abort(cancelled(policy));
  if (outer) allowListenerPerCall(outer);
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  try {
    return await send(controller.signal);
  } catch (error) {
    if (controller.signal.aborted && RubricateError.isInstance(controller.signal.reason)) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuterAbort);
  }
}

function cancelled(policy: JudgeCallPolicy): RubricateError {
  return new RubricateError('DEADLINE_EXCEEDED', `${policy.activity ?? 'grading'} was cancelled`);
}

/**
 * Calls until a reply comes, the error is not retryable, the attempts run out, the call is
 * cancelled or the run is stopped. Each failed attempt is reported to `hooks.onFailure`.
 */
export async function callJudge(send: (signal: AbortSignal) => Promise<JudgeReply>, policy: JudgeCallPolicy, hooks: JudgeCallHooks = {}): Promise<JudgeCallResult> {
  const maxAttempts = Math.max(1, policy.maxAttempts);
  let calls = 0;
  let retries = 0;
  const stop = (error: RubricateError): JudgeCallResult => ({ error, calls, retries, fatal: true });
  for (let attemptNumber = 1; ; attemptNumber += 1) {
    const before = stopBeforeStart(policy, hooks);
    if (before) return before.fatal ? stop(before.error) : { error: before.error, calls, retries, fatal: false };
    await hooks.slots?.acquire(attemptNumber > 1);
    // The run may have stopped while this call waited for a slot.
    const waited = stopBeforeStart(policy, hooks);
    if (waited) {
      hooks.slots?.release('failure');
      return waited.fatal ? stop(waited.error) : { error: waited.error, calls, retries, fatal: false };
    }
    calls += 1;
    let outcome: CallOutcome = 'failure';
    let error: RubricateError;
    try {
      const reply = await attempt(send, policy);
      outcome = 'success';
      hooks.onSuccess?.();
      return { reply, calls, retries, fatal: false };
    } catch (thrown) {
      error = toRubricateError(thrown, 'JUDGE_CONNECTION');
      outcome = callOutcomeOf(error);
    } finally {
      hooks.slots?.release(outcome);
    }
    const stopping = hooks.onFailure?.(error);
    if (stopping) return stop(stopping);
    if (isFatalJudgeError(error)) return stop(error);
    if (!error.retryable || attemptNumber >= maxAttempts) {
      return { error: afterAttempts(error, attemptNumber), calls, retries, fatal: false };
    }
    const delay = retryDelay(attemptNumber, error, policy);
    retries += 1;
    hooks.onRetry?.(error, delay);
    await sleep(delay, policy.signal);
  }
}

/** Why no attempt may start now: the run stopped (fatal), it was cancelled, or it is stopping. */
function stopBeforeStart(policy: JudgeCallPolicy, hooks: JudgeCallHooks): { error: RubricateError; fatal: boolean } | undefined {
  const fatal = hooks.stopReason?.();
  if (fatal) return { error: fatal, fatal: true };
  if (policy.signal?.aborted) return { error: cancelled(policy), fatal: false };
  if (policy.stopSignal?.aborted) return { error: new RubricateError('DEADLINE_EXCEEDED', `${policy.activity ?? 'grading'} was stopped before this call started`), fatal: false };
  return undefined;
}
