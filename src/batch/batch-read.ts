/**
 * The batch judge's reading side: a finished batch's results matched to the calls waiting for
 * them, each read as the synchronous judge reads a reply (or failed with its reason).
 */
import { RubricateError } from '../errors.js';
import type { BatchAnswer, BatchResult, RemoteBatch } from './batch-service.js';
import type { BatchState, Outcome, Waiter } from './batch-state.js';
import type { LedgerBatch } from './ledger.js';

/** Two readings of results for one request that give the same answer (reply text, or error code). */
function sameAnswer(first: BatchAnswer, second: BatchAnswer): boolean {
  if ('reply' in first && 'reply' in second) return first.reply.text === second.reply.text && first.reply.finishReason === second.reply.finishReason;
  if ('error' in first && 'error' in second) return first.error.code === second.error.code;
  return false;
}

/** Ends a request: its waiting call gets the outcome, or it is kept for the call still to come. */
export function settle(state: BatchState, customId: string, outcome: Outcome): void {
  state.attachedTo.delete(customId);
  const waiter = state.waiters.get(customId);
  if (!waiter) {
    state.outcomes.set(customId, outcome);
    return;
  }
  state.waiters.delete(customId);
  deliver(state, waiter, outcome);
}

export function deliver(state: BatchState, waiter: Waiter, outcome: Outcome): void {
  const answer: BatchAnswer = 'result' in outcome ? state.service.read(outcome.result, waiter.request) : outcome;
  if ('reply' in answer) {
    waiter.resolve(answer.reply);
    return;
  }
  if (state.fallback === 'sync') {
    state.inner.complete(waiter.request, { signal: waiter.signal }).then(waiter.resolve, waiter.reject);
    return;
  }
  waiter.reject(answer.error);
}

/**
 * One result per custom id: the provider promises unique ids, so a file that repeats one with
 * answers that differ cannot say which is the request's answer; that request fails (retried,
 * then reported), never taking either. The same answer twice is one answer.
 */
function uniqueResults(state: BatchState, batch: LedgerBatch, results: readonly BatchResult[]): Array<{ result: BatchResult; answer: BatchAnswer }> {
  const byId = new Map<string, { result: BatchResult; answer: BatchAnswer; conflict?: RubricateError }>();
  for (const result of results) {
    // Read once here for the counts; the caller's copy is read with its request (Anthropic's tool name).
    const answer = state.service.read(result, undefined);
    const first = byId.get(result.customId);
    if (!first) {
      byId.set(result.customId, { result, answer });
      continue;
    }
    if (first.conflict || sameAnswer(first.answer, answer)) continue;
    first.conflict = new RubricateError('JUDGE_BATCH_UNANSWERED', `batch ${batch.batchId} returned two different results for this request (custom id ${result.customId}): neither is used`, {
      endpoint: state.endpoint,
      batchId: batch.batchId,
      serverCode: 'duplicate_custom_id',
    });
  }
  return [...byId.values()].map((entry) => (entry.conflict ? { result: entry.result, answer: { error: entry.conflict } } : entry));
}

/** Reads a finished batch's results, settles each of its requests, and records the counts in the ledger. */
export async function collect(state: BatchState, batch: LedgerBatch, remote: RemoteBatch): Promise<void> {
  const { results, unreadable } = await state.service.results(remote);
  for (const bad of unreadable) state.emit({ type: 'warning', message: `batch ${batch.batchId}: result line ${bad.line} is not a result; its request counts as unanswered` });
  const expected = new Set(state.ledger.customIds(batch.localId));
  const counts = { completed: 0, failed: 0, promptTokens: 0, cachedPromptTokens: 0, completionTokens: 0 };
  for (const { result, answer } of uniqueResults(state, batch, results)) {
    if (!expected.delete(result.customId)) continue;
    if ('reply' in answer) {
      counts.completed += 1;
      counts.promptTokens += answer.reply.usage.inputTokens;
      counts.cachedPromptTokens += answer.reply.usage.cachedInputTokens;
      counts.completionTokens += answer.reply.usage.outputTokens;
      settle(state, result.customId, { result });
    } else {
      counts.failed += 1;
      settle(state, result.customId, answer);
    }
  }
  for (const customId of expected) {
    counts.failed += 1;
    const reason = remote.failure ? `: ${remote.failure}` : '';
    settle(state, customId, { error: new RubricateError('JUDGE_BATCH_UNANSWERED', `batch ${batch.batchId} ended ${remote.status} without answering this request${reason}`, { endpoint: state.endpoint, batchId: batch.batchId }) });
  }
  state.ledger.update(batch.localId, { status: remote.status, ...counts });
  state.emit({ type: 'finished', batchId: batch.batchId!, status: remote.status, answered: counts.completed, failed: counts.failed });
}
