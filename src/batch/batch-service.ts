/**
 * What the batch judge needs from a provider's Batch API, whatever its shape: OpenAI and Azure
 * (a JSONL file uploaded, then a batch created over it) and Anthropic (one create call holding
 * every request). The batch judge does the gathering, ledger, polling and delivery; a service
 * only speaks its provider's protocol.
 */
import type { RubricateError } from '../errors.js';
import type { JudgeReply, JudgeRequest } from '../judges/types.js';
import type { BatchLedger, LedgerBatch } from './ledger.js';

export interface BatchLimits {
  /** Requests one batch may hold. */
  maxRequests: number;
  /** Bytes of one batch's input (a file, or a create body). */
  maxBytes: number;
}

/** A provider's view of one batch, reduced to what the batch judge acts on. */
export interface RemoteBatch {
  id: string;
  /** The provider's own status word (shown to the user and kept in the ledger). */
  status: string;
  /** True once the batch changes no more and its results can be read. */
  finished: boolean;
  /** Why the whole batch failed, when it did. */
  failure?: string;
  /** The provider's raw answer (where its result files are). */
  raw: unknown;
}

/** One result entry, matched to its request by custom id. */
export interface BatchResult {
  customId: string;
  payload: unknown;
}

export type BatchAnswer = { reply: JudgeReply } | { error: RubricateError };

export interface BatchService {
  /** Provider name kept in the ledger (`openai`, `azure`, `anthropic`). */
  readonly provider: string;
  /** The API's base URL, credentials redacted. */
  readonly endpoint: string;
  readonly limits: BatchLimits;
  /** One request as the provider wants it in a batch's input, serialized. */
  entry(customId: string, body: Record<string, unknown>): string;
  /** Extra bytes the input takes around its entries (a JSON envelope), for the byte limit. */
  readonly envelopeBytes: number;
  /** Bytes one entry adds to the input (its separator included). */
  entryBytes(entry: string): number;
  /** Sends a batch; writes each step to the ledger before the next network call. */
  submit(localId: string, entries: string[], ledger: BatchLedger): Promise<RemoteBatch>;
  /**
   * A batch whose create answer was never recorded: the id of the batch made from it, or
   * undefined when none was made (then its requests may be sent anew).
   */
  recover(batch: LedgerBatch, ledger: BatchLedger): Promise<string | undefined>;
  retrieve(batchId: string): Promise<RemoteBatch>;
  cancel(batchId: string): Promise<RemoteBatch>;
  /** Every result of a finished batch; entries that cannot be read are returned to report. */
  results(batch: RemoteBatch): Promise<{ results: BatchResult[]; unreadable: Array<{ line: number; text: string }> }>;
  /** A result as a reply, read exactly as a synchronous answer is, or a coded error. */
  read(result: BatchResult, request: JudgeRequest | undefined): BatchAnswer;
}
