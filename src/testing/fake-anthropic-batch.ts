/**
 * A loopback fake of Anthropic's Message Batches API, written from its documentation:
 * `POST /v1/messages/batches` (`{requests: [{custom_id, params}]}`: 1 to 100,000 requests,
 * custom ids of 1–64 letters, digits, `-` or `_`, unique in the batch, a body of at most
 * 256 MB), `GET /v1/messages/batches/{id}`, `POST …/{id}/cancel`, `GET /v1/messages/batches`
 * (newest first, `limit`, `after_id`, `before_id`), `DELETE …/{id}` (only once ended), and
 * `GET …/{id}/results` (JSONL, only once ended). Headers: `x-api-key` and `anthropic-version`.
 * Errors have Anthropic's body `{"type":"error","error":{"type","message"},"request_id"}`.
 *
 * Each request's `params` is answered by a Messages API backend (the fake Anthropic server),
 * so a batch and a synchronous run see the same verdicts; a request the backend refuses comes
 * back `errored` with the backend's error body (params are validated when processed, as the
 * API does). `processing_status` is in_progress for a number of retrieves (or a delay), then
 * ended; a batch can be scripted to expire part-way (`expired` results for the rest), and a
 * cancel gives canceling → ended with `canceled` results for what had not run.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { listPage } from './batch-list.js';

export interface FakeAnthropicBatchOptions {
  /** Messages API server answering each request (its root URL, without `/v1`). */
  backendBaseUrl: string;
  apiKey?: string;
  /** Retrieves a batch stays in_progress before it ends; default 1. */
  retrievesInProgress?: number;
  /** Milliseconds before a batch may end (a configurable delay); default 0. */
  delayMs?: number;
  /** Answer only this many requests of each batch, then end it with the rest `expired`. */
  expireAfter?: (batchIndex: number) => number | undefined;
  /** Per-request errors: an `errored` result with this error type and message instead of the backend's answer. */
  requestError?: (customId: string, params: Record<string, unknown>) => { type: string; message: string } | undefined;
  maxRequestsPerBatch?: number;
  maxBodyBytes?: number;
  /**
   * A second result line for the same custom id (what the API promises never to write): return
   * the line itself for an identical copy, a changed copy for a conflicting answer.
   */
  duplicateResult?: (line: Record<string, unknown>, request: { custom_id: string; params: Record<string, unknown> }) => Record<string, unknown> | undefined;
  /** Ended batches whose results answer 404 (expired after 29 days, or deleted). */
  resultsGone?: (batchId: string) => boolean;
  /** A redirect for a results download: the Location to answer 302 with, or undefined to serve them. */
  redirectResults?: (batchId: string, url: URL) => string | undefined;
}

interface FakeMessageBatch {
  id: string;
  type: 'message_batch';
  processing_status: 'in_progress' | 'canceling' | 'ended';
  request_counts: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
  ended_at: string | null;
  created_at: string;
  expires_at: string;
  archived_at: string | null;
  cancel_initiated_at: string | null;
  results_url: string | null;
}

interface BatchWork {
  batch: FakeMessageBatch;
  index: number;
  requests: Array<{ custom_id: string; params: Record<string, unknown> }>;
  retrieves: number;
  createdAtMs: number;
  processing?: Promise<void>;
  results: string[];
  cancelRequested: boolean;
}

export interface FakeAnthropicBatch {
  baseUrl: string;
  /** Events: `create` (batch id, requests), `retrieve` (batch id, status), `cancel` (batch id). */
  events: EventEmitter;
  /** Requests received in created batches, over the fake's life. */
  readonly receivedRequests: number;
  readonly createdBatches: number;
  batches(): FakeMessageBatch[];
  /** An ended batch's results file (for a test's second server that a download is redirected to). */
  resultsOf(batchId: string): string | undefined;
  close(): Promise<void>;
}

const customIdPattern = /^[a-zA-Z0-9_-]{1,64}$/;

const iso = (milliseconds = Date.now()) => new Date(milliseconds).toISOString();

const statusTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export async function startFakeAnthropicBatch(options: FakeAnthropicBatchOptions): Promise<FakeAnthropicBatch> {
  const events = new EventEmitter();
  const works = new Map<string, BatchWork>();
  const apiKey = options.apiKey ?? 'test-anthropic-key';
  const inProgressRetrieves = options.retrievesInProgress ?? 1;
  const maxRequests = options.maxRequestsPerBatch ?? 100_000;
  const maxBodyBytes = options.maxBodyBytes ?? 256 * 1024 * 1024;
  const backend = options.backendBaseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  let batchCounter = 0;
  let requestCounter = 0;
  let received = 0;
  let baseUrl = '';

  function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fakebatch${String(++requestCounter).padStart(6, '0')}` }).end(text);
  }

  function sendError(response: http.ServerResponse, status: number, message: string, type = statusTypes[status] ?? 'api_error'): void {
    sendJson(response, status, { type: 'error', error: { type, message }, request_id: `req_fakebatch${String(requestCounter + 1).padStart(6, '0')}` });
  }

  /** One result line, and the scripted duplicate of it if any. */
  function pushResult(work: BatchWork, request: BatchWork['requests'][number], line: Record<string, unknown>): void {
    work.results.push(JSON.stringify(line));
    const duplicate = options.duplicateResult?.(line, request);
    if (duplicate) work.results.push(JSON.stringify(duplicate));
  }

  async function answer(work: BatchWork, request: BatchWork['requests'][number]): Promise<void> {
    const scripted = options.requestError?.(request.custom_id, request.params);
    if (scripted) {
      work.batch.request_counts.errored += 1;
      work.results.push(JSON.stringify({ custom_id: request.custom_id, result: { type: 'errored', error: { type: 'error', error: scripted } } }));
      return;
    }
    let reply: Response;
    let body: Record<string, unknown>;
    try {
      reply = await fetch(`${backend}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(request.params),
      });
      body = (await reply.json()) as Record<string, unknown>;
    } catch (error) {
      // The backend went away (a test closing): an api_error result, as an internal failure would give.
      work.batch.request_counts.errored += 1;
      work.results.push(JSON.stringify({ custom_id: request.custom_id, result: { type: 'errored', error: { type: 'error', error: { type: 'api_error', message: String(error) } } } }));
      return;
    }
    if (reply.ok) {
      work.batch.request_counts.succeeded += 1;
      pushResult(work, request, { custom_id: request.custom_id, result: { type: 'succeeded', message: body } });
    } else {
      work.batch.request_counts.errored += 1;
      // The error response as the Messages API gives it: {type: "error", error: {type, message}, request_id}.
      work.results.push(JSON.stringify({ custom_id: request.custom_id, result: { type: 'errored', error: body } }));
    }
  }

  async function process(work: BatchWork): Promise<void> {
    const limit = options.expireAfter?.(work.index) ?? Number.POSITIVE_INFINITY;
    let index = 0;
    for (const request of work.requests) {
      if (work.cancelRequested || index >= limit) break;
      await answer(work, request);
      work.batch.request_counts.processing -= 1;
      index += 1;
    }
    for (const request of work.requests.slice(index)) {
      const type = work.cancelRequested ? 'canceled' : 'expired';
      work.batch.request_counts[type] += 1;
      work.batch.request_counts.processing -= 1;
      work.results.push(JSON.stringify({ custom_id: request.custom_id, result: { type } }));
    }
  }

  function end(work: BatchWork): void {
    work.batch.processing_status = 'ended';
    work.batch.ended_at = iso();
    work.batch.results_url = `${baseUrl}/v1/messages/batches/${work.batch.id}/results`;
  }

  async function advance(work: BatchWork): Promise<void> {
    const batch = work.batch;
    if (batch.processing_status === 'ended') return;
    work.retrieves += 1;
    work.processing ??= process(work);
    if (batch.processing_status === 'canceling') {
      await work.processing;
      end(work);
      return;
    }
    if (work.retrieves >= inProgressRetrieves && Date.now() - work.createdAtMs >= (options.delayMs ?? 0)) {
      await work.processing;
      end(work);
    }
  }

  /** Why a create body breaks the API's rules, in its words; undefined when valid. */
  function invalid(body: unknown): string | undefined {
    const requests = (body as { requests?: unknown })?.requests;
    if (!Array.isArray(requests)) return 'requests: Field required';
    if (requests.length === 0) return 'requests: List should have at least 1 item after validation, not 0';
    if (requests.length > maxRequests) return `requests: List should have at most ${maxRequests} items after validation, not ${requests.length}`;
    const seen = new Set<string>();
    for (let index = 0; index < requests.length; index += 1) {
      const request = requests[index] as { custom_id?: unknown; params?: unknown };
      for (const key of Object.keys(request ?? {})) if (key !== 'custom_id' && key !== 'params') return `requests.${index}.${key}: Extra inputs are not permitted`;
      if (typeof request?.custom_id !== 'string') return `requests.${index}.custom_id: Field required`;
      if (!customIdPattern.test(request.custom_id)) return `requests.${index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
      if (seen.has(request.custom_id)) return `Duplicate custom_id: '${request.custom_id}'. Each request in a batch must have a unique custom_id.`;
      seen.add(request.custom_id);
      if (!request.params || typeof request.params !== 'object' || Array.isArray(request.params)) return `requests.${index}.params: Field required`;
    }
    return undefined;
  }

  const server = http.createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBodyBytes) chunks.push(chunk);
    });
    incoming.on('end', async () => {
      const url = new URL(incoming.url ?? '/', 'http://fake');
      const method = incoming.method ?? 'GET';
      if (incoming.headers['x-api-key'] !== apiKey) return sendError(outgoing, 401, 'invalid x-api-key');
      if (!incoming.headers['anthropic-version']) return sendError(outgoing, 400, 'anthropic-version: header is required');
      try {
        if (url.pathname === '/v1/messages' && method === 'POST') {
          // Synchronous calls (--batch-fallback sync) reach the same backend.
          const reply = await fetch(`${backend}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' }, body: Buffer.concat(chunks) });
          outgoing.writeHead(reply.status, { 'content-type': 'application/json' }).end(await reply.text());
          return;
        }
        if (url.pathname === '/v1/messages/batches' && method === 'POST') {
          if (size > maxBodyBytes) return sendError(outgoing, 413, `Request exceeds the maximum allowed number of bytes (${maxBodyBytes}).`, 'request_too_large');
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return sendError(outgoing, 400, 'There was an error parsing the body of your request: invalid JSON');
          }
          const problem = invalid(body);
          if (problem) return sendError(outgoing, 400, problem);
          const requests = (body as { requests: BatchWork['requests'] }).requests;
          const now = Date.now();
          const batch: FakeMessageBatch = {
            id: `msgbatch_fake${String(++batchCounter).padStart(8, '0')}`,
            type: 'message_batch',
            processing_status: 'in_progress',
            request_counts: { processing: requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
            ended_at: null,
            created_at: iso(now),
            expires_at: iso(now + 24 * 3600 * 1000),
            archived_at: null,
            cancel_initiated_at: null,
            results_url: null,
          };
          received += requests.length;
          works.set(batch.id, { batch, index: batchCounter - 1, requests, retrieves: 0, createdAtMs: now, results: [], cancelRequested: false });
          sendJson(outgoing, 200, batch);
          events.emit('create', batch.id, requests.length);
          return;
        }
        if (url.pathname === '/v1/messages/batches' && method === 'GET') {
          const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get('limit') ?? 20)));
          const page = listPage([...works.values()].map((work) => work.batch).reverse(), { limit, after: url.searchParams.get('after_id'), before: url.searchParams.get('before_id') });
          return sendJson(outgoing, 200, page);
        }
        const one = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(url.pathname);
        if (one) {
          const work = works.get(decodeURIComponent(one[1]));
          if (!work) return sendError(outgoing, 404, `Message batch ${one[1]} not found.`, 'not_found_error');
          const batch = work.batch;
          if (one[2] === '/cancel' && method === 'POST') {
            if (batch.processing_status === 'ended') return sendError(outgoing, 400, `Message batch ${batch.id} has already ended and cannot be canceled.`);
            work.cancelRequested = true;
            batch.processing_status = 'canceling';
            batch.cancel_initiated_at = iso();
            events.emit('cancel', batch.id);
            return sendJson(outgoing, 200, batch);
          }
          if (one[2] === '/results' && method === 'GET') {
            if (batch.processing_status !== 'ended') return sendError(outgoing, 404, `Message batch ${batch.id} has no available results: it has not finished processing.`, 'not_found_error');
            if (options.resultsGone?.(batch.id)) return sendError(outgoing, 404, `Message batch ${batch.id} results not found.`, 'not_found_error');
            const location = options.redirectResults?.(batch.id, url);
            if (location !== undefined) {
              outgoing.writeHead(302, { location, 'content-length': '0' }).end();
              return;
            }
            outgoing.writeHead(200, { 'content-type': 'application/x-jsonl' }).end(`${work.results.join('\n')}\n`);
            return;
          }
          if (!one[2] && method === 'GET') {
            await advance(work);
            events.emit('retrieve', batch.id, batch.processing_status);
            return sendJson(outgoing, 200, batch);
          }
          if (!one[2] && method === 'DELETE') {
            if (batch.processing_status !== 'ended') return sendError(outgoing, 400, `Message batch ${batch.id} cannot be deleted while it is processing; cancel it first.`);
            works.delete(batch.id);
            return sendJson(outgoing, 200, { id: batch.id, type: 'message_batch_deleted' });
          }
        }
        sendError(outgoing, 404, 'Not Found', 'not_found_error');
      } catch (error) {
        sendError(outgoing, 500, `fake batch server: ${String(error)}`, 'api_error');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    events,
    get receivedRequests() {
      return received;
    },
    get createdBatches() {
      return batchCounter;
    },
    batches: () => [...works.values()].map((work) => work.batch),
    resultsOf: (batchId) => {
      const work = works.get(batchId);
      return work && work.batch.processing_status === 'ended' ? `${work.results.join('\n')}\n` : undefined;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
