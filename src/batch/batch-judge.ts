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
 */
import { randomUUID } from 'node:crypto';
import { RubricateError } from '../errors.js';
import type { CompleteOptions, Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import { sha256Hex } from '../util/hash.js';
import { allowListenerPerCall } from '../engine/judge-call.js';
import type { BatchAnswer, BatchResult, BatchService, RemoteBatch } from './batch-service.js';
import { requestInputTokens, tokenizerFor } from './dry-run.js';
import type { BatchLedger, LedgerBatch } from './ledger.js';

type BatchFallback = 'batch' | 'sync';

/** A synchronous judge that can show the body it would send. */
export type BodyBuildingJudge = Judge & { requestBody(request: JudgeRequest): Record<string, unknown> };

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

export type BatchEvent =
  | { type: 'submitted'; localId: string; batchId: string; requests: number }
  | { type: 'attached'; localId: string; batchId: string | null; requests: number }
  | { type: 'status'; batchId: string; status: string }
  | { type: 'finished'; batchId: string; status: string; answered: number; failed: number }
  | { type: 'waiting'; localId: string; enqueuedTokens: number; batchTokens: number }
  | { type: 'warning'; message: string };

interface Waiter {
  request: JudgeRequest;
  resolve: (reply: JudgeReply) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal;
}

/** A result waiting for its caller (read once the request is known), or an error. */
type Outcome = { result: BatchResult } | { error: RubricateError };

interface PendingEntry {
  customId: string;
  entry: string;
  bytes: number;
  tokens: number;
}

export interface BatchJudge extends Judge {
  /** Requests sent in batches by this process (attached ones excluded). */
  readonly submittedRequests: number;
  /** Marks every finished batch as delivered (after a run that completed). */
  finish(): void;
  close(): Promise<void>;
}

/** Longest quiet time the gathering waits for, however slowly requests come. */
const maxGatherMs = 30_000;

/** Reads of a finished batch's results that may fail (a 404 output file, a 5xx) before its requests are failed. */
const maxResultReads = 5;

/** Statuses of a ledger batch that end it (every provider's words). */
const endedStatuses: ReadonlySet<string> = new Set(['failed', 'completed', 'expired', 'cancelled', 'ended', 'abandoned']);

/** Two readings of results for one request that give the same answer (reply text, or error code). */
function sameAnswer(first: BatchAnswer, second: BatchAnswer): boolean {
  if ('reply' in first && 'reply' in second) return first.reply.text === second.reply.text && first.reply.finishReason === second.reply.finishReason;
  if ('error' in first && 'error' in second) return first.error.code === second.error.code;
  return false;
}

export function createBatchJudge(options: BatchJudgeOptions): BatchJudge {
  const { inner, service, ledger } = options;
  const provider = service.provider;
  const model = inner.provenance.model;
  const endpoint = service.endpoint;
  const role = options.role ?? 'judge';
  const maxRequests = Math.min(options.maxRequestsPerBatch ?? service.limits.maxRequests, service.limits.maxRequests);
  const maxBytes = Math.min(options.maxBytesPerBatch ?? service.limits.maxBytes, service.limits.maxBytes);
  const maxEnqueuedTokens = options.maxEnqueuedTokens;
  const countTokens = maxEnqueuedTokens === undefined ? undefined : tokenizerFor(model).count;
  const pollIntervalMs = options.pollIntervalMs ?? 30_000;
  const gatherMs = options.gatherMs ?? 1000;
  const emit = (event: BatchEvent) => options.onEvent?.(event);

  const waiters = new Map<string, Waiter>();
  const outcomes = new Map<string, Outcome>();
  /** Custom ids held by an open batch of the ledger (from this run or an earlier one). */
  const attachedTo = new Map<string, string>();
  const occurrences = new Map<string, number>();
  const active = new Map<string, LedgerBatch>();
  let pending: PendingEntry[] = [];
  let pendingBytes = service.envelopeBytes;
  let pendingTokens = 0;
  let gatherTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let polling = false;
  let closed = false;
  let submitted = 0;
  let submitting: Promise<void> = Promise.resolve();
  /** Failed reads of each finished batch's results, by local id. */
  const resultReadFailures = new Map<string, number>();
  /** Called when a batch ends, so a batch waiting for queue room can go. */
  let roomFreed: (() => void) | undefined;

  // Batches an earlier process left in flight: their requests are attached, never sent again.
  for (const batch of ledger.open(provider, endpoint, model, role)) {
    if (batch.status === 'planned') {
      // Killed before the first network call: nothing was sent; its requests may be sent anew.
      ledger.update(batch.localId, { status: 'abandoned', delivered: true });
      continue;
    }
    const ids = ledger.customIds(batch.localId);
    for (const customId of ids) attachedTo.set(customId, batch.localId);
    active.set(batch.localId, batch);
    emit({ type: 'attached', localId: batch.localId, batchId: batch.batchId, requests: ids.length });
  }
  if (active.size > 0) schedulePoll(0);

  function customIdOf(body: Record<string, unknown>): string {
    const hash = sha256Hex(JSON.stringify(body)).slice(0, 32);
    const occurrence = occurrences.get(hash) ?? 0;
    occurrences.set(hash, occurrence + 1);
    return `rb-${hash}-${occurrence}`;
  }

  function settle(customId: string, outcome: Outcome): void {
    attachedTo.delete(customId);
    const waiter = waiters.get(customId);
    if (!waiter) {
      outcomes.set(customId, outcome);
      return;
    }
    waiters.delete(customId);
    deliver(waiter, outcome);
  }

  function deliver(waiter: Waiter, outcome: Outcome): void {
    const answer: BatchAnswer = 'result' in outcome ? service.read(outcome.result, waiter.request) : outcome;
    if ('reply' in answer) {
      waiter.resolve(answer.reply);
      return;
    }
    if (options.fallback === 'sync') {
      inner.complete(waiter.request, { signal: waiter.signal }).then(waiter.resolve, waiter.reject);
      return;
    }
    waiter.reject(answer.error);
  }

  function schedulePoll(delay: number): void {
    if (pollTimer || closed) return;
    pollTimer = setTimeout(() => {
      pollTimer = undefined;
      void pollOnce();
    }, delay);
  }

  /** When the last request joined the batch being gathered, and the longest gap between two that joined it. */
  let lastJoinedAt = 0;
  let longestGap = 0;

  function scheduleGather(): void {
    const now = Date.now();
    if (pending.length > 1) longestGap = Math.max(longestGap, now - lastJoinedAt);
    lastJoinedAt = now;
    if (gatherTimer) clearTimeout(gatherTimer);
    // Quiet for longer than the engine's own pauses (a busy machine plans slowly): the engine has nothing more to ask for now.
    gatherTimer = setTimeout(() => {
      gatherTimer = undefined;
      flush();
    }, Math.max(gatherMs, Math.min(longestGap * 4, maxGatherMs)));
  }

  function enqueuedTokens(): number {
    let total = 0;
    for (const batch of active.values()) total += batch.enqueuedTokens;
    return total;
  }

  /** Resolves once the open batches leave room for this many tokens in the provider's queue. */
  async function roomFor(localId: string, tokens: number): Promise<void> {
    if (maxEnqueuedTokens === undefined) return;
    let announced = false;
    while (!closed && active.size > 0 && enqueuedTokens() + tokens > maxEnqueuedTokens) {
      if (!announced) emit({ type: 'waiting', localId, enqueuedTokens: enqueuedTokens(), batchTokens: tokens });
      announced = true;
      await new Promise<void>((resolve) => (roomFreed = resolve));
    }
  }

  function flush(): void {
    if (pending.length === 0) return;
    const entries = pending;
    pending = [];
    longestGap = 0;
    pendingBytes = service.envelopeBytes;
    pendingTokens = 0;
    submitting = submitting
      .then(() => submit(entries))
      .catch((error: unknown) => {
        // The batch could not be submitted: its calls fail with the reason (the engine retries what is retryable).
        const failure = RubricateError.isInstance(error) ? error : new RubricateError('JUDGE_CONNECTION', `batch submission failed: ${String(error)}`);
        for (const { customId } of entries) settle(customId, { error: failure });
      });
  }

  async function submit(entries: PendingEntry[]): Promise<void> {
    const localId = `rbatch_${randomUUID()}`;
    const tokens = entries.reduce((total, entry) => total + entry.tokens, 0);
    await roomFor(localId, tokens);
    if (closed) throw new RubricateError('DEADLINE_EXCEEDED', 'the batch judge closed before this batch was sent');
    const customIds = entries.map((entry) => entry.customId);
    ledger.plan({ localId, provider, endpoint, model, role, enqueuedTokens: tokens }, customIds);
    for (const customId of customIds) attachedTo.set(customId, localId);
    let batch: RemoteBatch;
    try {
      batch = await service.submit(
        localId,
        entries.map((entry) => entry.entry),
        ledger,
      );
    } catch (error) {
      // Refused by the API (it answered): no batch exists, so the ledger entry ends here; a
      // network failure leaves it open, for a rerun to look for the batch.
      if (RubricateError.isInstance(error) && typeof error.details.status === 'number') ledger.update(localId, { status: 'abandoned', delivered: true });
      for (const customId of customIds) if (attachedTo.get(customId) === localId) attachedTo.delete(customId);
      throw error;
    }
    submitted += entries.length;
    active.set(localId, { ...ledger.get(localId)! });
    emit({ type: 'submitted', localId, batchId: batch.id, requests: entries.length });
    schedulePoll(pollIntervalMs);
  }

  /** An earlier run's batch that turned out never to have been made: its requests are sent anew. */
  function abandon(batch: LedgerBatch): void {
    ledger.update(batch.localId, { status: 'abandoned', delivered: true });
    active.delete(batch.localId);
    emit({ type: 'warning', message: `batch ${batch.localId} was never created at the provider; its ${batch.requestCount} request(s) are sent again` });
    for (const customId of ledger.customIds(batch.localId)) {
      if (attachedTo.get(customId) !== batch.localId) continue;
      attachedTo.delete(customId);
      const waiter = waiters.get(customId);
      if (waiter) enqueue(customId, inner.requestBody(waiter.request), waiter);
    }
    roomFreed?.();
  }

  async function pollOnce(): Promise<void> {
    if (polling || closed) return;
    polling = true;
    try {
      for (const [localId, batch] of [...active]) {
        try {
          if (!batch.batchId) {
            const found = await service.recover(batch, ledger);
            if (found === undefined) {
              abandon(batch);
              continue;
            }
            batch.batchId = found;
          }
          const remote = await service.retrieve(batch.batchId);
          if (remote.status !== batch.status) {
            batch.status = remote.status;
            ledger.update(localId, { status: remote.status });
            emit({ type: 'status', batchId: batch.batchId, status: remote.status });
          }
          if (remote.finished) {
            if (!(await collectOrGiveUp(batch, remote))) continue;
            active.delete(localId);
            roomFreed?.();
          }
        } catch (error) {
          // A poll that failed is tried again at the next interval; the batch keeps running at the provider.
          emit({ type: 'warning', message: `polling batch ${batch.batchId ?? localId}: ${error instanceof Error ? error.message : String(error)}` });
        }
      }
    } finally {
      polling = false;
    }
    if (active.size > 0) schedulePoll(pollIntervalMs);
  }

  /**
   * Reads a finished batch's results; true once they are delivered. A read that fails is tried at
   * the next polls; after `maxResultReads` failed reads the batch's requests fail with the reason
   * (retried in a new batch, or answered synchronously with the sync fallback), instead of the
   * batch being polled for ever.
   */
  async function collectOrGiveUp(batch: LedgerBatch, remote: RemoteBatch): Promise<boolean> {
    try {
      await collect(batch, remote);
      resultReadFailures.delete(batch.localId);
      return true;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const failures = (resultReadFailures.get(batch.localId) ?? 0) + 1;
      if (failures < maxResultReads) {
        resultReadFailures.set(batch.localId, failures);
        emit({ type: 'warning', message: `batch ${batch.batchId} ended ${remote.status}, but its results could not be read (try ${failures} of ${maxResultReads}): ${reason}` });
        return false;
      }
      resultReadFailures.delete(batch.localId);
      const unanswered = ledger.customIds(batch.localId).filter((customId) => attachedTo.get(customId) === batch.localId);
      for (const customId of unanswered) {
        settle(customId, {
          error: new RubricateError('JUDGE_BATCH_UNANSWERED', `batch ${batch.batchId} ended ${remote.status}, but its results could not be read in ${maxResultReads} tries: ${reason}`, { endpoint, batchId: batch.batchId, serverCode: 'results_unreadable' }),
        });
      }
      ledger.update(batch.localId, { status: remote.status, failed: unanswered.length });
      emit({ type: 'finished', batchId: batch.batchId!, status: remote.status, answered: 0, failed: unanswered.length });
      return true;
    }
  }

  /**
   * One result per custom id: the provider promises unique ids, so a file that repeats one with
   * answers that differ cannot say which is the request's answer; that request fails (retried,
   * then reported), never taking either. The same answer twice is one answer.
   */
  function uniqueResults(batch: LedgerBatch, results: readonly BatchResult[]): Array<{ result: BatchResult; answer: BatchAnswer }> {
    const byId = new Map<string, { result: BatchResult; answer: BatchAnswer; conflict?: RubricateError }>();
    for (const result of results) {
      // Read once here for the counts; the caller's copy is read with its request (Anthropic's tool name).
      const answer = service.read(result, undefined);
      const first = byId.get(result.customId);
      if (!first) {
        byId.set(result.customId, { result, answer });
        continue;
      }
      if (first.conflict || sameAnswer(first.answer, answer)) continue;
      first.conflict = new RubricateError('JUDGE_BATCH_UNANSWERED', `batch ${batch.batchId} returned two different results for this request (custom id ${result.customId}): neither is used`, {
        endpoint,
        batchId: batch.batchId,
        serverCode: 'duplicate_custom_id',
      });
    }
    return [...byId.values()].map((entry) => (entry.conflict ? { result: entry.result, answer: { error: entry.conflict } } : entry));
  }

  async function collect(batch: LedgerBatch, remote: RemoteBatch): Promise<void> {
    const { results, unreadable } = await service.results(remote);
    for (const bad of unreadable) emit({ type: 'warning', message: `batch ${batch.batchId}: result line ${bad.line} is not a result; its request counts as unanswered` });
    const expected = new Set(ledger.customIds(batch.localId));
    let answeredCount = 0;
    let failedCount = 0;
    let promptTokens = 0;
    let cachedPromptTokens = 0;
    let completionTokens = 0;
    for (const { result, answer } of uniqueResults(batch, results)) {
      if (!expected.delete(result.customId)) continue;
      if ('reply' in answer) {
        answeredCount += 1;
        promptTokens += answer.reply.usage.inputTokens;
        cachedPromptTokens += answer.reply.usage.cachedInputTokens;
        completionTokens += answer.reply.usage.outputTokens;
        settle(result.customId, { result });
      } else {
        failedCount += 1;
        settle(result.customId, answer);
      }
    }
    for (const customId of expected) {
      failedCount += 1;
      const reason = remote.failure ? `: ${remote.failure}` : '';
      settle(customId, { error: new RubricateError('JUDGE_BATCH_UNANSWERED', `batch ${batch.batchId} ended ${remote.status} without answering this request${reason}`, { endpoint, batchId: batch.batchId }) });
    }
    ledger.update(batch.localId, { status: remote.status, completed: answeredCount, failed: failedCount, promptTokens, cachedPromptTokens, completionTokens });
    emit({ type: 'finished', batchId: batch.batchId!, status: remote.status, answered: answeredCount, failed: failedCount });
  }

  /** Adds one request to the batch being gathered, starting a new batch when a limit would be passed. */
  function enqueue(customId: string, body: Record<string, unknown>, waiter: Waiter): void {
    const entry = service.entry(customId, body);
    const bytes = service.entryBytes(entry);
    const tokens = countTokens ? requestInputTokens(waiter.request, countTokens) : 0;
    const refuse = (message: string) => {
      waiters.delete(customId);
      waiter.reject(new RubricateError('JUDGE_REQUEST_REJECTED', message, { endpoint }));
    };
    if (bytes + service.envelopeBytes > maxBytes) return refuse(`one request of ${bytes} bytes exceeds the batch input limit of ${maxBytes} bytes`);
    if (maxEnqueuedTokens !== undefined && tokens > maxEnqueuedTokens) return refuse(`one request of about ${tokens} input tokens exceeds the enqueued-token limit of ${maxEnqueuedTokens}`);
    if (pending.length + 1 > maxRequests || pendingBytes + bytes > maxBytes || (maxEnqueuedTokens !== undefined && pendingTokens + tokens > maxEnqueuedTokens)) flush();
    pending.push({ customId, entry, bytes, tokens });
    pendingBytes += bytes;
    pendingTokens += tokens;
    scheduleGather();
  }

  async function complete(request: JudgeRequest, { signal }: CompleteOptions): Promise<JudgeReply> {
    if (closed) throw new RubricateError('JUDGE_UNAVAILABLE', 'the batch judge is closed');
    const body = inner.requestBody(request);
    const customId = customIdOf(body);
    return new Promise<JudgeReply>((resolveCall, rejectCall) => {
      // The abort listener goes once the call is settled (a run's signal outlives thousands of calls).
      const onAbort = () => {
        if (waiters.get(customId) === waiter) waiters.delete(customId);
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
      const early = outcomes.get(customId);
      if (early) {
        outcomes.delete(customId);
        deliver(waiter, early);
        return;
      }
      waiters.set(customId, waiter);
      // Calls that share a signal (a run's) each listen on it while they wait: many at once, not a leak.
      allowListenerPerCall(signal);
      signal.addEventListener('abort', onAbort, { once: true });
      if (attachedTo.has(customId)) return;
      enqueue(customId, body, waiter);
    });
  }

  return {
    provenance: inner.provenance,
    capabilities: inner.capabilities,
    get submittedRequests() {
      return submitted;
    },
    complete,
    finish() {
      for (const batch of ledger.open(provider, endpoint, model, role)) {
        if (endedStatuses.has(batch.status)) ledger.update(batch.localId, { delivered: true });
      }
    },
    async close() {
      closed = true;
      if (gatherTimer) clearTimeout(gatherTimer);
      if (pollTimer) clearTimeout(pollTimer);
      roomFreed?.();
      await submitting.catch(() => undefined);
      await inner.close?.();
    },
  };
}
