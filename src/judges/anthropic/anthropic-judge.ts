/**
 * Native Anthropic Messages API judge (`anthropic:MODEL`).
 *
 * - Structured verdicts through a forced tool: the reply schema is the tool's input_schema
 *   and `tool_choice` names it, so the verdict arrives as the tool_use block's `input`. That
 *   object is handed to the grading reader as JSON text, so it goes through the same
 *   validation (and retries, and error reports) as every other judge's reply.
 * - Prompt caching: a `cache_control` breakpoint at the end of the part an item's calls share
 *   (conversation + response), so every criterion after the first reads it at 0.1× the input
 *   price. The first call of a prefix goes alone; the calls that share it wait for it, since
 *   a cache entry exists only once the call that writes it has been answered.
 * - No token probabilities (the API has none): probability verdicts are refused at start.
 */
import { resolvedModelOf } from '../resolved-model.js';
import { createHash } from 'node:crypto';
import { RubricateError } from '../../errors.js';
import { baseUrlOf, createJsonClient } from '../http/json-client.js';
import { withGrowingBudget } from '../output-budget.js';
import { modelLimitsFor } from '../profiles.js';
import { requestProvenance } from '../request-settings.js';
import type { ChatMessage, CompleteOptions, Judge, JudgeProvenance, JudgeReply, JudgeRequest } from '../types.js';
import { anthropicHttpError } from './errors.js';
import { TokenCountReader } from '../usage-counts.js';

export const defaultAnthropicBaseUrl = 'https://api.anthropic.com';
export const anthropicVersion = '2023-06-01';
/** The Messages API requires max_tokens; used when a request sets none. */
const defaultMaxTokens = 1024;

export interface AnthropicJudgeOptions {
  model: string;
  apiKey?: string;
  baseUrl?: string;
  headers?: Record<string, string>;
  /** Fields merged into every request body (e.g. `metadata`, `service_tier`). */
  extraBody?: Record<string, unknown>;
  /** Put cache breakpoints on shared prefixes (default true). */
  promptCaching?: boolean;
  /** Hold the calls sharing a prefix until the first is answered, so they read its cache entry (default true). */
  awaitCacheWrite?: boolean;
  id?: string;
  /** Largest reply body read (default 8 MiB). */
  maxReplyBytes?: number;
}

type TextBlock = { type: 'text'; text: string; cache_control?: { type: 'ephemeral' } };
type ImageBlock = { type: 'image'; source: { type: 'base64'; media_type: string; data: string } };
type AnthropicMessage = { role: 'user' | 'assistant'; content: Array<TextBlock | ImageBlock> };

/**
 * Smallest prefix Anthropic caches, by model (shorter prefixes are processed uncached
 * without error): 4096 tokens for Opus 4.5 and Haiku 4.5, 2048 for Haiku 3 and 3.5, 1024 otherwise.
 */
export function minimumCacheableTokens(model: string): number {
  if (/opus-4-5|haiku-4-5/.test(model)) return 4096;
  if (/haiku/.test(model)) return 2048;
  return 1024;
}

/**
 * One ChatMessage → the provider's content blocks. The only place a message's content is
 * mapped, so other part types (images) can be added here. `cacheAt` splits the text there
 * and marks the first part as the end of a cacheable prefix.
 */
export function toAnthropicContent(message: ChatMessage, cacheAt?: number): TextBlock[] {
  const text = message.content;
  if (cacheAt === undefined || cacheAt <= 0) return [{ type: 'text', text }];
  const head = text.slice(0, cacheAt);
  const tail = text.slice(cacheAt);
  const blocks: TextBlock[] = [{ type: 'text', text: head, cache_control: { type: 'ephemeral' } }];
  // Empty text blocks are rejected by the API.
  if (tail !== '') blocks.push({ type: 'text', text: tail });
  return blocks;
}

/** A message's images as base64 image blocks, after its text. */
function withImageBlocks(message: ChatMessage, blocks: TextBlock[]): Array<TextBlock | ImageBlock> {
  if (!message.images || message.images.length === 0) return blocks;
  return [...blocks, ...message.images.map((image): ImageBlock => ({ type: 'image', source: { type: 'base64', media_type: image.mediaType, data: image.data } }))];
}

