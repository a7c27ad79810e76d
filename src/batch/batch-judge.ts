/**
 * A judge that answers through a provider's Batch API (OpenAI, Azure OpenAI, Anthropic). The
 * engine calls it like any judge (same tasks, same cache keys, same reading of replies, same
 * retries); instead of one HTTP call per request it gathers the requests the engine makes,
 * submits them as batches once the engine has nothing more to ask for the moment, polls them,
 * and resolves each call when its batch ends. Request bodies are the synchronous judge's own
 * (`requestBody`), so a reply got by batch and one got synchronously are interchangeable in
 * the cache.
 *
 * Provider limits split the work: requests per batch, bytes per batch input, and (when
 * given) the input tokens all open batches may hold in the provider's queue: a batch that
 * would go over waits until earlier ones end.
 *
 * Resumable by construction: the ledger records each batch and its custom ids before the
 * first network call, then each step (file id, batch id) before the next; a rerun attaches
 * every call whose custom id is in an open batch instead of sending it again.
 *
 * The work is split by concern over one state object (`batch-state.ts`): gathering and submitting
 * (`batch-submit.ts`), polling (`batch-poll.ts`), and reading results into replies (`batch-read.ts`).
 */
import { RubricateError } from '../errors.js';
import type { CompleteOptions, Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import { extendJudge, wrapJudge } from '../judges/middleware.js';
import { allowListenerPerCall } from '../engine/judge-call.js';
import type { BatchService } from './batch-service.js';
import { tokenizerFor } from './dry-run.js';
import type { BatchLedger } from './ledger.js';
import type { BatchEvent, BatchFallback, BatchSettings, BatchState, BodyBuildingJudge, Waiter } from './batch-state.js';
import { deliver } from './batch-read.js';
import { customIdOf, enqueue } from './batch-submit.js';
import { schedulePoll } from './batch-poll.js';

export type { BatchEvent, BodyBuildingJudge } from './batch-state.js';

export interface BatchJudgeOptions {
  inner: BodyBuildingJudge;
  service: BatchService;
  ledger: BatchLedger;
  /**
   * Which model of the command this is (`judge` by default, `generator`): kept in the ledger, so
   * that when a generator and a judge share a model and endpoint each attaches only to its own batches.
   */
  role?: string;
  /** Requests that got no answer inside a batch: a new batch (default), or the synchronous judge. */
  fallback?: BatchFallback;
  pollIntervalMs?: number;
  /** Quiet time after the last new request before the gathered ones are submitted. */
  gatherMs?: number;
  /** Lower than the provider's limits (never higher). */
  maxRequestsPerBatch?: number;
  maxBytesPerBatch?: number;
  /** Input tokens all open batches may hold at once (the provider's enqueued-token limit); no limit when absent. */
  maxEnqueuedTokens?: number;
  onEvent?: (event: BatchEvent) => void;
}

export interface BatchJudge extends Judge {
  /** Requests sent in batches by this process (attached ones excluded). */
  readonly submittedRequests: number;
  /** Marks every finished batch as delivered (after a run that completed). */
  finish(): void;
  close(): Promise<void>;
}

/** Statuses of a ledger batch that end it (every provider's words). */
const endedStatuses: ReadonlySet<string> = new Set(['failed', 'completed', 'expired', 'cancelled', 'ended', 'abandoned']);

function settingsOf(options: BatchJudgeOptions): BatchSettings {
  const { inner, service, ledger } = options;
  const model = inner.provenance.model;
  return {
    inner,
    service,
    ledger,
    provider: service.provider,
    endpoint: service.endpoint,
    model,
    role: options.role ?? 'judge',
    fallback: options.fallback,
    maxRequests: Math.min(options.maxRequestsPerBatch ?? service.limits.maxRequests, service.limits.maxRequests),
    maxBytes: Math.min(options.maxBytesPerBatch ?? service.limits.maxBytes, service.limits.maxBytes),
    maxEnqueuedTokens: options.maxEnqueuedTokens,
    countTokens: options.maxEnqueuedTokens === undefined ? undefined : tokenizerFor(model).count,
    pollIntervalMs: options.pollIntervalMs ?? 30_000,
    gatherMs: options.gatherMs ?? 1000,
    emit: (event) => options.onEvent?.(event),
  };
}

function initialState(settings: BatchSettings): BatchState {
  const state: BatchState = {
    ...settings,
    waiters: new Map(),
    outcomes: new Map(),
    attachedTo: new Map(),
    occurrences: new Map(),
    active: new Map(),
    pending: [],
    pendingBytes: settings.service.envelopeBytes,
    pendingTokens: 0,
    lastJoinedAt: 0,
    longestGap: 0,
    gatherTimer: undefined,
    pollTimer: undefined,
    polling: false,
    closed: false,
    submitted: 0,
    submitting: Promise.resolve(),
    resultReadFailures: new Map(),
    roomFreed: undefined,
    schedulePoll: (delay) => schedulePoll(state, delay),
  };
  return state;
}

/** Batches an earlier process left in flight: their requests are attached, never sent again. */
function attachEarlierBatches(state: BatchState): void {
  const { ledger } = state;
  for (const batch of ledger.open(state.provider, state.endpoint, state.model, state.role)) {
    if (batch.status === 'planned') {
      // Killed before the first network call: nothing was sent; its requests may be sent anew.
      ledger.update(batch.localId, { status: 'abandoned', delivered: true });
      continue;
    }
    const ids = ledger.customIds(batch.localId);
    for (const customId of ids) state.attachedTo.set(customId, batch.localId);
    state.active.set(batch.localId, batch);
    state.emit({ type: 'attached', localId: batch.localId, batchId: batch.batchId, requests: ids.length });
  }
  if (state.active.size > 0) schedulePoll(state, 0);
}

export function createBatchJudge(options: BatchJudgeOptions): BatchJudge {
  const state = initialState(settingsOf(options));
  attachEarlierBatches(state);
  // The calls never reach the synchronous judge (but through the `sync` fallback): each waits for its batch.
  const judge = wrapJudge(options.inner, {
    wrapComplete: ({ request, options: callOptions }) => completeByBatch(state, request, callOptions),
    wrapClose: (closeInner) => closeBatchJudge(state, closeInner),
  });
  const members = {
    get submittedRequests() {
      return state.submitted;
    },
    finish() {
      for (const batch of state.ledger.open(state.provider, state.endpoint, state.model, state.role)) {
        if (endedStatuses.has(batch.status)) state.ledger.update(batch.localId, { delivered: true });
      }
    },
  };
  return extendJudge(judge, members);
}

async function closeBatchJudge(state: BatchState, closeInner: () => Promise<void>): Promise<void> {
  state.closed = true;
  if (state.gatherTimer) clearTimeout(state.gatherTimer);
  if (state.pollTimer) clearTimeout(state.pollTimer);
  state.roomFreed?.();
  await state.submitting.catch(() => undefined);
  await closeInner();
}

async function completeByBatch(state: BatchState, request: JudgeRequest, { signal }: CompleteOptions): Promise<JudgeReply> {
  if (state.closed) throw new RubricateError('JUDGE_UNAVAILABLE', 'the batch judge is closed');
  const body = state.inner.requestBody(request);
  const customId = customIdOf(state, body);
  return new Promise<JudgeReply>((resolveCall, rejectCall) => {
    // The abort listener goes once the call is settled (a run's signal outlives thousands of calls).
    const onAbort = () => {
      if (state.waiters.get(customId) === waiter) state.waiters.delete(customId);
      rejectCall(signal.reason ?? new RubricateError('DEADLINE_EXCEEDED', 'grading was cancelled'));
    };
    const resolve = (reply: JudgeReply) => {
      signal.removeEventListener('abort', onAbort);
      resolveCall(reply);
    };
    const reject = (error: unknown) => {
      signal.removeEventListener('abort', onAbort);
      rejectCall(error);
    };
    const waiter: Waiter = { request, resolve, reject, signal };
    const early = state.outcomes.get(customId);
    if (early) {
      state.outcomes.delete(customId);
      deliver(state, waiter, early);
      return;
    }
    state.waiters.set(customId, waiter);
    // Calls that share a signal (a run's) each listen on it while they wait: many at once, not a leak.
    allowListenerPerCall(signal);
    signal.addEventListener('abort', onAbort, { once: true });
    if (state.attachedTo.has(customId)) return;
    enqueue(state, customId, body, waiter);
  });
}
