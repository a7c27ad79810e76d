/**
 * A loopback Gemini API (POST /v1beta/models/MODEL:generateContent) written from the API's
 * documentation: the key rules (x-goog-api-key or ?key=; missing → 403, wrong → 400
 * API_KEY_INVALID), unknown fields refused with "Unknown name … Cannot find field" (including
 * JSON-Schema-only keywords in responseSchema), thinking rules (2.5 Pro cannot turn it off),
 * reply shapes (candidates/parts/finishReason, promptFeedback.blockReason, usageMetadata
 * with thoughts and implicitly cached tokens, logprobsResult) and google.rpc.Status errors.
 */
import type http from 'node:http';
import { parseGradingPrompt } from './fake-judge.js';
import { closeFake, listenFake, wholeBodyServer } from './fake-server.js';

export interface FakeGeminiRequest {
  index: number;
  model: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  userText: string;
  response?: string;
  criteria: Array<{ id: string; points: number; text: string }>;
}

export type FakeGeminiAction =
  /** 200 with this JSON as the reply text (objects are encoded). */
  | { json: unknown; finishReason?: string; thoughtsTokens?: number; logprobs?: Array<{ token: string; logProbability: number; top: Array<{ token: string; logProbability: number }> }> }
  | { text: string; finishReason?: string }
  /** 200 with a candidate stopped for safety (or recitation…) and no content. */
  | { finishReason: 'SAFETY' | 'RECITATION' | 'PROHIBITED_CONTENT' | 'BLOCKLIST' | 'SPII' }
  /** 200 with no candidates: the prompt itself was blocked. */
  | { blockReason: 'SAFETY' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT' }
  | { status: number; statusName: string; message: string; details?: unknown[]; headers?: Record<string, string> }
  | { hang: true };

export type FakeGeminiScript = (request: FakeGeminiRequest) => FakeGeminiAction | Promise<FakeGeminiAction>;

export interface FakeGeminiOptions {
  apiKey?: string;
  models?: string[];
  /** Models that return logprobs; others answer 400. Default: none. */
  logprobModels?: string[];
  /** Smallest prefix implicit caching serves, in tokens. Default 1024. */
  minimumCacheTokens?: number;
}

export interface FakeGemini {
  baseUrl: string;
  requests: FakeGeminiRequest[];
  setScript(script: FakeGeminiScript): void;
  close(): Promise<void>;
}

const generateFields = new Set(['contents', 'systemInstruction', 'generationConfig', 'safetySettings', 'tools', 'toolConfig', 'cachedContent', 'labels']);
const generationFields = new Set([
  'temperature', 'topP', 'topK', 'candidateCount', 'maxOutputTokens', 'stopSequences', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseMimeType',
  'responseSchema', 'responseJsonSchema', 'responseLogprobs', 'logprobs', 'thinkingConfig', 'responseModalities', 'mediaResolution',
]);
const schemaFields = new Set(['type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required', 'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering', 'default', 'items', 'minimum', 'maximum']);
const schemaTypes = new Set(['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL']);

const countTokens = (text: string) => Math.ceil(text.length / 4);

export function defaultGeminiScript(request: FakeGeminiRequest): FakeGeminiAction {
  const criterion = request.criteria[0];
  return { json: { explanation: 'Checked against the response.', criteria_met: criterion ? !/\bnot\b/i.test(criterion.text) : true } };
}

/** Where a responseSchema uses a name Gemini does not know, as its error words it. */
function schemaProblem(schema: unknown, path: string): string | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (!schemaFields.has(key)) return `Invalid JSON payload received. Unknown name "${key}" at '${path}': Cannot find field.`;
    if (key === 'type' && !schemaTypes.has(String(value).toUpperCase())) return `Invalid value at '${path}.type', "${String(value)}"`;
    if (key === 'properties') {
      for (const [name, child] of Object.entries(value as Record<string, unknown>)) {
        const problem = schemaProblem(child, `${path}.properties[${name}].value`);
        if (problem) return problem;
      }
    }
    if (key === 'items') {
      const problem = schemaProblem(value, `${path}.items`);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** What one fake server holds between requests. */
interface GeminiState {
  script: FakeGeminiScript;
  options: FakeGeminiOptions;
  apiKey: string;
  minimumCacheTokens: number;
  requests: FakeGeminiRequest[];
  // Implicit caching: prompts seen, by their 1024-character blocks (a prefix is cached when all its blocks were seen in order).
  seenBlocks: Set<string>;
}

type Contents = Array<{ role?: string; parts?: Array<{ text?: string }> }>;

function sendError(response: http.ServerResponse, code: number, status: string, message: string, details?: unknown[], headers: Record<string, string> = {}) {
  response.writeHead(code, { 'content-type': 'application/json; charset=UTF-8', ...headers });
  response.end(JSON.stringify({ error: { code, message, status, ...(details ? { details } : {}) } }, null, 2));
}

function cachedTokens(state: GeminiState, prompt: string): number {
  let cachedCharacters = 0;
  let matching = true;
  for (let end = 1024; end <= prompt.length; end += 1024) {
    const block = prompt.slice(0, end);
    if (matching && state.seenBlocks.has(block)) cachedCharacters = end;
    else matching = false;
    state.seenBlocks.add(block);
  }
  const tokens = countTokens(prompt.slice(0, cachedCharacters));
  return tokens >= state.minimumCacheTokens ? tokens : 0;
}

/** The model a request names once its route, key and model are checked; undefined when an error was sent. */
function acceptedModel(state: GeminiState, incoming: http.IncomingMessage, response: http.ServerResponse): string | undefined {
  const url = new URL(incoming.url ?? '/', 'http://fake');
  const match = /^\/v1beta\/models\/([^/:]+):generateContent$/.exec(url.pathname);
  if (incoming.method !== 'POST' || !match) return void sendError(response, 404, 'NOT_FOUND', `Requested entity was not found.`);
  const key = incoming.headers['x-goog-api-key'] ?? url.searchParams.get('key');
  if (!key) {
    return void sendError(response, 403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
  }
  if (key !== state.apiKey) {
    return void sendError(response, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    ]);
  }
  const model = decodeURIComponent(match[1]);
  if (state.options.models && !state.options.models.includes(model)) {
    return void sendError(response, 404, 'NOT_FOUND', `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`);
  }
  return model;
}

/** Why a generateContent body breaks the API's rules, as its INVALID_ARGUMENT message words it. */
function invalidBody(state: GeminiState, model: string, body: Record<string, unknown>): string | undefined {
  for (const field of Object.keys(body)) if (!generateFields.has(field)) return `Invalid JSON payload received. Unknown name "${field}": Cannot find field.`;
  const generation = (body.generationConfig ?? {}) as Record<string, unknown>;
  for (const field of Object.keys(generation)) {
    if (!generationFields.has(field)) return `Invalid JSON payload received. Unknown name "${field}" at 'generation_config': Cannot find field.`;
  }
  const problem = schemaProblem(generation.responseSchema, 'generation_config.response_schema');
  if (problem) return problem;
  if (generation.responseSchema !== undefined && generation.responseMimeType !== 'application/json') return 'responseMimeType must be application/json when responseSchema is set.';
  const thinking = generation.thinkingConfig as { thinkingBudget?: number } | undefined;
  if (/^gemini-2\.5-pro/.test(model) && thinking?.thinkingBudget === 0) return 'Budget 0 is invalid. This model only works in thinking mode.';
  if (generation.responseLogprobs === true && !(state.options.logprobModels ?? []).includes(model)) return 'Logprobs is not supported for the current model.';
  return undefined;
}

/** The prompt's usage metadata, implicit caching included. */
function promptUsage(state: GeminiState, body: Record<string, unknown>): Record<string, unknown> {
  const contents = (body.contents ?? []) as Contents;
  const system = ((body.systemInstruction as { parts?: Array<{ text?: string }> } | undefined)?.parts ?? []).map((part) => part.text ?? '').join('');
  const prompt = `${system}\u0000${contents.map((content) => `${content.role}:${(content.parts ?? []).map((part) => part.text ?? '').join('')}`).join('\u0000')}`;
  const promptTokenCount = countTokens(prompt);
  const cachedContentTokenCount = cachedTokens(state, prompt);
  const usageMetadata: Record<string, unknown> = { promptTokenCount, totalTokenCount: promptTokenCount, promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokenCount }] };
  if (cachedContentTokenCount > 0) {
    usageMetadata.cachedContentTokenCount = cachedContentTokenCount;
    usageMetadata.cacheTokensDetails = [{ modality: 'TEXT', tokenCount: cachedContentTokenCount }];
  }
  return usageMetadata;
}

