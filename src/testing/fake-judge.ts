/**
 * A loopback OpenAI-compatible server whose answers a test scripts. It stands in for the
 * network only: the client, engine and parser under test are the real ones.
 */
import http from 'node:http';
import { receiveWithin, requestBoundsFor } from './request-bounds.js';
import { closeFake, listenFake } from './fake-server.js';

export interface FakeJudgeRequest {
  /** Sequence number of the request, from 0. */
  index: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  messages: Array<{ role: string; content: string }>;
  /** Content of the last user message. */
  userText: string;
  /** Response text between the rubricate response delimiters, if present. */
  response?: string;
  /** Criterion blocks of a rubricate grading prompt, in order. */
  criteria: Array<{ id: string; points: number; text: string }>;
  /** Labelled responses of a listwise (`A`, `B`, …) or pairwise (`1`, `2`) prompt, in the order shown. */
  responses: Array<{ label: string; text: string }>;
}

export type FakeJudgeAction =
  /** Answer 200 with this assistant message content (objects are JSON-encoded). */
  | { content: string | Record<string, unknown>; usage?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number }; delayMs?: number; logprobs?: unknown; finishReason?: string; refusal?: string; /** The reply's `model` (default: the request's): a provider resolving an alias to a snapshot. */ model?: string }
  /** Answer with an HTTP error status. */
  | { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number }
  /** Never answer (the client must time out). */
  | { hang: true }
  /** Drop the connection without an answer. */
  | { destroy: true }
  /** Answer 200 with a raw body that is not a chat completion. */
  | { rawBody: string; delayMs?: number };

export type FakeJudgeScript = (request: FakeJudgeRequest) => FakeJudgeAction | Promise<FakeJudgeAction>;

export interface FakeJudge {
  baseUrl: string;
  requests: FakeJudgeRequest[];
  /** Requests answered so far (kept or not). */
  readonly served: number;
  setScript(script: FakeJudgeScript): void;
  close(): Promise<void>;
}

const responsePattern = /<response-([0-9a-f]{16})>\n([\s\S]*?)\n<\/response-\1>/;
/** A criterion block: `<criterion-NONCE id=… points=…>` … `</criterion-NONCE>` (the nonce is optional for older prompts). */
const criterionPattern = /<criterion(-[0-9a-f]{16})? id="([^"]*)" points="([^"]*)">\n([\s\S]*?)\n<\/criterion\1>/g;

function unescapeAttribute(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

const labelledResponsePattern = /<response-([A-Z]+|\d)-([0-9a-f]{16})>\n([\s\S]*?)\n<\/response-\1-\2>/g;

/**
 * Extracts the graded response (or the labelled responses) and the criteria from a rubricate grading prompt.
 *
 * @example
 * ```ts
 * import { parseGradingPrompt } from 'rubricate/testing';
 * const userText = 'the user message of a grading request';
 * const { response, criteria } = parseGradingPrompt(userText);
 * ```
 */
export function parseGradingPrompt(userText: string): { response?: string; criteria: FakeJudgeRequest['criteria']; responses: FakeJudgeRequest['responses'] } {
  const response = responsePattern.exec(userText)?.[2];
  const criteria: FakeJudgeRequest['criteria'] = [];
  for (const match of userText.matchAll(criterionPattern)) {
    criteria.push({ id: unescapeAttribute(match[2]), points: Number(unescapeAttribute(match[3])), text: match[4] });
  }
  const responses = [...userText.matchAll(labelledResponsePattern)].map((match) => ({ label: match[1], text: match[3] }));
  return { response, criteria, responses };
}

/** A listwise reply: every labelled response's verdict on every criterion, as `decide` says. */
export function listwiseVerdicts(request: Pick<FakeJudgeRequest, 'responses' | 'criteria'>, decide: (response: FakeJudgeRequest['responses'][number], criterion: FakeJudgeRequest['criteria'][number]) => boolean) {
  return { responses: request.responses.map((response) => ({ label: response.label, ...batchedVerdicts(request.criteria, (criterion) => decide(response, criterion)) })) };
}

/** Where a fake server listens: a free loopback port unless told otherwise. */
export interface ListenOptions {
  port?: number;
  host?: string;
  /** Largest request body read (413 beyond, unread); default `defaultFakeMaxBodyBytes`. */
  maxBodyBytes?: number;
}

export interface FakeJudgeOptions extends ListenOptions {
  /** Keep every request in `requests` (default); a long-lived server (`rubricate fake-judge`) counts them only. */
  keepRequests?: boolean;
}

/** What one fake judge holds between requests. */
interface JudgeState {
  script: FakeJudgeScript;
  options: FakeJudgeOptions;
  requests: FakeJudgeRequest[];
  served: number;
  hanging: Set<http.ServerResponse>;
}

/** The request as a script sees it, counted (and kept unless told otherwise). */
function readRequest(state: JudgeState, incoming: http.IncomingMessage, body: Record<string, unknown>): FakeJudgeRequest {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as FakeJudgeRequest['messages'];
  const lastUser: unknown = [...messages].reverse().find((message) => message.role === 'user')?.content ?? '';
  // Content may be a list of parts (text and image_url), as chat completions accept: read its text parts.
  const userText = Array.isArray(lastUser) ? lastUser.filter((part) => part?.type === 'text').map((part) => String(part.text)).join('\n') : String(lastUser);
  const parsed = parseGradingPrompt(userText);
  const request: FakeJudgeRequest = {
    index: state.served++,
    path: incoming.url ?? '',
    headers: incoming.headers,
    body,
    messages,
    userText,
    response: parsed.response,
    criteria: parsed.criteria,
    responses: parsed.responses,
  };
  if (state.options.keepRequests !== false) state.requests.push(request);
  return request;
}

type ContentAction = Extract<FakeJudgeAction, { content: unknown }>;

/** The chat completion a content action answers with. */
function chatCompletion(action: ContentAction, request: FakeJudgeRequest) {
  const content = typeof action.content === 'string' ? action.content : JSON.stringify(action.content);
  const usage = action.usage ?? {};
  return {
    id: `fake-${request.index}`,
    object: 'chat.completion',
    created: 0,
    model: action.model ?? String(request.body.model ?? 'fake'),
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, ...(action.refusal ? { refusal: action.refusal } : {}) },
        finish_reason: action.finishReason ?? 'stop',
        ...(action.logprobs ? { logprobs: action.logprobs } : {}),
      },
    ],
    usage: {
      prompt_tokens: usage.prompt_tokens ?? 100,
      completion_tokens: usage.completion_tokens ?? 20,
      total_tokens: (usage.prompt_tokens ?? 100) + (usage.completion_tokens ?? 20),
      prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
    },
  };
}

