/**
 * The OpenAI Batch API, as far as rubricate uses it: upload a JSONL file of chat-completion
 * requests (`POST /files`, purpose `batch`), create a batch over it (`POST /batches`,
 * endpoint `/v1/chat/completions`, completion window `24h`), retrieve, cancel and list
 * batches, and download their output and error files (`GET /files/{id}/content`).
 *
 * Azure OpenAI's Batch API is the same protocol under another profile: paths under
 * `/openai` with an `api-version` query, the key in an `api-key` header, request lines and
 * the batch endpoint as `/chat/completions`, the body's `model` a global-batch deployment,
 * and 100,000 requests per file.
 */
import { RubricateError } from '../errors.js';
import { httpStatusToError, networkErrorToError } from '../judges/openai/http-errors.js';
import { parseCompletion } from '../judges/openai/openai-judge.js';
import { redactUrl, registerSecret } from '../util/redact.js';
import type { BatchAnswer, BatchLimits, BatchResult, BatchService, RemoteBatch } from './batch-service.js';
import type { BatchLedger, LedgerBatch } from './ledger.js';
import { failedReply, fetchWithoutCrossOriginCredentials } from './redirects.js';

/** Provider limits of one batch (OpenAI: 50,000 requests, 200 MB input file). */
const openAIBatchLimits = { maxRequests: 50_000, maxFileBytes: 200 * 1024 * 1024 } as const;
/** Azure OpenAI: 100,000 requests, 200 MB input file. */
const azureBatchLimits = { maxRequests: 100_000, maxFileBytes: 200 * 1024 * 1024 } as const;

type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

/** States after which a batch changes no more. */
const finishedBatchStatuses: ReadonlySet<string> = new Set(['failed', 'completed', 'expired', 'cancelled']);

interface OpenAIBatch {
  id: string;
  status: BatchStatus;
  input_file_id: string;
  output_file_id?: string | null;
  error_file_id?: string | null;
  request_counts?: { total: number; completed: number; failed: number };
  errors?: { data?: Array<{ code?: string; message?: string; line?: number | null }> } | null;
  metadata?: Record<string, string> | null;
  created_at?: number;
}

/** One line of an output or error file. */
interface BatchResultLine {
  custom_id: string;
  response?: { status_code: number; body: unknown } | null;
  error?: { code?: string; message?: string } | null;
}

interface OpenAIBatchApiOptions {
  baseUrl: string;
  apiKey?: string;
  /** Azure puts the key in `api-key` and the version in the query; the paths are the same. */
  apiKeyHeader?: 'authorization' | 'api-key';
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** The endpoint named in request lines and in the batch create: `/v1/chat/completions` (OpenAI), `/chat/completions` (Azure). */
  batchEndpoint?: string;
}

export class OpenAIBatchApi {
  private readonly base: string;
  readonly endpoint: string;
  readonly batchEndpoint: string;

  constructor(private readonly options: OpenAIBatchApiOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.batchEndpoint = options.batchEndpoint ?? '/v1/chat/completions';
    this.endpoint = redactUrl(this.base);
    registerSecret(options.apiKey);
  }

  private url(path: string, query: Record<string, string> = {}): string {
    const url = new URL(`${this.base}${path}`);
    for (const [name, value] of Object.entries({ ...this.options.query, ...query })) url.searchParams.set(name, value);
    return url.toString();
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const key = this.options.apiKey;
    const auth: Record<string, string> = !key ? {} : this.options.apiKeyHeader === 'api-key' ? { 'api-key': key } : { authorization: `Bearer ${key}` };
    return { ...this.options.headers, ...auth, ...extra };
  }

  private async send(method: string, path: string, init: { json?: unknown; form?: FormData; query?: Record<string, string> } = {}): Promise<Response> {
    let response: Response;
    try {
      response = await fetchWithoutCrossOriginCredentials(
        this.url(path, init.query),
        {
          method,
          headers: this.headers(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
          body: init.form ?? (init.json !== undefined ? JSON.stringify(init.json) : undefined),
        },
        this.endpoint,
      );
    } catch (error) {
      if (RubricateError.isInstance(error)) throw error;
      throw networkErrorToError(error, this.endpoint);
    }
    if (!response.ok) {
      const { body: failure, headers } = await failedReply(response);
      throw httpStatusToError(response.status, headers, failure, `${this.endpoint}${path}`);
    }
    return response;
  }

  private async json<T>(method: string, path: string, init: { json?: unknown; form?: FormData; query?: Record<string, string> } = {}): Promise<T> {
    const response = await this.send(method, path, init);
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new RubricateError('JUDGE_SERVER_ERROR', `batch API answered ${path} with a body that is not JSON`, { endpoint: this.endpoint });
    }
  }

