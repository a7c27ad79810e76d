/**
 * A loopback Anthropic Messages API (POST /v1/messages) written from the API's documentation:
 * the request rules it enforces (x-api-key, anthropic-version, required max_tokens, no unknown
 * fields, temperature 0–1, a forced tool that exists, at most 4 cache breakpoints, no empty
 * text blocks), its reply shapes (tool_use content blocks, stop_reason, usage with
 * cache_creation/cache_read tokens) and its error bodies and statuses. Prompt caching is
 * modelled: the prefix up to the last `cache_control` block is cached once it reaches the
 * model's minimum length, and an entry can be read only after the call that wrote it was answered.
 */
import { createHash } from 'node:crypto';
import type http from 'node:http';
import { parseGradingPrompt } from './fake-judge.js';
import { closeFake, listenFake, wholeBodyServer } from './fake-server.js';

export interface FakeAnthropicRequest {
  index: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** Text of the last user message (all its text blocks). */
  userText: string;
  response?: string;
  criteria: Array<{ id: string; points: number; text: string }>;
  /** Name of the forced tool, if any. */
  toolName?: string;
}

export type FakeAnthropicAction =
  /**
   * 200 with a tool_use block carrying this input (the forced tool's name); `moreInputs` add
   * further calls of the same tool (what `disable_parallel_tool_use` should prevent), and
   * `usage` replaces the counted usage fields (a server reporting odd numbers).
   */
  | { input: unknown; moreInputs?: unknown[]; usage?: Record<string, unknown>; stopReason?: string; delayMs?: number }
  /** 200 with a text block. */
  | { text: string; stopReason?: string; delayMs?: number }
  /** 200 with stop_reason "refusal" and no verdict. */
  | { refusal: true }
  /** An error answer with Anthropic's body; `type` defaults from the status. */
  | { status: number; type?: string; message?: string; headers?: Record<string, string> }
  | { hang: true };

export type FakeAnthropicScript = (request: FakeAnthropicRequest) => FakeAnthropicAction | Promise<FakeAnthropicAction>;

export interface FakeAnthropicOptions {
  apiKey?: string;
  /** Models the server knows; others get 404 not_found_error. Default: any. */
  models?: string[];
  /** Smallest cacheable prefix in tokens. Default 1024. */
  minimumCacheTokens?: number;
  /** Token counter for usage and caching. Default: a character-based estimate. */
  countTokens?: (text: string) => number;
  /** Service time of every answered call. Default 0. */
  serviceMs?: number;
}

export interface FakeAnthropicTotals {
  calls: number;
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
}

export interface FakeAnthropic {
  baseUrl: string;
  requests: FakeAnthropicRequest[];
  totals: FakeAnthropicTotals;
  setScript(script: FakeAnthropicScript): void;
  /** Forgets every prompt-cache entry (as after the cache lifetime), so two runs start alike. */
  clearPromptCache(): void;
  close(): Promise<void>;
}

/** Anthropic's error type for each HTTP status (Messages and Message Batches alike). */
export const anthropicErrorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const allowedFields = new Set([
  'model', 'messages', 'max_tokens', 'system', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'stream', 'metadata', 'tools', 'tool_choice', 'thinking', 'service_tier', 'cache_control', 'container', 'mcp_servers',
]);

type Block = { type?: unknown; text?: unknown; cache_control?: unknown };
type Tool = { name?: unknown; input_schema?: unknown; cache_control?: unknown };

/** The binary verdict the fake gives by default: met when the criterion text has no "not". */
export function defaultAnthropicScript(request: FakeAnthropicRequest): FakeAnthropicAction {
  const criterion = request.criteria[0];
  return { input: { explanation: 'Checked against the response.', criteria_met: criterion ? !/\bnot\b/i.test(criterion.text) : true } };
}

/** What one fake server holds between requests. */
interface AnthropicState {
  script: FakeAnthropicScript;
  options: FakeAnthropicOptions;
  apiKey: string;
  countTokens: (text: string) => number;
  minimumCacheTokens: number;
  requests: FakeAnthropicRequest[];
  totals: FakeAnthropicTotals;
  cache: Set<string>;
  messageCounter: number;
}

function nextRequestId(state: AnthropicState): string {
  return `req_fake${String(++state.messageCounter).padStart(8, '0')}`;
}

function sendError(state: AnthropicState, response: http.ServerResponse, status: number, message: string, type = anthropicErrorTypes[status] ?? 'api_error', headers: Record<string, string> = {}) {
  const requestId = nextRequestId(state);
  response.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers });
  response.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId }));
}

/** Why the top-level fields break the API's rules, as the API words it. */
function invalidFields(body: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(body)) if (!allowedFields.has(key)) return `${key}: Extra inputs are not permitted`;
  if (typeof body.model !== 'string') return 'model: Field required';
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required';
  if (body.temperature !== undefined && (typeof body.temperature !== 'number' || body.temperature < 0 || body.temperature > 1)) {
    return 'temperature: Input should be less than or equal to 1';
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  return undefined;
}