/** System messages become the `system` blocks; the others become `messages`, in order. */
export function toAnthropicMessages(messages: ChatMessage[], sharedPrefix?: JudgeRequest['sharedPrefix']): { system: TextBlock[]; messages: AnthropicMessage[] } {
  const system: TextBlock[] = [];
  const converted: AnthropicMessage[] = [];
  messages.forEach((message, index) => {
    const cacheAt = sharedPrefix && sharedPrefix.message === index ? sharedPrefix.characters : undefined;
    if (message.role === 'system') system.push(...toAnthropicContent(message, cacheAt));
    else converted.push({ role: message.role, content: withImageBlocks(message, toAnthropicContent(message, cacheAt)) });
  });
  return { system, messages: converted };
}

interface MessageShape {
  content?: Array<{ type?: unknown; text?: unknown; name?: unknown; input?: unknown }>;
  stop_reason?: unknown;
  usage?: { input_tokens?: unknown; output_tokens?: unknown; cache_creation_input_tokens?: unknown; cache_read_input_tokens?: unknown };
}

/** Reads a Messages API answer: the forced tool's input as the verdict text, usage with cache reads and writes. */
export function parseAnthropicMessage(raw: unknown, toolName: string | undefined, endpoint: string): JudgeReply {
  const message = raw as MessageShape;
  if (!message || typeof message !== 'object' || !Array.isArray(message.content)) {
    throw new RubricateError('JUDGE_SERVER_ERROR', 'Anthropic answer has no content array', { endpoint });
  }
  const stopReason = typeof message.stop_reason === 'string' ? message.stop_reason : undefined;
  const texts = message.content.filter((block) => block?.type === 'text' && typeof block.text === 'string').map((block) => block.text as string);
  if (stopReason === 'refusal') {
    throw new RubricateError('JUDGE_REFUSED', `judge refused (stop_reason refusal)${texts.length > 0 ? `: ${texts.join('').slice(0, 300)}` : ''}`, { endpoint });
  }
  const tools = toolName === undefined ? [] : message.content.filter((block) => block?.type === 'tool_use' && block.name === toolName);
  // The verdict is the tool input object (several calls of the tool, one line each: the reading refuses
  // them when they differ); without one, whatever text came is read tolerantly (and refused if it holds no verdict).
  const text = tools.length > 0 ? tools.map((tool) => JSON.stringify(tool.input ?? null)).join('\n') : texts.join('');
  const usage = message.usage ?? {};
  const tokens = new TokenCountReader();
  const read = tokens.count('cache_read_input_tokens', usage.cache_read_input_tokens);
  const written = tokens.count('cache_creation_input_tokens', usage.cache_creation_input_tokens);
  const reply: JudgeReply = {
    text,
    usage: tokens.usage({
      // input_tokens counts only what came after the last cache breakpoint; the prompt is all three.
      inputTokens: tokens.count('input_tokens', usage.input_tokens) + read + written,
      outputTokens: tokens.count('output_tokens', usage.output_tokens),
      cachedInputTokens: read,
      ...(written > 0 ? { cacheWriteInputTokens: written } : {}),
    }),
  };
  // Cut off at max_tokens reads like OpenAI's `length`, so the same retry-and-report path applies.
  if (stopReason === 'max_tokens') reply.finishReason = 'length';
  else if (stopReason !== undefined) reply.finishReason = stopReason;
  const model = resolvedModelOf((message as { model?: unknown }).model);
  if (model !== undefined) reply.model = model;
  return reply;
}

/** One Anthropic judge: its client and settings, and the prompt-cache prefixes it is writing or has written. */
interface AnthropicJudgeState {
  readonly options: AnthropicJudgeOptions;
  readonly client: ReturnType<typeof createJsonClient>;
  readonly caching: boolean;
  readonly awaitCacheWrite: boolean;
  readonly minimumTokens: number;
  readonly limits: ReturnType<typeof modelLimitsFor>;
  /** Prefixes whose first call is in flight (others wait for it). */
  readonly warming: Map<string, Promise<void>>;
  /** Prefixes already written. */
  readonly warmed: Set<string>;
}

