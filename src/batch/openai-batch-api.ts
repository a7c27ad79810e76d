/**
 * The OpenAI Batch API, as far as rubricate uses it: upload a JSONL file of chat-completion
 * requests (`POST /files`, purpose `batch`), create a batch over it (`POST /batches`,
 * endpoint `/v1/chat/completions`, completion window `24h`), retrieve, cancel and list
 * batches, and download their output and error files (`GET /files/{id}/content`).
 */
import { RubricateError } from '../errors.js';
import { httpStatusToError, networkErrorToError } from '../judges/openai/http-errors.js';
import { redactUrl, registerSecret } from '../util/redact.js';

/** Provider limits of one batch (OpenAI: 50,000 requests, 200 MB input file). */
export const openAIBatchLimits = { maxRequests: 50_000, maxFileBytes: 200 * 1024 * 1024 } as const;

export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

/** States after which a batch changes no more. */
export const finishedBatchStatuses: ReadonlySet<string> = new Set(['failed', 'completed', 'expired', 'cancelled']);

export interface OpenAIBatch {
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
export interface BatchResultLine {
  custom_id: string;
  response?: { status_code: number; body: unknown } | null;
  error?: { code?: string; message?: string } | null;
}

export interface OpenAIBatchApiOptions {
  baseUrl: string;
  apiKey?: string;
  /** Azure puts the key in `api-key` and the version in the query; the paths are the same. */
  apiKeyHeader?: 'authorization' | 'api-key';
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

export class OpenAIBatchApi {
  private readonly base: string;
  readonly endpoint: string;

  constructor(private readonly options: OpenAIBatchApiOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
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
      response = await fetch(this.url(path, init.query), {
        method,
        headers: this.headers(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
        body: init.form ?? (init.json !== undefined ? JSON.stringify(init.json) : undefined),
      });
    } catch (error) {
      throw networkErrorToError(error, this.endpoint);
    }
    if (!response.ok) {
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // A non-JSON error body is reported as text.
      }
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        headers[name] = value;
      });
      throw httpStatusToError(response.status, headers, body, `${this.endpoint}${path}`);
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
    return this.json<OpenAIBatch>('POST', '/batches', { json: { input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata } });
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
