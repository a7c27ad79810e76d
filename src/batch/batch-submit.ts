/**
 * The batch judge's sending side: requests gathered into a batch until the engine goes quiet or a
 * provider limit would be passed (requests, bytes, enqueued tokens), then submitted, each step
 * recorded in the ledger before the network call it precedes.
 */
import { randomUUID } from 'node:crypto';
import { RubricateError } from '../errors.js';
import { sha256Hex } from '../util/hash.js';
import type { RemoteBatch } from './batch-service.js';
import type { BatchState, PendingEntry, Waiter } from './batch-state.js';
import { settle } from './batch-read.js';
import { requestInputTokens } from './dry-run.js';

/** Longest quiet time the gathering waits for, however slowly requests come. */
const maxGatherMs = 30_000;

/** A request's custom id: its body's hash, and which occurrence of that body it is. */
export function customIdOf(state: BatchState, body: Record<string, unknown>): string {
  const hash = sha256Hex(JSON.stringify(body)).slice(0, 32);
  const occurrence = state.occurrences.get(hash) ?? 0;
  state.occurrences.set(hash, occurrence + 1);
  return `rb-${hash}-${occurrence}`;
}

/** Adds one request to the batch being gathered, starting a new batch when a limit would be passed. */
export function enqueue(state: BatchState, customId: string, body: Record<string, unknown>, waiter: Waiter): void {
  const { service, maxBytes, maxEnqueuedTokens } = state;
  const entry = service.entry(customId, body);
  const bytes = service.entryBytes(entry);
  const tokens = state.countTokens ? requestInputTokens(waiter.request, state.countTokens) : 0;
  const refuse = (message: string) => {
    state.waiters.delete(customId);
    waiter.reject(new RubricateError('JUDGE_REQUEST_REJECTED', message, { endpoint: state.endpoint }));
  };
  if (bytes + service.envelopeBytes > maxBytes) return refuse(`one request of ${bytes} bytes exceeds the batch input limit of ${maxBytes} bytes`);
  if (maxEnqueuedTokens !== undefined && tokens > maxEnqueuedTokens) return refuse(`one request of about ${tokens} input tokens exceeds the enqueued-token limit of ${maxEnqueuedTokens}`);
  if (state.pending.length + 1 > state.maxRequests || state.pendingBytes + bytes > maxBytes || (maxEnqueuedTokens !== undefined && state.pendingTokens + tokens > maxEnqueuedTokens)) flush(state);
  state.pending.push({ customId, entry, bytes, tokens });
  state.pendingBytes += bytes;
  state.pendingTokens += tokens;
  scheduleGather(state);
}

function scheduleGather(state: BatchState): void {
  const now = Date.now();
  if (state.pending.length > 1) state.longestGap = Math.max(state.longestGap, now - state.lastJoinedAt);
  state.lastJoinedAt = now;
  if (state.gatherTimer) clearTimeout(state.gatherTimer);
  // Quiet for longer than the engine's own pauses (a busy machine plans slowly): the engine has nothing more to ask for now.
  state.gatherTimer = setTimeout(
    () => {
      state.gatherTimer = undefined;
      flush(state);
    },
    Math.max(state.gatherMs, Math.min(state.longestGap * 4, maxGatherMs)),
  );
}

/** Submits the batch being gathered, after the ones before it. */
function flush(state: BatchState): void {
  if (state.pending.length === 0) return;
  const entries = state.pending;
  state.pending = [];
  state.longestGap = 0;
  state.pendingBytes = state.service.envelopeBytes;
  state.pendingTokens = 0;
  state.submitting = state.submitting
    .then(() => submit(state, entries))
    .catch((error: unknown) => {
      // The batch could not be submitted: its calls fail with the reason (the engine retries what is retryable).
      const failure = RubricateError.isInstance(error) ? error : new RubricateError('JUDGE_CONNECTION', `batch submission failed: ${String(error)}`);
      for (const { customId } of entries) settle(state, customId, { error: failure });
    });
}

function enqueuedTokens(state: BatchState): number {
  let total = 0;
  for (const batch of state.active.values()) total += batch.enqueuedTokens;
  return total;
}

/** Resolves once the open batches leave room for this many tokens in the provider's queue. */
async function roomFor(state: BatchState, localId: string, tokens: number): Promise<void> {
  const { maxEnqueuedTokens } = state;
  if (maxEnqueuedTokens === undefined) return;
  let announced = false;
  while (!state.closed && state.active.size > 0 && enqueuedTokens(state) + tokens > maxEnqueuedTokens) {
    if (!announced) state.emit({ type: 'waiting', localId, enqueuedTokens: enqueuedTokens(state), batchTokens: tokens });
    announced = true;
    await new Promise<void>((resolve) => (state.roomFreed = resolve));
  }
}

async function submit(state: BatchState, entries: PendingEntry[]): Promise<void> {
  const { ledger, provider, endpoint, model, role } = state;
  const localId = `rbatch_${randomUUID()}`;
  const tokens = entries.reduce((total, entry) => total + entry.tokens, 0);
  await roomFor(state, localId, tokens);
  if (state.closed) throw new RubricateError('DEADLINE_EXCEEDED', 'the batch judge closed before this batch was sent');
  const customIds = entries.map((entry) => entry.customId);
  ledger.plan({ localId, provider, endpoint, model, role, enqueuedTokens: tokens }, customIds);
  for (const customId of customIds) state.attachedTo.set(customId, localId);
  let batch: RemoteBatch;
  try {
    batch = await state.service.submit(
      localId,
      entries.map((entry) => entry.entry),
      ledger,
    );
  } catch (error) {
    // Refused by the API (it answered): no batch exists, so the ledger entry ends here; a
    // network failure leaves it open, for a rerun to look for the batch.
    if (RubricateError.isInstance(error) && typeof error.details.status === 'number') ledger.update(localId, { status: 'abandoned', delivered: true });
    for (const customId of customIds) if (state.attachedTo.get(customId) === localId) state.attachedTo.delete(customId);
    throw error;
  }
  state.submitted += entries.length;
  state.active.set(localId, { ...ledger.get(localId)! });
  state.emit({ type: 'submitted', localId, batchId: batch.id, requests: entries.length });
  state.schedulePoll(state.pollIntervalMs);
}
