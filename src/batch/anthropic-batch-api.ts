/**
 * Anthropic's Message Batches API, as far as rubricate uses it: create a batch holding every
 * request (`POST /v1/messages/batches`, `{requests: [{custom_id, params}]}`), retrieve it
 * (`processing_status` in_progress → canceling → ended, `request_counts`), cancel it, list
 * batches (newest first, `after_id` pages), and stream its results from `results_url` (JSONL,
 * one `{custom_id, result}` per request: succeeded with the message, errored with an error
 * body, canceled or expired). A batch holds at most 100,000 requests or 256 MB, costs half
 * the synchronous price, and each request's `params` is a Messages API body, validated
 * when the batch is processed (an invalid one comes back errored).
 */
import { RubricateError } from '../errors.js';
import { anthropicHttpError } from '../judges/anthropic/errors.js';
import { anthropicVersion, defaultAnthropicBaseUrl, parseAnthropicMessage } from '../judges/anthropic/anthropic-judge.js';
import { networkErrorToError } from '../judges/openai/http-errors.js';
import type { JudgeRequest } from '../judges/types.js';
import { redactUrl, registerSecret } from '../util/redact.js';
import type { BatchAnswer, BatchLimits, BatchResult, BatchService, RemoteBatch } from './batch-service.js';
import type { BatchLedger, LedgerBatch } from './ledger.js';
import { failedReply, fetchWithoutCrossOriginCredentials } from './redirects.js';

const anthropicBatchLimits: BatchLimits = { maxRequests: 100_000, maxBytes: 256 * 1024 * 1024 };

interface AnthropicMessageBatch {
  id: string;
  type?: 'message_batch';
  processing_status: 'in_progress' | 'canceling' | 'ended';
  request_counts?: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
  created_at?: string;
  ended_at?: string | null;
  expires_at?: string;
  cancel_initiated_at?: string | null;
  archived_at?: string | null;
  results_url?: string | null;
}

/** One line of a batch's results. */
interface AnthropicBatchResultLine {
  custom_id: string;
  result?: {
    type?: 'succeeded' | 'errored' | 'canceled' | 'expired';
    message?: unknown;
    error?: { type?: string; error?: { type?: string; message?: string }; request_id?: string };
  };
}

