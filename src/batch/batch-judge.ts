/**
 * A judge that answers through the provider's Batch API. The engine calls it like any judge
 * (same tasks, same cache keys, same reading of replies, same retries); instead of one HTTP
 * call per request it gathers the requests the engine makes, submits them as batches once the
 * engine has nothing more to ask for the moment, polls them, and resolves each call when its
 * batch ends. Request bodies are the synchronous judge's own (`requestBody`), so a reply got
 * by batch and one got synchronously are interchangeable in the cache.
 *
 * Resumable by construction: the ledger records each batch and its custom ids before the
 * upload, the file id before the create, the batch id right after; a rerun attaches every
 * call whose custom id is in an open batch instead of sending it again.
 */
import { randomUUID } from 'node:crypto';
import { RubricateError } from '../errors.js';
import { httpStatusToError } from '../judges/openai/http-errors.js';
import { parseCompletion } from '../judges/openai/openai-judge.js';
import type { CompleteOptions, Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import { sha256Hex } from '../util/hash.js';
import type { BatchLedger, LedgerBatch } from './ledger.js';
import { finishedBatchStatuses, openAIBatchLimits, type BatchResultLine, type OpenAIBatchApi } from './openai-batch-api.js';

export type BatchFallback = 'batch' | 'sync';

/** A synchronous judge that can show the body it would send. */
export type BodyBuildingJudge = Judge & { requestBody(request: JudgeRequest): Record<string, unknown> };

export interface BatchJudgeOptions {
  inner: BodyBuildingJudge;
  api: OpenAIBatchApi;
  ledger: BatchLedger;
  provider?: string;
  /** Requests that got no answer inside a batch: a new batch (default), or the synchronous judge. */
  fallback?: BatchFallback;
  pollIntervalMs?: number;
  /** Quiet time after the last new request before the gathered ones are submitted. */
  gatherMs?: number;
  maxRequestsPerBatch?: number;
  maxBytesPerBatch?: number;
  onEvent?: (event: BatchEvent) => void;
}

export type BatchEvent =
  | { type: 'submitted'; localId: string; batchId: string; requests: number }
  | { type: 'attached'; localId: string; batchId: string | null; requests: number }
  | { type: 'status'; batchId: string; status: string }
  | { type: 'finished'; batchId: string; status: string; answered: number; failed: number }
  | { type: 'warning'; message: string };

interface Waiter {
  request: JudgeRequest;
  resolve: (reply: JudgeReply) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal;
}

type Answer = { reply: JudgeReply } | { error: RubricateError };

export interface BatchJudge extends Judge {
  /** Requests sent in batches by this process (attached ones excluded). */
  readonly submittedRequests: number;
  /** Marks every finished batch as delivered (after a run that completed). */
  finish(): void;
  close(): Promise<void>;
}

export function createBatchJudge(options: BatchJudgeOptions): BatchJudge {
  const { inner, api, ledger } = options;
  const provider = options.provider ?? 'openai';
  const model = inner.provenance.model;
  const endpoint = api.endpoint;
  const maxRequests = Math.min(options.maxRequestsPerBatch ?? openAIBatchLimits.maxRequests, openAIBatchLimits.maxRequests);
  const maxBytes = Math.min(options.maxBytesPerBatch ?? openAIBatchLimits.maxFileBytes, openAIBatchLimits.maxFileBytes);
  const pollIntervalMs = options.pollIntervalMs ?? 30_000;
  const gatherMs = options.gatherMs ?? 250;
  const emit = (event: BatchEvent) => options.onEvent?.(event);

  const waiters = new Map<string, Waiter>();
  const answered = new Map<string, Answer>();
  /** Custom ids held by an open batch of the ledger (from this run or an earlier one). */
  const attachedTo = new Map<string, string>();
  const occurrences = new Map<string, number>();
  const active = new Map<string, LedgerBatch>();
  let pending: Array<{ customId: string; line: string }> = [];
  let pendingBytes = 0;
  let gatherTimer: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;
  let polling = false;
  let closed = false;
  let submitted = 0;
  let submitting: Promise<void> = Promise.resolve();

  // Batches an earlier process left in flight: their requests are attached, never sent again.
  for (const batch of ledger.open(provider, endpoint, model)) {
    if (batch.status === 'planned') {
      // Killed before its file was uploaded: nothing was sent; its requests may be sent anew.
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

  function settle(customId: string, answer: Answer): void {
    attachedTo.delete(customId);
    const waiter = waiters.get(customId);
    if (!waiter) {
      answered.set(customId, answer);
      return;
    }
    waiters.delete(customId);
    deliver(waiter, answer);
  }

  function deliver(waiter: Waiter, answer: Answer): void {
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

  function scheduleGather(): void {
    if (gatherTimer) clearTimeout(gatherTimer);
    gatherTimer = setTimeout(() => {
      gatherTimer = undefined;
      flush();
    }, gatherMs);
  }

  function flush(): void {
    if (pending.length === 0) return;
    const lines = pending;
    pending = [];
    pendingBytes = 0;
    submitting = submitting.then(() => submit(lines)).catch((error: unknown) => {
      // The batch could not be submitted: its calls fail with the reason (the engine retries what is retryable).
      const failure = RubricateError.isInstance(error) ? error : new RubricateError('JUDGE_CONNECTION', `batch submission failed: ${String(error)}`);
      for (const { customId } of lines) settle(customId, { error: failure });
    });
  }

  async function submit(lines: Array<{ customId: string; line: string }>): Promise<void> {
    const localId = `rbatch_${randomUUID()}`;
    const customIds = lines.map((entry) => entry.customId);
    ledger.plan({ localId, provider, endpoint, model }, customIds);
    for (const customId of customIds) attachedTo.set(customId, localId);
    const fileId = await api.uploadFile(`${lines.map((entry) => entry.line).join('\n')}\n`, `${localId}.jsonl`);
    ledger.uploaded(localId, fileId);
    const batch = await api.createBatch(fileId, { rubricate_batch: localId });
    ledger.created(localId, batch.id, batch.status);
    submitted += lines.length;
    active.set(localId, { ...ledger.get(localId)! });
    emit({ type: 'submitted', localId, batchId: batch.id, requests: lines.length });
    schedulePoll(pollIntervalMs);
  }

  /** An uploaded file whose create was not recorded: find the batch made from it, or create it now. */
  async function recover(batch: LedgerBatch): Promise<string> {
    for await (const candidate of api.listBatches()) {
      if (candidate.input_file_id === batch.fileId || candidate.metadata?.rubricate_batch === batch.localId) {
        ledger.created(batch.localId, candidate.id, candidate.status);
        return candidate.id;
      }
    }
    const created = await api.createBatch(batch.fileId!, { rubricate_batch: batch.localId });
    ledger.created(batch.localId, created.id, created.status);
    return created.id;
  }

  async function pollOnce(): Promise<void> {
    if (polling || closed) return;
    polling = true;
    try {
      for (const [localId, batch] of [...active]) {
        try {
          const batchId = batch.batchId ?? (await recover(batch));
          batch.batchId = batchId;
          const remote = await api.retrieveBatch(batchId);
          if (remote.status !== batch.status) {
            batch.status = remote.status;
            ledger.update(localId, { status: remote.status });
            emit({ type: 'status', batchId, status: remote.status });
          }
          if (finishedBatchStatuses.has(remote.status)) {
            await collect(batch, remote.output_file_id ?? null, remote.error_file_id ?? null, remote.status, remote.errors?.data?.[0]?.message);
            active.delete(localId);
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

  async function collect(batch: LedgerBatch, outputFileId: string | null, errorFileId: string | null, status: string, failure?: string): Promise<void> {
    const lines: BatchResultLine[] = [];
    for (const fileId of [outputFileId, errorFileId]) {
      if (!fileId) continue;
      const file = await api.readResultFile(fileId);
      lines.push(...file.lines);
      for (const bad of file.unreadable) emit({ type: 'warning', message: `batch ${batch.batchId}: line ${bad.line} of file ${fileId} is not a result line; its request counts as unanswered` });
    }
    const expected = new Set(ledger.customIds(batch.localId));
    let answeredCount = 0;
    let failedCount = 0;
    let promptTokens = 0;
    let cachedPromptTokens = 0;
    let completionTokens = 0;
    for (const line of lines) {
      if (!expected.delete(line.custom_id)) continue;
      const answer = readLine(line, endpoint);
      if ('reply' in answer) {
        answeredCount += 1;
        promptTokens += answer.reply.usage.inputTokens;
        cachedPromptTokens += answer.reply.usage.cachedInputTokens;
        completionTokens += answer.reply.usage.outputTokens;
      } else failedCount += 1;
      settle(line.custom_id, answer);
    }
    for (const customId of expected) {
      failedCount += 1;
      const reason = failure ? `: ${failure}` : '';
      settle(customId, { error: new RubricateError('JUDGE_BATCH_UNANSWERED', `batch ${batch.batchId} ended ${status} without answering this request${reason}`, { endpoint, batchId: batch.batchId }) });
    }
    ledger.update(batch.localId, { status, completed: answeredCount, failed: failedCount, promptTokens, cachedPromptTokens, completionTokens });
    emit({ type: 'finished', batchId: batch.batchId!, status, answered: answeredCount, failed: failedCount });
  }

  async function complete(request: JudgeRequest, { signal }: CompleteOptions): Promise<JudgeReply> {
    if (closed) throw new RubricateError('JUDGE_UNAVAILABLE', 'the batch judge is closed');
    const body = inner.requestBody(request);
    const customId = customIdOf(body);
    return new Promise<JudgeReply>((resolve, reject) => {
      const waiter: Waiter = { request, resolve, reject, signal };
      const early = answered.get(customId);
      if (early) {
        answered.delete(customId);
        deliver(waiter, early);
        return;
      }
      waiters.set(customId, waiter);
      signal.addEventListener(
        'abort',
        () => {
          if (waiters.get(customId) === waiter) waiters.delete(customId);
          reject(signal.reason ?? new RubricateError('DEADLINE_EXCEEDED', 'grading was cancelled'));
        },
        { once: true },
      );
      if (attachedTo.has(customId)) return;
      const line = JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body });
      const bytes = Buffer.byteLength(line) + 1;
      if (bytes > maxBytes) {
        waiters.delete(customId);
        reject(new RubricateError('JUDGE_REQUEST_REJECTED', `one request of ${bytes} bytes exceeds the batch file limit of ${maxBytes} bytes`));
        return;
      }
      if (pending.length + 1 > maxRequests || pendingBytes + bytes > maxBytes) flush();
      pending.push({ customId, line });
      pendingBytes += bytes;
      scheduleGather();
    });
  }

  return {
    provenance: inner.provenance,
    get modelLimits() {
      return inner.modelLimits;
    },
    get supportsTokenProbabilities() {
      return inner.supportsTokenProbabilities;
    },
    get submittedRequests() {
      return submitted;
    },
    complete,
    finish() {
      for (const batch of ledger.open(provider, endpoint, model)) {
        if (finishedBatchStatuses.has(batch.status)) ledger.update(batch.localId, { delivered: true });
      }
    },
    async close() {
      closed = true;
      if (gatherTimer) clearTimeout(gatherTimer);
      if (pollTimer) clearTimeout(pollTimer);
      await submitting.catch(() => undefined);
      await inner.close?.();
    },
  };
}

/** A result line as a reply (read exactly as a synchronous answer is) or a coded error. */
function readLine(line: BatchResultLine, endpoint: string): Answer {
  if (line.response && typeof line.response.status_code === 'number') {
    if (line.response.status_code >= 200 && line.response.status_code < 300) {
      try {
        const reply = parseCompletion(line.response.body, endpoint);
        reply.usage = { ...reply.usage, batch: true };
        return { reply };
      } catch (error) {
        return { error: RubricateError.isInstance(error) ? error : new RubricateError('JUDGE_SERVER_ERROR', String(error)) };
      }
    }
    return { error: httpStatusToError(line.response.status_code, {}, line.response.body, endpoint) };
  }
  const code = line.error?.code ?? 'unknown';
  return { error: new RubricateError('JUDGE_BATCH_UNANSWERED', `batch request failed (${code}): ${line.error?.message ?? 'no message'}`, { endpoint, serverCode: code }) };
}