  /** Uploads a JSONL input file; returns its file id. */
  async uploadFile(jsonl: string, filename: string): Promise<string> {
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([jsonl], { type: 'application/jsonl' }), filename);
    const file = await this.json<{ id?: unknown }>('POST', '/files', { form });
    if (typeof file.id !== 'string') throw new RubricateError('JUDGE_SERVER_ERROR', 'file upload answer has no id', { endpoint: this.endpoint });
    return file.id;
  }

  async createBatch(inputFileId: string, metadata: Record<string, string>): Promise<OpenAIBatch> {
    return this.json<OpenAIBatch>('POST', '/batches', { json: { input_file_id: inputFileId, endpoint: this.batchEndpoint, completion_window: '24h', metadata } });
  }

  async retrieveBatch(id: string): Promise<OpenAIBatch> {
    return this.json<OpenAIBatch>('GET', `/batches/${encodeURIComponent(id)}`);
  }

  async cancelBatch(id: string): Promise<OpenAIBatch> {
    return this.json<OpenAIBatch>('POST', `/batches/${encodeURIComponent(id)}/cancel`);
  }

  /** Every batch of the account, newest first (pages followed through `after`). */
  async *listBatches(): AsyncGenerator<OpenAIBatch> {
    let after: string | undefined;
    for (let page = 0; page < 1000; page += 1) {
      const answer = await this.json<{ data?: OpenAIBatch[]; has_more?: boolean; last_id?: string }>('GET', '/batches', { query: { limit: '100', ...(after ? { after } : {}) } });
      const data = answer.data ?? [];
      yield* data;
      if (!answer.has_more || data.length === 0) return;
      after = answer.last_id ?? data[data.length - 1].id;
    }
  }

  /** The lines of an output or error file; a line that is not JSON is returned as an error to report, not dropped. */
  async readResultFile(fileId: string): Promise<{ lines: BatchResultLine[]; unreadable: Array<{ line: number; text: string }> }> {
    const response = await this.send('GET', `/files/${encodeURIComponent(fileId)}/content`);
    const text = await response.text();
    const lines: BatchResultLine[] = [];
    const unreadable: Array<{ line: number; text: string }> = [];
    text.split('\n').forEach((raw, index) => {
      if (raw.trim() === '') return;
      try {
        const parsed = JSON.parse(raw) as BatchResultLine;
        if (typeof parsed?.custom_id !== 'string') throw new Error('no custom_id');
        lines.push(parsed);
      } catch {
        unreadable.push({ line: index + 1, text: raw.slice(0, 200) });
      }
    });
    return { lines, unreadable };
  }
}

/** The OpenAI (or Azure) Batch API as a batch service. */
export function openAIBatchService(api: OpenAIBatchApi, options: { provider?: 'openai' | 'azure'; limits?: BatchLimits } = {}): BatchService {
  const limits = options.limits ?? (options.provider === 'azure' ? { maxRequests: azureBatchLimits.maxRequests, maxBytes: azureBatchLimits.maxFileBytes } : { maxRequests: openAIBatchLimits.maxRequests, maxBytes: openAIBatchLimits.maxFileBytes });
  const endpoint = api.endpoint;
  const remote = (batch: OpenAIBatch): RemoteBatch => ({
    id: batch.id,
    status: batch.status,
    finished: finishedBatchStatuses.has(batch.status),
    failure: batch.errors?.data?.[0] ? `${batch.errors.data[0].code ?? 'error'}: ${batch.errors.data[0].message ?? ''}` : undefined,
    raw: batch,
  });
  return {
    provider: options.provider ?? 'openai',
    endpoint,
    limits,
    envelopeBytes: 0,
    entry: (customId, body) => JSON.stringify({ custom_id: customId, method: 'POST', url: api.batchEndpoint, body }),
    entryBytes: (entry) => Buffer.byteLength(entry) + 1,
    async submit(localId: string, entries: string[], ledger: BatchLedger) {
      const fileId = await api.uploadFile(`${entries.join('\n')}\n`, `${localId}.jsonl`);
      ledger.uploaded(localId, fileId);
      const batch = await api.createBatch(fileId, { rubricate_batch: localId });
      ledger.created(localId, batch.id, batch.status);
      return remote(batch);
    },
    /** Uploaded but the create was not recorded: find the batch made from the file, or create it now (the file is already paid for in bytes only). */
    async recover(batch: LedgerBatch, ledger: BatchLedger) {
      if (!batch.fileId) return undefined;
      for await (const candidate of api.listBatches()) {
        if (candidate.input_file_id === batch.fileId || candidate.metadata?.rubricate_batch === batch.localId) {
          ledger.created(batch.localId, candidate.id, candidate.status);
          return candidate.id;
        }
      }
      const created = await api.createBatch(batch.fileId, { rubricate_batch: batch.localId });
      ledger.created(batch.localId, created.id, created.status);
      return created.id;
    },
    retrieve: async (batchId) => remote(await api.retrieveBatch(batchId)),
    cancel: async (batchId) => remote(await api.cancelBatch(batchId)),
    async results(batch: RemoteBatch) {
      const raw = batch.raw as OpenAIBatch;
      const results: BatchResult[] = [];
      const unreadable: Array<{ line: number; text: string }> = [];
      for (const fileId of [raw.output_file_id, raw.error_file_id]) {
        if (!fileId) continue;
        const file = await api.readResultFile(fileId);
        for (const line of file.lines) results.push({ customId: line.custom_id, payload: line });
        unreadable.push(...file.unreadable);
      }
      return { results, unreadable };
    },
    read: (result) => readOpenAIResultLine(result.payload as BatchResultLine, endpoint),
  };
}

/** A result line as a reply (read exactly as a synchronous answer is) or a coded error. */
function readOpenAIResultLine(line: BatchResultLine, endpoint: string): BatchAnswer {
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