interface AnthropicBatchApiOptions {
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

/** HTTP status of each Anthropic error type (an errored batch result carries the type, not the status). */
const statusOfErrorType: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export class AnthropicBatchApi {
  private readonly root: string;
  readonly endpoint: string;

  constructor(private readonly options: AnthropicBatchApiOptions = {}) {
    // Accept the base with or without the version segment, as the judge does.
    this.root = (options.baseUrl ?? defaultAnthropicBaseUrl).replace(/\/+$/, '').replace(/\/v1$/, '');
    this.endpoint = redactUrl(this.root);
    registerSecret(options.apiKey);
  }

  private async send(method: string, url: string, body?: string): Promise<Response> {
    let response: Response;
    try {
      response = await fetchWithoutCrossOriginCredentials(
        url,
        {
          method,
          headers: {
            'anthropic-version': anthropicVersion,
            ...(this.options.apiKey ? { 'x-api-key': this.options.apiKey } : {}),
            ...this.options.headers,
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          body,
        },
        this.endpoint,
      );
    } catch (error) {
      if (RubricateError.isInstance(error)) throw error;
      throw networkErrorToError(error, this.endpoint);
    }
    if (!response.ok) {
      const { body: failure, headers } = await failedReply(response);
      throw anthropicHttpError(response.status, headers, failure, `${this.endpoint}${new URL(url).pathname}`);
    }
    return response;
  }

  private async json<T>(method: string, path: string, body?: string): Promise<T> {
    const response = await this.send(method, `${this.root}${path}`, body);
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new RubricateError('JUDGE_SERVER_ERROR', `Message Batches API answered ${path} with a body that is not JSON`, { endpoint: this.endpoint });
    }
  }

  /** Creates a batch from serialized `{custom_id, params}` entries. */
  async createBatch(entries: readonly string[]): Promise<AnthropicMessageBatch> {
    return this.json<AnthropicMessageBatch>('POST', '/v1/messages/batches', `{"requests":[${entries.join(',')}]}`);
  }

  async retrieveBatch(id: string): Promise<AnthropicMessageBatch> {
    return this.json<AnthropicMessageBatch>('GET', `/v1/messages/batches/${encodeURIComponent(id)}`);
  }

  async cancelBatch(id: string): Promise<AnthropicMessageBatch> {
    return this.json<AnthropicMessageBatch>('POST', `/v1/messages/batches/${encodeURIComponent(id)}/cancel`);
  }

  /** Every batch of the workspace, newest first (pages followed through `after_id`). */
  async *listBatches(): AsyncGenerator<AnthropicMessageBatch> {
    let after: string | undefined;
    for (let page = 0; page < 1000; page += 1) {
      const query = new URLSearchParams({ limit: '100', ...(after ? { after_id: after } : {}) });
      const answer = await this.json<{ data?: AnthropicMessageBatch[]; has_more?: boolean; last_id?: string | null }>('GET', `/v1/messages/batches?${query}`);
      const data = answer.data ?? [];
      yield* data;
      if (!answer.has_more || data.length === 0) return;
      after = answer.last_id ?? data[data.length - 1].id;
    }
  }

  /**
   * The results of an ended batch, from its `results_url` when that is on this API's host
   * (the key is never sent elsewhere), else from the documented path under this base.
   */
  async readResults(batch: AnthropicMessageBatch): Promise<{ lines: AnthropicBatchResultLine[]; unreadable: Array<{ line: number; text: string }> }> {
    const fallback = `${this.root}/v1/messages/batches/${encodeURIComponent(batch.id)}/results`;
    let url = fallback;
    if (batch.results_url) {
      try {
        if (new URL(batch.results_url).origin === new URL(this.root).origin) url = batch.results_url;
      } catch {
        // An unreadable results_url: the documented path.
      }
    }
    const response = await this.send('GET', url);
    const text = await response.text();
    const lines: AnthropicBatchResultLine[] = [];
    const unreadable: Array<{ line: number; text: string }> = [];
    text.split('\n').forEach((raw, index) => {
      if (raw.trim() === '') return;
      try {
        const parsed = JSON.parse(raw) as AnthropicBatchResultLine;
        if (typeof parsed?.custom_id !== 'string') throw new Error('no custom_id');
        lines.push(parsed);
      } catch {
        unreadable.push({ line: index + 1, text: raw.slice(0, 200) });
      }
    });
    return { lines, unreadable };
  }
}

function totalOf(batch: AnthropicMessageBatch): number {
  const counts = batch.request_counts;
  return counts ? counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired : 0;
}

function remote(batch: AnthropicMessageBatch): RemoteBatch {
  return { id: batch.id, status: batch.processing_status, finished: batch.processing_status === 'ended', raw: batch };
}

/** How far apart the ledger's clock and the provider's may be when matching an unrecorded create. */
const clockSlackMs = 10 * 60 * 1000;

export function anthropicBatchService(api: AnthropicBatchApi, options: { limits?: BatchLimits } = {}): BatchService {
  const endpoint = api.endpoint;
  return {
    provider: 'anthropic',
    endpoint,
    limits: options.limits ?? anthropicBatchLimits,
    envelopeBytes: '{"requests":[]}'.length,
    entry: (customId, params) => JSON.stringify({ custom_id: customId, params }),
    entryBytes: (entry) => Buffer.byteLength(entry) + 1,
    async submit(localId: string, entries: string[], ledger: BatchLedger) {
      // One call creates the batch: after this mark, a rerun looks for it before sending anything again.
      ledger.update(localId, { status: 'sending' });
      const batch = await api.createBatch(entries);
      ledger.created(localId, batch.id, batch.processing_status);
      return remote(batch);
    },
    /**
     * Killed between the create and recording its answer: the batch made then is the one
     * created around the planned time with as many requests, not yet in the ledger.
     */
    async recover(batch: LedgerBatch, ledger: BatchLedger) {
      let best: { id: string; distance: number } | undefined;
      for await (const candidate of api.listBatches()) {
        const created = Date.parse(candidate.created_at ?? '');
        if (Number.isFinite(created) && created < batch.createdAt - clockSlackMs) break;
        if (totalOf(candidate) !== batch.requestCount || ledger.get(candidate.id)) continue;
        const distance = Number.isFinite(created) ? Math.abs(created - batch.createdAt) : clockSlackMs;
        if (!best || distance < best.distance) best = { id: candidate.id, distance };
      }
      if (!best) return undefined;
      const found = await api.retrieveBatch(best.id);
      ledger.created(batch.localId, found.id, found.processing_status);
      return found.id;
    },
    retrieve: async (batchId) => remote(await api.retrieveBatch(batchId)),
    cancel: async (batchId) => remote(await api.cancelBatch(batchId)),
    async results(batch: RemoteBatch) {
      const file = await api.readResults(batch.raw as AnthropicMessageBatch);
      return { results: file.lines.map((line): BatchResult => ({ customId: line.custom_id, payload: line })), unreadable: file.unreadable };
    },
    read: (result, request) => readAnthropicResult(result.payload as AnthropicBatchResultLine, request, endpoint),
  };
}

function calledToolName(message: unknown): string | undefined {
  const content = (message as { content?: unknown })?.content;
  if (!Array.isArray(content)) return undefined;
  const call = content.find((block: { type?: unknown; name?: unknown } | null) => block?.type === 'tool_use' && typeof block.name === 'string') as { name: string } | undefined;
  return call?.name;
}

/** A result as a reply (the forced tool's input read as a synchronous answer is) or a coded error. */
function readAnthropicResult(line: AnthropicBatchResultLine, request: JudgeRequest | undefined, endpoint: string): BatchAnswer {
  const result = line.result ?? {};
  if (result.type === 'succeeded') {
    try {
      // Without its request (read for the counts and duplicate checks), the verdict tool is the one the message called.
      const reply = parseAnthropicMessage(result.message, request?.output?.name ?? calledToolName(result.message), endpoint);
      reply.usage = { ...reply.usage, batch: true };
      return { reply };
    } catch (error) {
      return { error: RubricateError.isInstance(error) ? error : new RubricateError('JUDGE_SERVER_ERROR', String(error), { endpoint }) };
    }
  }
  if (result.type === 'errored') {
    const body = result.error ?? {};
    const type = body.error?.type ?? 'api_error';
    return { error: anthropicHttpError(statusOfErrorType[type] ?? 500, {}, body, endpoint) };
  }
  const reason = result.type === 'canceled' ? 'the batch was canceled before this request ran' : result.type === 'expired' ? 'the batch expired before this request ran' : `unknown result type ${String(result.type)}`;
  return { error: new RubricateError('JUDGE_BATCH_UNANSWERED', `batch request not answered: ${reason}`, { endpoint, serverCode: String(result.type ?? 'unknown') }) };
}