type AnsweredAction = Exclude<FakeGeminiAction, { hang: true } | { status: number }>;

/** The reply's payload for a scripted answer (usage completed for a candidate with text). */
function replyPayload(action: AnsweredAction, usageMetadata: Record<string, unknown>): Record<string, unknown> {
  const blocked = [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }];
  if ('blockReason' in action) return { promptFeedback: { blockReason: action.blockReason, safetyRatings: blocked } };
  if (!('json' in action) && !('text' in action)) return { candidates: [{ finishReason: action.finishReason, index: 0, safetyRatings: blocked }] };
  const text = 'json' in action ? (typeof action.json === 'string' ? action.json : JSON.stringify(action.json)) : action.text;
  const candidatesTokenCount = countTokens(text);
  usageMetadata.candidatesTokenCount = candidatesTokenCount;
  const thoughts = 'thoughtsTokens' in action ? (action.thoughtsTokens ?? 0) : 0;
  if (thoughts > 0) usageMetadata.thoughtsTokenCount = thoughts;
  usageMetadata.totalTokenCount = (usageMetadata.promptTokenCount as number) + candidatesTokenCount + thoughts;
  const candidate: Record<string, unknown> = { content: { parts: [{ text }], role: 'model' }, finishReason: action.finishReason ?? 'STOP', index: 0 };
  if ('logprobs' in action && action.logprobs) {
    candidate.logprobsResult = {
      topCandidates: action.logprobs.map((entry) => ({ candidates: entry.top })),
      chosenCandidates: action.logprobs.map((entry) => ({ token: entry.token, logProbability: entry.logProbability })),
    };
  }
  return { candidates: [candidate] };
}

