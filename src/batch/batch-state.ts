/**
 * The batch judge's state, which its three parts share: gathering and submitting
 * (`batch-submit.ts`), polling (`batch-poll.ts`) and reading results into replies
 * (`batch-read.ts`). `batch-judge.ts` builds it and answers the engine's calls.
 */
import type { RubricateError } from '../errors.js';
import type { Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import type { BatchResult, BatchService } from './batch-service.js';
import type { BatchLedger, LedgerBatch } from './ledger.js';

export type BatchFallback = 'batch' | 'sync';

/** A synchronous judge that can show the body it would send. */
export type BodyBuildingJudge = Judge & { requestBody(request: JudgeRequest): Record<string, unknown> };

export type BatchEvent =
  | { type: 'submitted'; localId: string; batchId: string; requests: number }
  | { type: 'attached'; localId: string; batchId: string | null; requests: number }
  | { type: 'status'; batchId: string; status: string }
  | { type: 'finished'; batchId: string; status: string; answered: number; failed: number }
  | { type: 'waiting'; localId: string; enqueuedTokens: number; batchTokens: number }
  | { type: 'warning'; message: string };

export interface Waiter {
  request: JudgeRequest;
  resolve: (reply: JudgeReply) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal;
}

/** A result waiting for its caller (read once the request is known), or an error. */
export type Outcome = { result: BatchResult } | { error: RubricateError };

export interface PendingEntry {
  customId: string;
  entry: string;
  bytes: number;
  tokens: number;
}

/** What the batch judge was given, with its limits settled. */
export interface BatchSettings {
  readonly inner: BodyBuildingJudge;
  readonly service: BatchService;
  readonly ledger: BatchLedger;
  readonly provider: string;
  readonly endpoint: string;
  readonly model: string;
  readonly role: string;
  readonly fallback: BatchFallback | undefined;
  readonly maxRequests: number;
  readonly maxBytes: number;
  /** Input tokens all open batches may hold at once; no limit when absent. */
  readonly maxEnqueuedTokens: number | undefined;
  readonly countTokens: ((text: string) => number) | undefined;
  readonly pollIntervalMs: number;
  readonly gatherMs: number;
  emit(event: BatchEvent): void;
}

export interface BatchState extends BatchSettings {
  waiters: Map<string, Waiter>;
  outcomes: Map<string, Outcome>;
  /** Custom ids held by an open batch of the ledger (from this run or an earlier one). */
  attachedTo: Map<string, string>;
  occurrences: Map<string, number>;
  active: Map<string, LedgerBatch>;
  /** The batch being gathered. */
  pending: PendingEntry[];
  pendingBytes: number;
  pendingTokens: number;
  /** When the last request joined the batch being gathered, and the longest gap between two that joined it. */
  lastJoinedAt: number;
  longestGap: number;
  gatherTimer: NodeJS.Timeout | undefined;
  pollTimer: NodeJS.Timeout | undefined;
  polling: boolean;
  closed: boolean;
  /** Requests sent in batches by this process (attached ones excluded). */
  submitted: number;
  submitting: Promise<void>;
  /** Failed reads of each finished batch's results, by local id. */
  resultReadFailures: Map<string, number>;
  /** Called when a batch ends, so a batch waiting for queue room can go. */
  roomFreed: (() => void) | undefined;
  /** Polls after `delay` ms unless a poll is scheduled or the judge closed (polling sits above submitting, so submitting reaches it through here). */
  schedulePoll(delay: number): void;
}
