/**
 * A loopback fake of the OpenAI Batch API, written from its documentation: `POST /v1/files`
 * (multipart, purpose `batch`), `GET /v1/files/{id}/content`, `POST /v1/batches`,
 * `GET /v1/batches/{id}`, `POST /v1/batches/{id}/cancel`, `GET /v1/batches` (cursor pages).
 * Each request line is answered by a chat-completions backend (the scripted fake judge or
 * the simulator), so a batch run and a synchronous run see the same verdicts. Statuses move
 * validating → in_progress → finalizing → completed one step per retrieve (or after a
 * delay); a batch can be scripted to expire part-way, and cancelling gives cancelling →
 * cancelled with the answers made so far. Lines the backend refuses go to the error file.
 *
 * The enqueued-token limit is modelled: a batch whose input tokens, added to those of the
 * batches still open, pass the limit ends `failed` with `token_limit_exceeded`.
 *
 * With `azure`, it is Azure OpenAI's Batch API instead: paths under `/openai` with a required
 * `api-version` query, the key in an `api-key` header, request lines and the batch endpoint
 * as `/chat/completions`, 100,000 requests per file, and Azure's error bodies.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import { listPage } from './batch-list.js';
import { receiveWithin, requestBoundsFor } from './request-bounds.js';
import { closeFake, listenFake } from './fake-server.js';

export interface FakeBatchOptions {
  /** Chat-completions server answering each line (`…/v1`). */
  backendBaseUrl: string;
  /** Retrieves a batch stays in each of validating, in_progress and finalizing; default 1. */
  retrievesPerStage?: number;
  /** Milliseconds before a batch may leave validating (a configurable delay); default 0. */
  delayMs?: number;
  /** Answer only this many lines of each batch, then end it `expired` (the rest go to the error file). */
  expireAfter?: (batchIndex: number) => number | undefined;
  /** Per-request errors: an error-file entry instead of the backend's answer. */
  lineError?: (customId: string, body: Record<string, unknown>) => { status: number; body: unknown } | { code: string; message: string } | undefined;
  maxRequestsPerBatch?: number;
  /** Input tokens the open batches may hold together; a batch passing it fails with token_limit_exceeded. */
  maxEnqueuedTokens?: number;
  /** Input tokens of one request body (for the enqueued-token limit); default: characters / 4. */
  countTokens?: (body: Record<string, unknown>) => number;
  /** Azure OpenAI's profile of the API. */
  azure?: { apiKey: string };
  /**
   * A second output line for the same custom id (what the API promises never to write): return
   * the entry itself for an identical copy, a changed copy for a conflicting answer.
   */
  duplicateResult?: (entry: Record<string, unknown>, request: { custom_id: string; body: Record<string, unknown> }) => Record<string, unknown> | undefined;
  /** Output and error files whose content answers 404 `No such File object` (expired or deleted). */
  fileGone?: (file: { id: string; purpose: string; filename: string }) => boolean;
  /** A redirect for a file's content download: the Location to answer 302 with, or undefined to serve it. */
  redirectContent?: (fileId: string, url: URL) => string | undefined;
  /** Where it listens (default: a free loopback port). */
  listen?: import('./fake-judge.js').ListenOptions;
}

interface FakeFile {
  id: string;
  purpose: string;
  filename: string;
  content: string;
  created_at: number;
}

interface FakeBatch {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: Array<{ code: string; message: string; line: number | null; param: string | null }> } | null;
  input_file_id: string;
  completion_window: string;
  status: string;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
}

interface BatchWork {
  batch: FakeBatch;
  index: number;
  lines: Array<{ custom_id: string; body: Record<string, unknown> }>;
  retrieves: number;
  createdAtMs: number;
  processing?: Promise<void>;
  output: string[];
  errors: string[];
  cancelRequested: boolean;
  tokens: number;
}