/** Why the system and message blocks break the rules; otherwise the cache breakpoints they carry. */
function invalidBlocks(body: Record<string, unknown>): { problem: string } | { breakpoints: number } {
  let breakpoints = 0;
  const blocks: Block[] = [];
  if (Array.isArray(body.system)) blocks.push(...(body.system as Block[]));
  for (const message of body.messages as Array<{ role?: unknown; content?: unknown }>) {
    if (message.role !== 'user' && message.role !== 'assistant') return { problem: `messages: Input tag '${String(message.role)}' found using 'role' does not match any of the expected tags: 'user', 'assistant'` };
    if (Array.isArray(message.content)) blocks.push(...(message.content as Block[]));
  }
  for (const block of blocks) {
    if (block.type === 'text' && (typeof block.text !== 'string' || block.text === '')) return { problem: 'messages: text content blocks must be non-empty' };
    if (block.cache_control !== undefined) breakpoints += 1;
  }
  return { breakpoints };
}

/** Why the body breaks the API's rules, as the API words it; undefined when it is valid. */
function invalid(body: Record<string, unknown>): string | undefined {
  const fields = invalidFields(body);
  if (fields) return fields;
  const blocks = invalidBlocks(body);
  if ('problem' in blocks) return blocks.problem;
  let breakpoints = blocks.breakpoints;
  const tools = Array.isArray(body.tools) ? (body.tools as Tool[]) : [];
  for (const tool of tools) if (tool.cache_control !== undefined) breakpoints += 1;
  if (breakpoints > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`;
  const choice = body.tool_choice as { type?: unknown; name?: unknown } | undefined;
  if (choice?.type === 'tool' && !tools.some((tool) => tool.name === choice.name)) return `tool_choice.name: Tool '${String(choice.name)}' not found in provided tools`;
  for (const tool of tools) {
    const schema = tool.input_schema as { type?: unknown } | undefined;
    if (schema?.type !== 'object') return 'tools.0.custom.input_schema.type: Input should be \'object\'';
  }
  return undefined;
}

/** Prompt text in API order (tools, system, messages) and the prefix up to the last breakpoint. */
function promptParts(body: Record<string, unknown>): { whole: string; cachedPrefix?: string } {
  const pieces: Array<{ text: string; breakpoint: boolean }> = [];
  for (const tool of (body.tools as Array<Record<string, unknown>> | undefined) ?? []) pieces.push({ text: JSON.stringify(tool), breakpoint: tool.cache_control !== undefined });
  const system = body.system;
  if (typeof system === 'string') pieces.push({ text: system, breakpoint: false });
  else for (const block of (system as Block[] | undefined) ?? []) pieces.push({ text: String(block.text ?? ''), breakpoint: block.cache_control !== undefined });
  for (const message of body.messages as Array<{ role: string; content: unknown }>) {
    pieces.push({ text: `\n\n${message.role}:`, breakpoint: false });
    if (typeof message.content === 'string') pieces.push({ text: message.content, breakpoint: false });
    else for (const block of message.content as Block[]) pieces.push({ text: String(block.text ?? ''), breakpoint: block.cache_control !== undefined });
  }
  let whole = '';
  let cachedPrefix: string | undefined;
  for (const piece of pieces) {
    whole += piece.text;
    if (piece.breakpoint) cachedPrefix = whole;
  }
  return { whole, cachedPrefix };
}

/** The request's body once its headers and rules are checked, or undefined when an error was sent. */
function acceptedBody(state: AnthropicState, incoming: http.IncomingMessage, raw: Buffer, response: http.ServerResponse): Record<string, unknown> | undefined {
  const path = (incoming.url ?? '').split('?')[0];
  if (incoming.method !== 'POST' || path !== '/v1/messages') return void sendError(state, response, 404, `Not Found`, 'not_found_error');
  // An API key in x-api-key (or, as newer clients send it, a bearer token).
  if (incoming.headers['x-api-key'] !== state.apiKey && incoming.headers.authorization !== `Bearer ${state.apiKey}`) return void sendError(state, response, 401, 'invalid x-api-key');
  if (!incoming.headers['anthropic-version']) return void sendError(state, response, 400, 'anthropic-version: header is required');
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  } catch {
    return void sendError(state, response, 400, 'There was an error parsing the body of your request: invalid JSON');
  }
  const problem = invalid(body);
  if (problem) return void sendError(state, response, 400, problem);
  if (state.options.models && !state.options.models.includes(body.model as string)) return void sendError(state, response, 404, `model: ${String(body.model)}`);
  return body;
}

/** The request as a script sees it, recorded. */
function recordRequest(state: AnthropicState, incoming: http.IncomingMessage, body: Record<string, unknown>): FakeAnthropicRequest {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const userText = typeof lastUser?.content === 'string' ? lastUser.content : ((lastUser?.content as Block[] | undefined) ?? []).map((block) => String(block.text ?? '')).join('');
  const toolChoice = body.tool_choice as { type?: string; name?: string } | undefined;
  const record: FakeAnthropicRequest = {
    index: state.requests.length,
    headers: incoming.headers,
    body,
    userText,
    ...parseGradingPrompt(userText),
    ...(toolChoice?.type === 'tool' ? { toolName: toolChoice.name } : {}),
  };
  state.requests.push(record);
  return record;
}

/** The prompt's tokens, those read from and written to the prompt cache, and the entry a write makes. */
function cacheUse(state: AnthropicState, body: Record<string, unknown>): { total: number; read: number; written: number; cacheKey?: string } {
  const { whole, cachedPrefix } = promptParts(body);
  const total = state.countTokens(whole) + 4;
  if (cachedPrefix === undefined) return { total, read: 0, written: 0 };
  const prefixTokens = state.countTokens(cachedPrefix);
  if (prefixTokens < state.minimumCacheTokens) return { total, read: 0, written: 0 };
  const cacheKey = createHash('sha256').update(`${String(body.model)}\u0000${cachedPrefix}`).digest('hex');
  return state.cache.has(cacheKey) ? { total, read: prefixTokens, written: 0, cacheKey } : { total, read: 0, written: prefixTokens, cacheKey };
}

type AnsweredAction = Exclude<FakeAnthropicAction, { hang: true } | { status: number }>;

/** The reply's content blocks and stop reason for a scripted answer. */
function replyContent(action: AnsweredAction, record: FakeAnthropicRequest): { content: unknown[]; stopReason: string } {
  if ('refusal' in action) return { content: [], stopReason: 'refusal' };
  if ('input' in action) {
    const content = [action.input, ...(action.moreInputs ?? [])].map((input, call) => ({ type: 'tool_use', id: `toolu_fake${String(record.index).padStart(8, '0')}${call > 0 ? `_${call}` : ''}`, name: record.toolName ?? 'tool', input }));
    return { content, stopReason: action.stopReason ?? 'tool_use' };
  }
  return { content: [{ type: 'text', text: action.text }], stopReason: action.stopReason ?? 'end_turn' };
}

/** Answers a scripted reply: usage counted, the cache entry made readable, the message sent. */
async function sendMessage(state: AnthropicState, response: http.ServerResponse, record: FakeAnthropicRequest, action: AnsweredAction): Promise<void> {
  const body = record.body;
  // The cache is looked up when the request arrives and written when it is answered.
  const { total, read, written, cacheKey } = cacheUse(state, body);
  const delay = ('delayMs' in action ? action.delayMs : undefined) ?? state.options.serviceMs ?? 0;
  if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  const { content, stopReason } = replyContent(action, record);
  const outputTokens = Math.max(1, state.countTokens(JSON.stringify(content)));
  const usage = {
    input_tokens: total - read - written,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: written, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens,
    service_tier: 'standard',
    ...('input' in action ? action.usage : undefined),
  };
  state.totals.calls += 1;
  state.totals.inputTokens += total;
  state.totals.cacheReadTokens += read;
  state.totals.cacheWriteTokens += written;
  state.totals.outputTokens += outputTokens;
  // The entry becomes readable once its writer is answered.
  if (cacheKey !== undefined) state.cache.add(cacheKey);
  response.writeHead(200, { 'content-type': 'application/json', 'request-id': nextRequestId(state) });
  response.end(JSON.stringify({ id: `msg_fake${String(record.index).padStart(8, '0')}`, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stopReason, stop_sequence: null, usage }));
}

async function handleRequest(state: AnthropicState, incoming: http.IncomingMessage, raw: Buffer, response: http.ServerResponse): Promise<void> {
  const body = acceptedBody(state, incoming, raw, response);
  if (!body) return;
  const record = recordRequest(state, incoming, body);
  const action = await state.script(record);
  if ('hang' in action) return;
  if ('status' in action) return sendError(state, response, action.status, action.message ?? 'error', action.type, action.headers);
  await sendMessage(state, response, record, action);
}

export async function startFakeAnthropic(initialScript: FakeAnthropicScript = defaultAnthropicScript, options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const state: AnthropicState = {
    script: initialScript,
    options,
    apiKey: options.apiKey ?? 'test-anthropic-key',
    countTokens: options.countTokens ?? ((text: string) => Math.ceil(text.length / 4)),
    minimumCacheTokens: options.minimumCacheTokens ?? 1024,
    requests: [],
    totals: { calls: 0, inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0 },
    cache: new Set<string>(),
    messageCounter: 0,
  };
  const server = wholeBodyServer((incoming, raw, response) => handleRequest(state, incoming, raw, response));
  const baseUrl = await listenFake(server);
  return {
    baseUrl,
    requests: state.requests,
    totals: state.totals,
    setScript(next) {
      state.script = next;
    },
    clearPromptCache() {
      state.cache.clear();
    },
    close: () => closeFake(server),
  };
}
