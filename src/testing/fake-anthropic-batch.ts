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
import { listPage } from './batch-list.js';
import { anthropicErrorTypes } from './fake-anthropic.js';
import { closeFake, listenFake } from './fake-server.js';

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

interface BatchRequest {
  custom_id: string;
  params: Record<string, unknown>;
}

interface BatchWork {
  batch: FakeMessageBatch;
  index: number;
  requests: BatchRequest[];
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

/** What one fake server holds between requests. */
interface BatchState {
  options: FakeAnthropicBatchOptions;
  events: EventEmitter;
  works: Map<string, BatchWork>;
  apiKey: string;
  inProgressRetrieves: number;
  maxRequests: number;
  maxBodyBytes: number;
  /** The Messages API backend's root. */
  backend: string;
  batchCounter: number;
  requestCounter: number;
  received: number;
  baseUrl: string;
}

function sendJson(state: BatchState, response: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fakebatch${String(++state.requestCounter).padStart(6, '0')}` }).end(text);
}

function sendError(state: BatchState, response: http.ServerResponse, status: number, message: string, type = anthropicErrorTypes[status] ?? 'api_error'): void {
  sendJson(state, response, status, { type: 'error', error: { type, message }, request_id: `req_fakebatch${String(state.requestCounter + 1).padStart(6, '0')}` });
}

/** A call of the backend's Messages API with the batch's key. */
function callBackend(state: BatchState, body: string | Buffer): Promise<Response> {
  return fetch(`${state.backend}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': state.apiKey, 'anthropic-version': '2023-06-01' }, body });
}

/** One result line, and the scripted duplicate of it if any. */
function pushResult(state: BatchState, work: BatchWork, request: BatchRequest, line: Record<string, unknown>): void {
  work.results.push(JSON.stringify(line));
  const duplicate = state.options.duplicateResult?.(line, request);
  if (duplicate) work.results.push(JSON.stringify(duplicate));
}

/** An `errored` result line with this error body. */
function pushErrored(work: BatchWork, request: BatchRequest, error: unknown): void {
  work.batch.request_counts.errored += 1;
  work.results.push(JSON.stringify({ custom_id: request.custom_id, result: { type: 'errored', error } }));
}

async function answer(state: BatchState, work: BatchWork, request: BatchRequest): Promise<void> {
  const scripted = state.options.requestError?.(request.custom_id, request.params);
  if (scripted) return pushErrored(work, request, { type: 'error', error: scripted });
  let reply: Response;
  let body: Record<string, unknown>;
  try {
    reply = await callBackend(state, JSON.stringify(request.params));
    body = (await reply.json()) as Record<string, unknown>;
  } catch (error) {
    // The backend went away (a test closing): an api_error result, as an internal failure would give.
    return pushErrored(work, request, { type: 'error', error: { type: 'api_error', message: String(error) } });
  }
  if (reply.ok) {
    work.batch.request_counts.succeeded += 1;
    pushResult(state, work, request, { custom_id: request.custom_id, result: { type: 'succeeded', message: body } });
  } else {
    // The error response as the Messages API gives it: {type: "error", error: {type, message}, request_id}.
    pushErrored(work, request, body);
  }
}

async function process(state: BatchState, work: BatchWork): Promise<void> {
  const limit = state.options.expireAfter?.(work.index) ?? Number.POSITIVE_INFINITY;
  let index = 0;
  for (const request of work.requests) {
    if (work.cancelRequested || index >= limit) break;
    await answer(state, work, request);
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

function end(state: BatchState, work: BatchWork): void {
  work.batch.processing_status = 'ended';
  work.batch.ended_at = iso();
  work.batch.results_url = `${state.baseUrl}/v1/messages/batches/${work.batch.id}/results`;
}

/** One retrieve's worth of progress. */
async function advance(state: BatchState, work: BatchWork): Promise<void> {
  const batch = work.batch;
  if (batch.processing_status === 'ended') return;
  work.retrieves += 1;
  work.processing ??= process(state, work);
  if (batch.processing_status === 'canceling') {
    await work.processing;
    end(state, work);
    return;
  }
  if (work.retrieves >= state.inProgressRetrieves && Date.now() - work.createdAtMs >= (state.options.delayMs ?? 0)) {
    await work.processing;
    end(state, work);
  }
}

/** Why a create body breaks the API's rules, in its words; undefined when valid. */
function invalid(body: unknown, maxRequests: number): string | undefined {
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

/** POST /v1/messages: synchronous calls (--batch-fallback sync) reach the same backend. */
async function forwardMessage(state: BatchState, raw: Buffer, outgoing: http.ServerResponse): Promise<void> {
  const reply = await callBackend(state, raw);
  outgoing.writeHead(reply.status, { 'content-type': 'application/json' }).end(await reply.text());
}

/** POST /v1/messages/batches. */
function createBatch(state: BatchState, raw: Buffer, size: number, outgoing: http.ServerResponse): void {
  if (size > state.maxBodyBytes) return sendError(state, outgoing, 413, `Request exceeds the maximum allowed number of bytes (${state.maxBodyBytes}).`, 'request_too_large');
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return sendError(state, outgoing, 400, 'There was an error parsing the body of your request: invalid JSON');
  }
  const problem = invalid(body, state.maxRequests);
  if (problem) return sendError(state, outgoing, 400, problem);
  const requests = (body as { requests: BatchRequest[] }).requests;
  const now = Date.now();
  const batch: FakeMessageBatch = {
    id: `msgbatch_fake${String(++state.batchCounter).padStart(8, '0')}`,
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
  state.received += requests.length;
  state.works.set(batch.id, { batch, index: state.batchCounter - 1, requests, retrieves: 0, createdAtMs: now, results: [], cancelRequested: false });
  sendJson(state, outgoing, 200, batch);
  state.events.emit('create', batch.id, requests.length);
}

/** GET /v1/messages/batches: newest first, in pages. */
function listBatches(state: BatchState, url: URL, outgoing: http.ServerResponse): void {
  const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get('limit') ?? 20)));
  const page = listPage([...state.works.values()].map((work) => work.batch).reverse(), { limit, after: url.searchParams.get('after_id'), before: url.searchParams.get('before_id') });
  sendJson(state, outgoing, 200, page);
}

/** POST /v1/messages/batches/{id}/cancel. */
function cancelBatch(state: BatchState, work: BatchWork, outgoing: http.ServerResponse): void {
  const batch = work.batch;
  if (batch.processing_status === 'ended') return sendError(state, outgoing, 400, `Message batch ${batch.id} has already ended and cannot be canceled.`);
  work.cancelRequested = true;
  batch.processing_status = 'canceling';
  batch.cancel_initiated_at = iso();
  state.events.emit('cancel', batch.id);
  sendJson(state, outgoing, 200, batch);
}

/** GET /v1/messages/batches/{id}/results: JSONL once ended, or a scripted redirect. */
function sendResults(state: BatchState, work: BatchWork, url: URL, outgoing: http.ServerResponse): void {
  const batch = work.batch;
  if (batch.processing_status !== 'ended') return sendError(state, outgoing, 404, `Message batch ${batch.id} has no available results: it has not finished processing.`, 'not_found_error');
  if (state.options.resultsGone?.(batch.id)) return sendError(state, outgoing, 404, `Message batch ${batch.id} results not found.`, 'not_found_error');
  const location = state.options.redirectResults?.(batch.id, url);
  if (location !== undefined) {
    outgoing.writeHead(302, { location, 'content-length': '0' }).end();
    return;
  }
  outgoing.writeHead(200, { 'content-type': 'application/x-jsonl' }).end(`${work.results.join('\n')}\n`);
}

/** DELETE /v1/messages/batches/{id}: only once ended. */
function deleteBatch(state: BatchState, work: BatchWork, outgoing: http.ServerResponse): void {
  const batch = work.batch;
  if (batch.processing_status !== 'ended') return sendError(state, outgoing, 400, `Message batch ${batch.id} cannot be deleted while it is processing; cancel it first.`);
  state.works.delete(batch.id);
  sendJson(state, outgoing, 200, { id: batch.id, type: 'message_batch_deleted' });
}

/** The routes of one batch (`/v1/messages/batches/{id}…`); false when none matched. */
async function routeOneBatch(state: BatchState, one: RegExpExecArray, method: string, url: URL, outgoing: http.ServerResponse): Promise<boolean> {
  const work = state.works.get(decodeURIComponent(one[1]));
  if (!work) {
    sendError(state, outgoing, 404, `Message batch ${one[1]} not found.`, 'not_found_error');
    return true;
  }
  const batch = work.batch;
  if (one[2] === '/cancel' && method === 'POST') cancelBatch(state, work, outgoing);
  else if (one[2] === '/results' && method === 'GET') sendResults(state, work, url, outgoing);
  else if (!one[2] && method === 'GET') {
    await advance(state, work);
    state.events.emit('retrieve', batch.id, batch.processing_status);
    sendJson(state, outgoing, 200, batch);
  } else if (!one[2] && method === 'DELETE') deleteBatch(state, work, outgoing);
  else return false;
  return true;
}

async function route(state: BatchState, incoming: http.IncomingMessage, raw: Buffer, size: number, outgoing: http.ServerResponse): Promise<void> {
  const url = new URL(incoming.url ?? '/', 'http://fake');
  const method = incoming.method ?? 'GET';
  if (url.pathname === '/v1/messages' && method === 'POST') return forwardMessage(state, raw, outgoing);
  if (url.pathname === '/v1/messages/batches' && method === 'POST') return createBatch(state, raw, size, outgoing);
  if (url.pathname === '/v1/messages/batches' && method === 'GET') return listBatches(state, url, outgoing);
  const one = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(url.pathname);
  if (one && (await routeOneBatch(state, one, method, url, outgoing))) return;
  sendError(state, outgoing, 404, 'Not Found', 'not_found_error');
}

async function handleRequest(state: BatchState, incoming: http.IncomingMessage, raw: Buffer, size: number, outgoing: http.ServerResponse): Promise<void> {
  if (incoming.headers['x-api-key'] !== state.apiKey) return sendError(state, outgoing, 401, 'invalid x-api-key');
  if (!incoming.headers['anthropic-version']) return sendError(state, outgoing, 400, 'anthropic-version: header is required');
  try {
    await route(state, incoming, raw, size, outgoing);
  } catch (error) {
    sendError(state, outgoing, 500, `fake batch server: ${String(error)}`, 'api_error');
  }
}

export async function startFakeAnthropicBatch(options: FakeAnthropicBatchOptions): Promise<FakeAnthropicBatch> {
  const state: BatchState = {
    options,
    events: new EventEmitter(),
    works: new Map<string, BatchWork>(),
    apiKey: options.apiKey ?? 'test-anthropic-key',
    inProgressRetrieves: options.retrievesInProgress ?? 1,
    maxRequests: options.maxRequestsPerBatch ?? 100_000,
    maxBodyBytes: options.maxBodyBytes ?? 256 * 1024 * 1024,
    backend: options.backendBaseUrl.replace(/\/+$/, '').replace(/\/v1$/, ''),
    batchCounter: 0,
    requestCounter: 0,
    received: 0,
    baseUrl: '',
  };
  const server = http.createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= state.maxBodyBytes) chunks.push(chunk);
    });
    incoming.on('end', () => void handleRequest(state, incoming, Buffer.concat(chunks), size, outgoing));
  });
  state.baseUrl = await listenFake(server);
  return {
    baseUrl: state.baseUrl,
    events: state.events,
    get receivedRequests() {
      return state.received;
    },
    get createdBatches() {
      return state.batchCounter;
    },
    batches: () => [...state.works.values()].map((work) => work.batch),
    resultsOf: (batchId) => {
      const work = state.works.get(batchId);
      return work && work.batch.processing_status === 'ended' ? `${work.results.join('\n')}\n` : undefined;
    },
    close: () => closeFake(server),
  };
}