export function createAnthropicJudge(options: AnthropicJudgeOptions): Judge & { close(): Promise<void>; requestBody(request: JudgeRequest): Record<string, unknown> } {
  const base = baseUrlOf(options.baseUrl ?? defaultAnthropicBaseUrl);
  // Accept the base with or without the version segment.
  const url = new URL(base.pathname.endsWith('/v1/') ? 'messages' : 'v1/messages', base);
  const client = createJsonClient({
    url,
    headers: {
      'anthropic-version': anthropicVersion,
      ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
      ...options.headers,
    },
    mapError: anthropicHttpError,
    maxReplyBytes: options.maxReplyBytes,
  });
  const provenance: JudgeProvenance = { id: options.id ?? `anthropic:${options.model}`, model: options.model, baseUrl: client.endpoint, ...requestProvenance(options) };
  const state: AnthropicJudgeState = {
    options,
    client,
    caching: options.promptCaching !== false,
    awaitCacheWrite: options.awaitCacheWrite !== false,
    minimumTokens: minimumCacheableTokens(options.model),
    limits: modelLimitsFor(options.model),
    warming: new Map(),
    warmed: new Set(),
  };
  return {
    provenance,
    capabilities: { images: true, tokenProbabilities: false, limits: state.limits },
    complete: (request, callOptions) => complete(state, request, callOptions),
    /** The body a call of this request sends (Message Batches `params`). */
    requestBody(request: JudgeRequest): Record<string, unknown> {
      if (request.logprobs) throw new RubricateError('JUDGE_UNSUPPORTED', 'the Anthropic Messages API returns no token probabilities: --verdict probability cannot be used with an anthropic: judge', { field: 'verdict' });
      return buildBody(state, request).body;
    },
    async close() {
      client.close();
    },
  };
}

function buildBody(state: AnthropicJudgeState, request: JudgeRequest): { body: Record<string, unknown>; prefixKey?: string } {
  const { options } = state;
  const tools = request.output ? [{ name: request.output.name, description: 'Record the verdict. Call this exactly once.', input_schema: request.output.schema }] : undefined;
  let shared = state.caching ? request.sharedPrefix : undefined;
  let prefixKey: string | undefined;
  if (shared) {
    // tools, then system, then messages: the cached prefix covers all three up to the breakpoint.
    const upTo = shared;
    const prefix = `${tools ? JSON.stringify(tools) : ''}\u0000${request.messages
      .slice(0, upTo.message + 1)
      .map((message, index) => (index === upTo.message ? message.content.slice(0, upTo.characters) : message.content))
      .join('\u0000')}`;
    // A prefix clearly too short to be cached gets no breakpoint and no waiting. The estimate
    // (3 characters a token) errs towards caching: a breakpoint below the minimum costs nothing.
    if (prefix.length / 3 >= state.minimumTokens) prefixKey = createHash('sha256').update(prefix).digest('base64');
    else shared = undefined;
  }
  const { system, messages } = toAnthropicMessages(request.messages, shared);
  const body: Record<string, unknown> = { model: options.model, max_tokens: request.maxTokens ?? defaultMaxTokens };
  if (system.length > 0) body.system = system;
  body.messages = messages;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  // The API has no seed: it is part of the cache key only.
  if (tools && request.output) {
    body.tools = tools;
    body.tool_choice = { type: 'tool', name: request.output.name, disable_parallel_tool_use: true };
  }
  if (options.extraBody) Object.assign(body, options.extraBody);
  return { body, prefixKey };
}

/** One verdict: a reply cut off at max_tokens is asked again with more room, up to the model's limit. */
function send(state: AnthropicJudgeState, request: JudgeRequest, body: Record<string, unknown>, signal: AbortSignal): Promise<JudgeReply> {
  const { client } = state;
  return withGrowingBudget(body.max_tokens as number, state.limits.maxOutputTokens, async (budget) => {
    const raw = await client.post(JSON.stringify({ ...body, max_tokens: budget }), signal);
    return parseAnthropicMessage(raw, request.output?.name, client.endpoint);
  });
}

async function complete(state: AnthropicJudgeState, request: JudgeRequest, { signal }: CompleteOptions): Promise<JudgeReply> {
  if (request.logprobs) {
    throw new RubricateError('JUDGE_UNSUPPORTED', 'the Anthropic Messages API returns no token probabilities: --verdict probability cannot be used with an anthropic: judge', {
      field: 'verdict',
    });
  }
  const { body, prefixKey } = buildBody(state, request);
  if (prefixKey === undefined || !state.awaitCacheWrite || state.warmed.has(prefixKey)) return send(state, request, body, signal);
  const first = state.warming.get(prefixKey);
  if (first) {
    await waitOrAbort(first, signal);
    return send(state, request, body, signal);
  }
  let done!: () => void;
  state.warming.set(prefixKey, new Promise<void>((resolve) => (done = resolve)));
  try {
    const reply = await send(state, request, body, signal);
    remember(state.warmed, prefixKey);
    return reply;
  } finally {
    state.warming.delete(prefixKey);
    done();
  }
}

const warmedCapacity = 4096;

function remember(set: Set<string>, key: string): void {
  if (set.size >= warmedCapacity) set.delete(set.values().next().value!);
  set.add(key);
}

function waitOrAbort(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
