/**
 * The batch judge's polling side: each open batch asked for its status at an interval, an
 * earlier run's batch looked for (or given up as never made), and a finished batch's results
 * read, with a bounded number of tries.
 */
import { RubricateError } from '../errors.js';
import type { RemoteBatch } from './batch-service.js';
import type { BatchState } from './batch-state.js';
import { collect, settle } from './batch-read.js';
import { enqueue } from './batch-submit.js';
import type { LedgerBatch } from './ledger.js';

/** Reads of a finished batch's results that may fail (a 404 output file, a 5xx) before its requests are failed. */
const maxResultReads = 5;

export function schedulePoll(state: BatchState, delay: number): void {
  if (state.pollTimer || state.closed) return;
  state.pollTimer = setTimeout(() => {
    state.pollTimer = undefined;
    void pollOnce(state);
  }, delay);
}

async function pollOnce(state: BatchState): Promise<void> {
  if (state.polling || state.closed) return;
  state.polling = true;
  try {
    for (const [localId, batch] of [...state.active]) {
      try {
        await pollBatch(state, localId, batch);
      } catch (error) {
        // A poll that failed is tried again at the next interval; the batch keeps running at the provider.
        state.emit({ type: 'warning', message: `polling batch ${batch.batchId ?? localId}: ${error instanceof Error ? error.message : String(error)}` });
      }
    }
  } finally {
    state.polling = false;
  }
  if (state.active.size > 0) schedulePoll(state, state.pollIntervalMs);
}

async function pollBatch(state: BatchState, localId: string, batch: LedgerBatch): Promise<void> {
  if (!batch.batchId) {
    const found = await state.service.recover(batch, state.ledger);
    if (found === undefined) {
      abandon(state, batch);
      return;
    }
    batch.batchId = found;
  }
  const remote = await state.service.retrieve(batch.batchId);
  if (remote.status !== batch.status) {
    batch.status = remote.status;
    state.ledger.update(localId, { status: remote.status });
    state.emit({ type: 'status', batchId: batch.batchId, status: remote.status });
  }
  if (remote.finished) {
    if (!(await collectOrGiveUp(state, batch, remote))) return;
    state.active.delete(localId);
    state.roomFreed?.();
  }
}

/** An earlier run's batch that turned out never to have been made: its requests are sent anew. */
function abandon(state: BatchState, batch: LedgerBatch): void {
  state.ledger.update(batch.localId, { status: 'abandoned', delivered: true });
  state.active.delete(batch.localId);
  state.emit({ type: 'warning', message: `batch ${batch.localId} was never created at the provider; its ${batch.requestCount} request(s) are sent again` });
  for (const customId of state.ledger.customIds(batch.localId)) {
    if (state.attachedTo.get(customId) !== batch.localId) continue;
    state.attachedTo.delete(customId);
    const waiter = state.waiters.get(customId);
    if (waiter) enqueue(state, customId, state.inner.requestBody(waiter.request), waiter);
  }
  state.roomFreed?.();
}

/**
 * Reads a finished batch's results; true once they are delivered. A read that fails is tried at
 * the next polls; after `maxResultReads` failed reads the batch's requests fail with the reason
 * (retried in a new batch, or answered synchronously with the sync fallback), instead of the
 * batch being polled for ever.
 */
async function collectOrGiveUp(state: BatchState, batch: LedgerBatch, remote: RemoteBatch): Promise<boolean> {
  try {
    await collect(state, batch, remote);
    state.resultReadFailures.delete(batch.localId);
    return true;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const failures = (state.resultReadFailures.get(batch.localId) ?? 0) + 1;
    if (failures < maxResultReads) {
      state.resultReadFailures.set(batch.localId, failures);
      state.emit({ type: 'warning', message: `batch ${batch.batchId} ended ${remote.status}, but its results could not be read (try ${failures} of ${maxResultReads}): ${reason}` });
      return false;
    }
    state.resultReadFailures.delete(batch.localId);
    const unanswered = state.ledger.customIds(batch.localId).filter((customId) => state.attachedTo.get(customId) === batch.localId);
    for (const customId of unanswered) {
      settle(state, customId, {
        error: new RubricateError('JUDGE_BATCH_UNANSWERED', `batch ${batch.batchId} ended ${remote.status}, but its results could not be read in ${maxResultReads} tries: ${reason}`, { endpoint: state.endpoint, batchId: batch.batchId, serverCode: 'results_unreadable' }),
      });
    }
    state.ledger.update(batch.localId, { status: remote.status, failed: unanswered.length });
    state.emit({ type: 'finished', batchId: batch.batchId!, status: remote.status, answered: 0, failed: unanswered.length });
    return true;
  }
}