export interface FakeOpenAIBatch {
  baseUrl: string;
  /** Events: `upload` (file), `create` (batch), `retrieve` (batch), `cancel` (batch). */
  events: EventEmitter;
  /** Request lines received in created batches, over the fake's life. */
  readonly receivedRequests: number;
  readonly createdBatches: number;
  /** Most input tokens the open batches held at once. */
  readonly peakEnqueuedTokens: number;
  /** Bytes of each uploaded input file, in upload order. */
  readonly uploadedBytes: number[];
  /** A file's content (for a test's second server that a download is redirected to). */
  fileContent(fileId: string): string | undefined;
  batches(): FakeBatch[];
  close(): Promise<void>;
}

const now = () => Math.floor(Date.now() / 1000);

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }).end(text);
}

function sendError(response: http.ServerResponse, status: number, message: string, type = 'invalid_request_error', param: string | null = null, code: string | null = null): void {
  sendJson(response, status, { error: { message, type, param, code } });
}

/** Reads one part of a multipart/form-data body (enough for the file upload). */
function multipartFields(body: Buffer, contentType: string): Map<string, { filename?: string; value: string }> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const fields = new Map<string, { filename?: string; value: string }>();
  if (!boundary) return fields;
  const marker = `--${boundary[1] ?? boundary[2]}`;
  for (const part of body.toString('utf8').split(marker)) {
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd < 0) continue;
    const headers = part.slice(0, headerEnd);
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    if (!name) continue;
    const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
    fields.set(name, { filename, value: part.slice(headerEnd + 4).replace(/\r\n$/, '') });
  }
  return fields;
}

/** What one fake server holds between requests. */
interface BatchState {
  options: FakeBatchOptions;
  events: EventEmitter;
  files: Map<string, FakeFile>;
  works: Map<string, BatchWork>;
  fileCounter: number;
  batchCounter: number;
  received: number;
  perStage: number;
  azure: FakeBatchOptions['azure'];
  maxRequests: number;
  /** The `url` every request line must name. */
  lineUrl: string;
  countTokens: (body: Record<string, unknown>) => number;
  peakEnqueued: number;
  uploadedBytes: number[];
}

type BatchLine = BatchWork['lines'][number];

const openStatuses = new Set(['validating', 'in_progress', 'finalizing']);

/** Input tokens the open batches hold together. */
function enqueued(state: BatchState): number {
  return [...state.works.values()].filter((work) => openStatuses.has(work.batch.status)).reduce((total, work) => total + work.tokens, 0);
}

function addFile(state: BatchState, content: string, purpose: string, filename: string): FakeFile {
  const file: FakeFile = { id: `file-${++state.fileCounter}`, purpose, filename, content, created_at: now() };
  state.files.set(file.id, file);
  return file;
}