async function handleRequest(state: GeminiState, incoming: http.IncomingMessage, raw: Buffer, response: http.ServerResponse): Promise<void> {
  const model = acceptedModel(state, incoming, response);
  if (model === undefined) return;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
  } catch {
    return sendError(response, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
  }
  const problem = invalidBody(state, model, body);
  if (problem) return sendError(response, 400, 'INVALID_ARGUMENT', problem);
  const lastUser = [...((body.contents ?? []) as Contents)].reverse().find((content) => content.role === 'user');
  const userText = (lastUser?.parts ?? []).map((part) => part.text ?? '').join('');
  const record: FakeGeminiRequest = { index: state.requests.length, model, headers: incoming.headers, body, userText, ...parseGradingPrompt(userText) };
  state.requests.push(record);
  const action = await state.script(record);
  if ('hang' in action) return;
  if ('status' in action) return sendError(response, action.status, action.statusName, action.message, action.details, action.headers);
  const usageMetadata = promptUsage(state, body);
  const payload = replyPayload(action, usageMetadata);
  response.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
  response.end(JSON.stringify({ ...payload, usageMetadata, modelVersion: model, responseId: `fake-${record.index}` }));
}

export async function startFakeGemini(initialScript: FakeGeminiScript = defaultGeminiScript, options: FakeGeminiOptions = {}): Promise<FakeGemini> {
  const state: GeminiState = {
    script: initialScript,
    options,
    apiKey: options.apiKey ?? 'test-gemini-key',
    minimumCacheTokens: options.minimumCacheTokens ?? 1024,
    requests: [],
    seenBlocks: new Set<string>(),
  };
  const server = wholeBodyServer((incoming, raw, response) => handleRequest(state, incoming, raw, response));
  const baseUrl = await listenFake(server);
  return {
    baseUrl,
    requests: state.requests,
    setScript(next) {
      state.script = next;
    },
    close: () => closeFake(server),
  };
}