/** Sends an answer (raw body, error status or completion), unless the client has gone. */
function sendAction(outgoing: http.ServerResponse, action: Exclude<FakeJudgeAction, { hang: true } | { destroy: true }>, request: FakeJudgeRequest): void {
  if (outgoing.destroyed) return;
  if ('rawBody' in action) {
    outgoing.writeHead(200, { 'content-type': 'application/json' }).end(action.rawBody);
  } else if ('status' in action) {
    outgoing.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
    outgoing.end(JSON.stringify(action.body ?? { error: { message: `scripted ${action.status}` } }));
  } else {
    outgoing.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(chatCompletion(action, request)));
  }
}

async function handleRequest(state: JudgeState, incoming: http.IncomingMessage, outgoing: http.ServerResponse, raw: Buffer): Promise<void> {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  } catch {
    outgoing.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'invalid JSON body' } }));
    return;
  }
  const request = readRequest(state, incoming, body);
  let action: FakeJudgeAction;
  try {
    action = await state.script(request);
  } catch (error) {
    action = { status: 500, body: { error: { message: `fake judge script threw: ${String(error)}` } } };
  }
  if ('hang' in action) {
    state.hanging.add(outgoing);
    outgoing.on('close', () => state.hanging.delete(outgoing));
    return;
  }
  if ('destroy' in action) {
    incoming.socket.destroy();
    return;
  }
  const delay = action.delayMs ?? 0;
  if (delay > 0) setTimeout(() => sendAction(outgoing, action, request), delay);
  else sendAction(outgoing, action, request);
}

/**
 * A loopback OpenAI-compatible judge whose answers a script decides; the real client and parser run against it.
 *
 * @example
 * ```ts
 * import { createJudge, grade } from 'rubricate';
 * import { binaryVerdict, startFakeJudge } from 'rubricate/testing';
 * const fake = await startFakeJudge((request) => ({ content: binaryVerdict(request.response?.includes('4') ?? false) }));
 * const judge = await createJudge({ model: 'openai:fake', endpoint: { baseUrl: fake.baseUrl } });
 * const { results } = await grade([{ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } }], { judge });
 * await fake.close();
 * ```
 */
export async function startFakeJudge(initialScript: FakeJudgeScript, options: FakeJudgeOptions = {}): Promise<FakeJudge> {
  const state: JudgeState = { script: initialScript, options, requests: [], served: 0, hanging: new Set<http.ServerResponse>() };
  const host = options.host ?? '127.0.0.1';
  const bounds = requestBoundsFor(host, options.maxBodyBytes);
  const server = http.createServer((incoming, outgoing) => {
    receiveWithin(incoming, outgoing, bounds, (raw) => handleRequest(state, incoming, outgoing, raw));
  });
  server.keepAliveTimeout = 30_000;
  const origin = await listenFake(server, host, options.port);
  return {
    baseUrl: `${origin}/v1`,
    requests: state.requests,
    get served() {
      return state.served;
    },
    setScript(next) {
      state.script = next;
    },
    async close() {
      for (const outgoing of state.hanging) outgoing.destroy();
      await closeFake(server);
    },
  };
}

/**
 * A binary verdict in the per-criterion reply format.
 *
 * @example
 * ```ts
 * import { binaryVerdict, startFakeJudge } from 'rubricate/testing';
 * const fake = await startFakeJudge(() => ({ content: binaryVerdict(false, 'It never answers the question.') }));
 * ```
 */
export function binaryVerdict(met: boolean, explanation = met ? 'The response does this.' : 'The response does not do this.') {
  return { explanation, criteria_met: met };
}

/**
 * A batched reply giving each criterion the verdict `decide` returns.
 *
 * @example
 * ```ts
 * import { batchedVerdicts, startFakeJudge } from 'rubricate/testing';
 * const fake = await startFakeJudge((request) => ({ content: batchedVerdicts(request.criteria, (criterion) => criterion.points > 0) }));
 * ```
 */
export function batchedVerdicts(criteria: FakeJudgeRequest['criteria'], decide: (criterion: FakeJudgeRequest['criteria'][number]) => boolean) {
  const verdicts: Record<string, unknown> = {};
  for (const criterion of criteria) verdicts[criterion.id] = binaryVerdict(decide(criterion));
  return { verdicts };
}