/** A call of the chat-completions backend. */
function callBackend(state: BatchState, body: string | Buffer): Promise<Response> {
  return fetch(`${state.options.backendBaseUrl.replace(/\/+$/, '')}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

/** The error-file entry of a scripted line error. */
function scriptedErrorEntry(line: BatchLine, scripted: { status: number; body: unknown } | { code: string; message: string }): Record<string, unknown> {
  return 'status' in scripted
    ? { id: `batch_req_${line.custom_id}`, custom_id: line.custom_id, response: { status_code: scripted.status, request_id: `req_${line.custom_id}`, body: scripted.body }, error: null }
    : { id: `batch_req_${line.custom_id}`, custom_id: line.custom_id, response: null, error: { code: scripted.code, message: scripted.message } };
}

async function answerLine(state: BatchState, work: BatchWork, line: BatchLine): Promise<void> {
  const scripted = state.options.lineError?.(line.custom_id, line.body);
  if (scripted) {
    work.errors.push(JSON.stringify(scriptedErrorEntry(line, scripted)));
    return;
  }
  const answer = await callBackend(state, JSON.stringify(line.body));
  const text = await answer.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // kept as text
  }
  const entry = { id: `batch_req_${line.custom_id}`, custom_id: line.custom_id, response: { status_code: answer.status, request_id: `req_${line.custom_id}`, body }, error: null };
  (answer.ok ? work.output : work.errors).push(JSON.stringify(entry));
  const duplicate = state.options.duplicateResult?.(entry, line);
  if (duplicate) (answer.ok ? work.output : work.errors).push(JSON.stringify(duplicate));
}

async function process(state: BatchState, work: BatchWork): Promise<void> {
  const limit = state.options.expireAfter?.(work.index) ?? Number.POSITIVE_INFINITY;
  let index = 0;
  for (const line of work.lines) {
    if (work.cancelRequested || index >= limit) break;
    await answerLine(state, work, line);
    index += 1;
  }
  for (const line of work.lines.slice(index)) {
    const code = work.cancelRequested ? 'batch_cancelled' : 'batch_expired';
    const message = work.cancelRequested ? 'This request was not executed because the batch was cancelled.' : 'This request could not be executed before the completion window expired.';
    work.errors.push(JSON.stringify({ id: `batch_req_${line.custom_id}`, custom_id: line.custom_id, response: null, error: { code, message } }));
  }
}

function finish(state: BatchState, work: BatchWork, status: 'completed' | 'expired' | 'cancelled'): void {
  const batch = work.batch;
  batch.request_counts = { total: work.lines.length, completed: work.output.length, failed: work.errors.length };
  if (work.output.length > 0) batch.output_file_id = addFile(state, `${work.output.join('\n')}\n`, 'batch_output', `${batch.id}_output.jsonl`).id;
  if (work.errors.length > 0) batch.error_file_id = addFile(state, `${work.errors.join('\n')}\n`, 'batch_output', `${batch.id}_error.jsonl`).id;
  batch.status = status;
  batch[`${status}_at`] = now();
}

/** An in_progress batch's retrieve: expired part-way, or on to finalizing after its retrieves. */
async function advanceInProgress(state: BatchState, work: BatchWork): Promise<void> {
  const batch = work.batch;
  await work.processing;
  const limit = state.options.expireAfter?.(work.index);
  if (limit !== undefined && limit < work.lines.length) {
    finish(state, work, 'expired');
    return;
  }
  batch.request_counts = { total: work.lines.length, completed: work.output.length, failed: work.errors.length };
  if (work.retrieves >= state.perStage) {
    batch.status = 'finalizing';
    batch.finalizing_at = now();
    work.retrieves = 0;
  }
}

/** One retrieve's worth of progress. */
async function advance(state: BatchState, work: BatchWork): Promise<void> {
  const batch = work.batch;
  work.retrieves += 1;
  if (batch.status === 'validating') {
    if (work.retrieves >= state.perStage && Date.now() - work.createdAtMs >= (state.options.delayMs ?? 0)) {
      batch.status = 'in_progress';
      batch.in_progress_at = now();
      work.retrieves = 0;
      work.processing = process(state, work);
    }
  } else if (batch.status === 'in_progress') {
    await advanceInProgress(state, work);
  } else if (batch.status === 'finalizing') {
    if (work.retrieves >= state.perStage) finish(state, work, 'completed');
  } else if (batch.status === 'cancelling') {
    await work.processing;
    finish(state, work, 'cancelled');
  }
}

function validate(state: BatchState, content: string): { lines: BatchLine[] } | { error: string; line: number } {
  const lines: BatchLine[] = [];
  const seen = new Set<string>();
  let model: unknown;
  const rows = content.split('\n').filter((row) => row.trim() !== '');
  for (let index = 0; index < rows.length; index += 1) {
    let parsed: { custom_id?: unknown; method?: unknown; url?: unknown; body?: unknown };
    try {
      parsed = JSON.parse(rows[index]);
    } catch {
      return { error: 'invalid_json_line', line: index + 1 };
    }
    if (typeof parsed.custom_id !== 'string' || seen.has(parsed.custom_id)) return { error: 'duplicate_custom_id', line: index + 1 };
    if (parsed.method !== 'POST' || parsed.url !== state.lineUrl) return { error: 'invalid_url', line: index + 1 };
    const body = parsed.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object') return { error: 'missing_body', line: index + 1 };
    if (model !== undefined && body.model !== model) return { error: 'mismatched_model', line: index + 1 };
    model = body.model;
    seen.add(parsed.custom_id);
    lines.push({ custom_id: parsed.custom_id, body });
  }
  if (lines.length === 0) return { error: 'empty_file', line: 0 };
  if (lines.length > state.maxRequests) return { error: 'too_many_requests', line: state.maxRequests + 1 };
  return { lines };
}

/** The API path a request names once its key (and Azure's URL form) is checked; undefined when an error was sent. */
function acceptedPath(state: BatchState, incoming: http.IncomingMessage, url: URL, outgoing: http.ServerResponse): string | undefined {
  const azure = state.azure;
  if (!azure) {
    if (/^Bearer \S+/.test(String(incoming.headers.authorization ?? ''))) return url.pathname.replace(/^\/v1/, '');
    return void sendError(outgoing, 401, 'You didn\'t provide an API key.', 'invalid_request_error', null, 'missing_api_key');
  }
  // Azure's own error bodies: {"error": {"code": "401" | "404", "message"}}.
  if (incoming.headers['api-key'] !== azure.apiKey) {
    return void sendJson(outgoing, 401, { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.' } });
  }
  if (!url.pathname.startsWith('/openai/') || !url.searchParams.get('api-version')) return void sendJson(outgoing, 404, { error: { code: '404', message: 'Resource not found' } });
  return url.pathname.replace(/^\/openai/, '').replace(/^\/deployments\/[^/]+\/chat\/completions$/, '/chat/completions');
}

/** POST /chat/completions: synchronous calls (--batch-fallback sync) reach the same backend. */
async function forwardChat(state: BatchState, body: Buffer, outgoing: http.ServerResponse): Promise<void> {
  const answer = await callBackend(state, body);
  outgoing.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
}

/** POST /files: a multipart upload of purpose `batch`. */
function uploadFile(state: BatchState, incoming: http.IncomingMessage, body: Buffer, outgoing: http.ServerResponse): void {
  const fields = multipartFields(body, String(incoming.headers['content-type'] ?? ''));
  const purpose = fields.get('purpose')?.value;
  const file = fields.get('file');
  if (purpose !== 'batch') return sendError(outgoing, 400, `'${purpose ?? ''}' is not one of ['fine-tune', 'assistants', 'batch', 'user_data', 'vision', 'evals'] - 'purpose'`, 'invalid_request_error', 'purpose');
  if (!file) return sendError(outgoing, 400, "Missing required parameter: 'file'.", 'invalid_request_error', 'file');
  const stored = addFile(state, file.value, 'batch', file.filename ?? 'upload.jsonl');
  state.uploadedBytes.push(Buffer.byteLength(stored.content));
  state.events.emit('upload', stored.id, Buffer.byteLength(stored.content));
  sendJson(outgoing, 200, { id: stored.id, object: 'file', bytes: Buffer.byteLength(stored.content), created_at: stored.created_at, filename: stored.filename, purpose: 'batch' });
}

/** GET /files/{id}/content, or a scripted redirect. */
function sendFileContent(state: BatchState, fileId: string, url: URL, outgoing: http.ServerResponse): void {
  const file = state.files.get(decodeURIComponent(fileId));
  if (!file || state.options.fileGone?.(file)) return sendError(outgoing, 404, `No such File object: ${fileId}`, 'invalid_request_error', 'id');
  const location = state.options.redirectContent?.(file.id, url);
  if (location !== undefined) {
    outgoing.writeHead(302, { location, 'content-length': '0' }).end();
    return;
  }
  outgoing.writeHead(200, { 'content-type': 'application/octet-stream' }).end(file.content);
}

type CreateRequest = { input_file_id?: string; endpoint?: string; completion_window?: string; metadata?: Record<string, string> };

/** A new batch record, validating. */
function newBatch(state: BatchState, request: CreateRequest, file: FakeFile): FakeBatch {
  return {
    id: `batch_${++state.batchCounter}`,
    object: 'batch',
    endpoint: request.endpoint ?? '',
    errors: null,
    input_file_id: file.id,
    completion_window: '24h',
    status: 'validating',
    output_file_id: null,
    error_file_id: null,
    created_at: now(),
    in_progress_at: null,
    expires_at: now() + 86_400,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    request_counts: { total: 0, completed: 0, failed: 0 },
    metadata: request.metadata ?? null,
  };
}

/** A new batch's fate: failed over the enqueued-token limit or an invalid input file, or counted in. */
function admit(state: BatchState, work: BatchWork, checked: ReturnType<typeof validate>): void {
  const batch = work.batch;
  const limit = state.options.maxEnqueuedTokens;
  if (!('error' in checked) && limit !== undefined && enqueued(state) + work.tokens > limit) {
    batch.status = 'failed';
    batch.failed_at = now();
    batch.errors = { object: 'list', data: [{ code: 'token_limit_exceeded', message: `Enqueued token limit reached for ${String(work.lines[0]?.body.model)} in organization org-fake. Limit: ${limit.toLocaleString('en-US')} enqueued tokens. Please try again once some in_progress batches have been completed.`, line: null, param: null }] };
    state.received += work.lines.length;
  } else if ('error' in checked) {
    batch.status = 'failed';
    batch.failed_at = now();
    batch.errors = { object: 'list', data: [{ code: checked.error, message: `input file line ${checked.line}: ${checked.error}`, line: checked.line, param: null }] };
  } else {
    batch.request_counts.total = checked.lines.length;
    state.received += checked.lines.length;
  }
}

/** POST /batches. */
function createBatch(state: BatchState, body: Buffer, outgoing: http.ServerResponse): void {
  const request = JSON.parse(body.toString('utf8')) as CreateRequest;
  const endpoints = state.azure ? ['/chat/completions', '/embeddings', '/responses'] : ['/v1/chat/completions', '/v1/embeddings', '/v1/completions', '/v1/responses'];
  if (!endpoints.includes(request.endpoint ?? '')) {
    return sendError(outgoing, 400, `Invalid value: '${request.endpoint}'. Supported values are: ${endpoints.map((value) => `'${value}'`).join(', ')}.`, 'invalid_request_error', 'endpoint');
  }
  if (request.completion_window !== '24h') return sendError(outgoing, 400, `Invalid value: '${request.completion_window}'. Supported values are: '24h'.`, 'invalid_request_error', 'completion_window');
  const file = state.files.get(request.input_file_id ?? '');
  if (!file) return sendError(outgoing, 404, `No such File object: ${request.input_file_id}`, 'invalid_request_error', 'input_file_id');
  const checked = validate(state, file.content);
  const batch = newBatch(state, request, file);
  const lines = 'lines' in checked ? checked.lines : [];
  const tokens = lines.reduce((total, line) => total + state.countTokens(line.body), 0);
  const work: BatchWork = { batch, index: state.batchCounter - 1, lines, retrieves: 0, createdAtMs: Date.now(), output: [], errors: [], cancelRequested: false, tokens };
  admit(state, work, checked);
  state.works.set(batch.id, work);
  state.peakEnqueued = Math.max(state.peakEnqueued, enqueued(state));
  sendJson(outgoing, 200, batch);
  state.events.emit('create', batch.id, work.lines.length);
}

/** POST /batches/{id}/cancel. */
function cancelBatch(state: BatchState, work: BatchWork, outgoing: http.ServerResponse): void {
  if (!['validating', 'in_progress', 'finalizing'].includes(work.batch.status)) {
    return sendError(outgoing, 409, `Cannot cancel a batch with status '${work.batch.status}'.`, 'invalid_request_error');
  }
  work.cancelRequested = true;
  work.batch.status = 'cancelling';
  work.batch.cancelling_at = now();
  state.events.emit('cancel', work.batch.id);
  sendJson(outgoing, 200, work.batch);
}

/** The routes of one batch (`/batches/{id}…`); false when none matched. */
async function routeOneBatch(state: BatchState, one: RegExpExecArray, method: string, outgoing: http.ServerResponse): Promise<boolean> {
  const work = state.works.get(decodeURIComponent(one[1]));
  if (!work) {
    sendError(outgoing, 404, `No batch found with id '${one[1]}'.`, 'invalid_request_error', null, 'batch_not_found');
    return true;
  }
  if (method === 'POST' && one[2]) cancelBatch(state, work, outgoing);
  else if (method === 'GET' && !one[2]) {
    await advance(state, work);
    state.events.emit('retrieve', work.batch.id, work.batch.status);
    sendJson(outgoing, 200, work.batch);
  } else return false;
  return true;
}

/** GET /batches: newest first, in cursor pages. */
function listBatches(state: BatchState, url: URL, outgoing: http.ServerResponse): void {
  const page = listPage([...state.works.values()].map((work) => work.batch).reverse(), { limit: Math.min(100, Number(url.searchParams.get('limit') ?? 20)), after: url.searchParams.get('after') });
  sendJson(outgoing, 200, { object: 'list', ...page });
}

async function route(state: BatchState, incoming: http.IncomingMessage, path: string, url: URL, body: Buffer, outgoing: http.ServerResponse): Promise<void> {
  const method = incoming.method ?? 'GET';
  if (method === 'POST' && path === '/chat/completions') return forwardChat(state, body, outgoing);
  if (method === 'POST' && path === '/files') return uploadFile(state, incoming, body, outgoing);
  const content = /^\/files\/([^/]+)\/content$/.exec(path);
  if (method === 'GET' && content) return sendFileContent(state, content[1], url, outgoing);
  if (method === 'POST' && path === '/batches') return createBatch(state, body, outgoing);
  const one = /^\/batches\/([^/]+)(\/cancel)?$/.exec(path);
  if (one && (await routeOneBatch(state, one, method, outgoing))) return;
  if (method === 'GET' && path === '/batches') return listBatches(state, url, outgoing);
  sendError(outgoing, 404, `Invalid URL (${method} ${url.pathname})`, 'invalid_request_error');
}

async function handleRequest(state: BatchState, incoming: http.IncomingMessage, body: Buffer, outgoing: http.ServerResponse): Promise<void> {
  const url = new URL(incoming.url ?? '/', 'http://fake');
  const path = acceptedPath(state, incoming, url, outgoing);
  if (path === undefined) return;
  try {
    await route(state, incoming, path, url, body, outgoing);
  } catch (error) {
    sendError(outgoing, 500, `fake batch server: ${String(error)}`, 'server_error');
  }
}

export async function startFakeOpenAIBatch(options: FakeBatchOptions): Promise<FakeOpenAIBatch> {
  const azure = options.azure;
  const state: BatchState = {
    options,
    events: new EventEmitter(),
    files: new Map<string, FakeFile>(),
    works: new Map<string, BatchWork>(),
    fileCounter: 0,
    batchCounter: 0,
    received: 0,
    perStage: options.retrievesPerStage ?? 1,
    azure,
    maxRequests: options.maxRequestsPerBatch ?? (azure ? 100_000 : 50_000),
    lineUrl: azure ? '/chat/completions' : '/v1/chat/completions',
    countTokens: options.countTokens ?? ((body: Record<string, unknown>) => Math.ceil(JSON.stringify(body.messages ?? '').length / 4)),
    peakEnqueued: 0,
    uploadedBytes: [],
  };
  const host = options.listen?.host ?? '127.0.0.1';
  const bounds = requestBoundsFor(host, options.listen?.maxBodyBytes);
  const server = http.createServer((incoming, outgoing) => {
    receiveWithin(incoming, outgoing, bounds, (body) => handleRequest(state, incoming, body, outgoing));
  });
  const origin = await listenFake(server, host, options.listen?.port);
  return {
    // Azure: the resource URL (the client adds /openai); OpenAI: the API's /v1 base.
    baseUrl: azure ? origin : `${origin}/v1`,
    events: state.events,
    get peakEnqueuedTokens() {
      return state.peakEnqueued;
    },
    uploadedBytes: state.uploadedBytes,
    fileContent: (fileId) => state.files.get(fileId)?.content,
    get receivedRequests() {
      return state.received;
    },
    get createdBatches() {
      return state.batchCounter;
    },
    batches: () => [...state.works.values()].map((work) => work.batch),
    close: () => closeFake(server),
  };
}
