/**
 * Judge for any OpenAI-compatible chat-completions endpoint (OpenAI and its reasoning models,
 * Azure OpenAI, vLLM, SGLang, llama.cpp server, Ollama, and the OpenAI layers of Anthropic and
 * Gemini). What it sends follows the endpoint's capability profile (`../profiles.ts`); a 400
 * that names one parameter adjusts that parameter for the rest of the run. Structured output:
 * JSON schema where the server takes it, else JSON mode, else plain text, stepping down only
 * when the server's complaint is about the output format.
 */
import { imageDataUrl } from '../../images/images.js';
import { RubricateError } from '../../errors.js';
import { redactUrl } from '../../util/redact.js';
import { requestProvenance } from '../request-settings.js';
import { chooseProfile, type JudgeProfile, type ModelLimits } from '../profiles.js';
import type { BudgetOverflow } from '../overflow.js';
import type { CompleteOptions, Judge, JudgeReply, JudgeRequest, JudgeProvenance, JudgeUsage, TokenProbability } from '../types.js';
import { createHttpTransport } from './http-transport.js';
import { createSdkTransport } from './sdk-transport.js';
import type { ChatTransport, ChatTransportOptions } from './transport.js';
import { TokenCountReader } from '../usage-counts.js';
import { resolvedModelOf } from '../resolved-model.js';
import { identityOf, mergeAlikeAlternatives } from '../token-alternatives.js';
import { answerAfterThinking } from '../../util/json.js';

import type { StructuredOutputMode } from '../../spec/run-spec.js';

export type { StructuredOutputMode };

export interface OpenAICompatibleJudgeOptions extends Pick<ChatTransportOptions, 'apiKeyHeader' | 'query'> {
  model: string;
  baseUrl: string;
  apiKey?: string;
  /** `http` (lean node:http client, default) or `sdk` (the official openai package). */
  transport?: 'http' | 'sdk';
  structuredOutput?: StructuredOutputMode;
  headers?: Record<string, string>;
  /** Extra fields merged into every request body (e.g. vLLM's `chat_template_kwargs`). */
  extraBody?: Record<string, unknown>;
  /** `reasoning_effort` for reasoning models (`none`, `minimal`, `low`, `medium`, `high`). */
  reasoningEffort?: string;
  /** A profile name (`--judge-profile`), or a complete profile; default: chosen from the endpoint and model. */
  profile?: string | JudgeProfile;
  /** Judge prefix the profile is chosen for (`openai`, `azure`). */
  provider?: string;
  /** Spec the user wrote, kept for provenance. */
  id?: string;
  /** Largest reply body read by the lean transport (default 8 MiB). */
  maxReplyBytes?: number;
}

type OutputLevel = 'json_schema' | 'json_object' | 'none';
const downgradeOrder: OutputLevel[] = ['json_schema', 'json_object', 'none'];
/** A complaint about the output format itself (OpenAI, vLLM/xgrammar/outlines, llama.cpp grammar, Gemini's schema mapping). */
const outputFormatComplaint = /response_format|json_schema|json_object|structured output|guided|xgrammar|outlines|grammar|response_?schema|responseJsonSchema|invalid schema/i;
/** Output tokens reasoning models get on top of the answer's budget, for the thinking they do first. */
export const reasoningAllowanceTokens = 4096;
/** Bound on request adjustments within one call (each learned parameter changes once). */
const maxAdjustments = 8;
/** `finish_reason: length` raises the budget this many times over, up to the model's limit. */
const budgetGrowth = 4;

/** One OpenAI-compatible judge: its endpoint, what it has learned of it, and the output format it asks for now. */
interface OpenAIJudgeState {
  readonly options: OpenAICompatibleJudgeOptions;
  readonly transport: ChatTransport;
  /** The endpoint's capability profile, adjusted as the endpoint refuses parameters. */
  readonly profile: JudgeProfile;
  readonly requested: StructuredOutputMode;
  /** In auto mode we start at the profile's best format and step down, once, when the server refuses it. */
  outputLevel: OutputLevel;
  readonly extraBody: Record<string, unknown>;
  readonly provenance: JudgeProvenance;
}

export function createOpenAICompatibleJudge(
  options: OpenAICompatibleJudgeOptions,
): Judge & { close(): Promise<void>; readonly profile: JudgeProfile; requestBody(request: JudgeRequest): Record<string, unknown> } {
  const transportOptions: ChatTransportOptions = { baseUrl: options.baseUrl, apiKey: options.apiKey, apiKeyHeader: options.apiKeyHeader, headers: options.headers, query: options.query, maxReplyBytes: options.maxReplyBytes };
  const transport: ChatTransport = options.transport === 'sdk' ? createSdkTransport(transportOptions) : createHttpTransport(transportOptions);
  const profile: JudgeProfile =
    typeof options.profile === 'object'
      ? { ...options.profile }
      : chooseProfile({ provider: options.provider ?? 'openai', model: options.model, baseUrl: options.baseUrl, override: options.profile });
  const requested = options.structuredOutput ?? 'auto';
  const provenance: JudgeProvenance = {
    id: options.id ?? `openai:${options.model}`,
    model: options.model,
    baseUrl: redactUrl(options.baseUrl),
    ...requestProvenance(options, { profile: profile.name }),
  };
  const state: OpenAIJudgeState = { options, transport, profile, requested, outputLevel: requested === 'auto' ? profile.structuredOutput : requested, extraBody: options.extraBody ?? {}, provenance };
  return {
    provenance,
    capabilities: {
      images: true,
      /** An endpoint that ignores `logprobs` (Anthropic's layer) can never give probability verdicts: refused before any call. */
      get tokenProbabilities(): boolean | undefined {
        return profile.logprobs === 'ignored' ? false : undefined;
      },
      get limits(): ModelLimits {
        return { maxOutputTokens: profile.maxOutputTokens, contextWindow: profile.contextWindow };
      },
    },
    profile,
    complete: (request, callOptions) => complete(state, request, callOptions),
    /** The body the next call of this request would send (Batch API lines, dry runs). */
    requestBody(request: JudgeRequest): Record<string, unknown> {
      return buildBody(state, request, state.outputLevel, initialBudget(state, request));
    },
    async close() {
      transport.close();
    },
  };
}

function buildBody(state: OpenAIJudgeState, request: JudgeRequest, level: OutputLevel, budget: number | undefined): Record<string, unknown> {
  const { options, profile } = state;
  const body: Record<string, unknown> = { model: options.model, messages: request.messages.map(openAIMessage) };
  if (request.temperature !== undefined && profile.temperature) body.temperature = Math.min(request.temperature, profile.maxTemperature);
  if (request.topP !== undefined && profile.temperature) body.top_p = request.topP;
  if (budget !== undefined) body[profile.tokenLimitField] = budget;
  if (request.seed !== undefined && profile.seed) body.seed = request.seed;
  if (request.logprobs) {
    body.logprobs = true;
    body.top_logprobs = Math.min(request.logprobs.top, profile.maxTopLogprobs);
  }
  if (request.output && level === 'json_schema') {
    body.response_format = {
      type: 'json_schema',
      json_schema: { name: request.output.name, schema: request.output.schema, strict: true },
    };
  } else if (request.output && level === 'json_object') {
    body.response_format = { type: 'json_object' };
  }
  if (options.reasoningEffort !== undefined) body.reasoning_effort = options.reasoningEffort;
  Object.assign(body, state.extraBody);
  return body;
}

/** The most output tokens this request may have: the model's limit, and what its context leaves after the prompt. */
function outputCeiling(state: OpenAIJudgeState, request: JudgeRequest): number | undefined {
  const { profile } = state;
  let ceiling = profile.maxOutputTokens;
  if (profile.contextWindow !== undefined) {
    const room = profile.contextWindow - promptTokenEstimate(request) - 16;
    if (room > 0) ceiling = Math.min(ceiling ?? room, room);
  }
  return ceiling;
}

function initialBudget(state: OpenAIJudgeState, request: JudgeRequest): number | undefined {
  if (request.maxTokens === undefined) return undefined;
  const wanted = request.maxTokens + (state.profile.reasoning && state.options.reasoningEffort !== 'none' ? reasoningAllowanceTokens : 0);
  const ceiling = outputCeiling(state, request);
  return ceiling === undefined ? wanted : Math.max(1, Math.min(wanted, ceiling));
}

/** Learns from a context overflow; true when the call is worth sending again with a smaller output budget. */
function adaptToOverflow(state: OpenAIJudgeState, error: RubricateError, request: JudgeRequest, budget: number | undefined): boolean {
  const { profile } = state;
  const overflow = error.details.overflow as BudgetOverflow | undefined;
  if (overflow?.maxOutputTokens !== undefined) profile.maxOutputTokens = Math.min(profile.maxOutputTokens ?? Infinity, overflow.maxOutputTokens);
  if (overflow?.contextWindow !== undefined) profile.contextWindow = overflow.contextWindow;
  if (overflow?.cause !== 'output' || budget === undefined) return false;
  // The output budget did not fit: send the largest one that does (the reply may still need less).
  let fitting = outputCeiling(state, request);
  if (overflow.promptTokens !== undefined && overflow.contextWindow !== undefined) fitting = Math.min(fitting ?? Infinity, overflow.contextWindow - overflow.promptTokens);
  return fitting !== undefined && fitting >= 1 && fitting < budget;
}

/** Learns from a rejected call; true when the call is worth sending again as adjusted. */
function adapt(state: OpenAIJudgeState, error: RubricateError, request: JudgeRequest, level: OutputLevel, budget: number | undefined, sent: Record<string, unknown>): boolean | RubricateError {
  const { profile, options } = state;
  if (error.code === 'JUDGE_CONTEXT_OVERFLOW') return adaptToOverflow(state, error, request, budget);
  if (error.code !== 'JUDGE_REQUEST_REJECTED') return false;
  const param = rejectedParameter(error);
  const unsupported = /unsupported|not supported|unknown|not permitted|cannot find field|unrecognized|does not support/i.test(error.message);
  // Judged against what this call sent: concurrent calls may have learned the same thing already.
  if (param === 'max_tokens' && (/max_completion_tokens/.test(error.message) || unsupported) && 'max_tokens' in sent) {
    profile.tokenLimitField = 'max_completion_tokens';
    return true;
  }
  if (param === 'max_completion_tokens' && unsupported && 'max_completion_tokens' in sent) {
    profile.tokenLimitField = 'max_tokens';
    return true;
  }
  if (param === 'temperature' && 'temperature' in sent) {
    profile.temperature = false;
    return true;
  }
  if (param === 'seed' && 'seed' in sent) {
    profile.seed = false;
    return true;
  }
  if (param === 'top_logprobs' && request.logprobs) {
    const most = /between 0 and (\d+)|at most (\d+)|less than or equal to (\d+)|<= ?(\d+)/i.exec(error.message);
    const limit = most ? Number(most[1] ?? most[2] ?? most[3] ?? most[4]) : undefined;
    if (limit !== undefined && limit >= 1 && limit < Number(sent.top_logprobs)) {
      profile.maxTopLogprobs = Math.min(profile.maxTopLogprobs, limit);
      return true;
    }
  }
  if (request.logprobs && (param === 'logprobs' || param === 'top_logprobs' || (param === undefined && /logprobs/i.test(error.message)))) {
    profile.logprobs = 'rejected';
    return new RubricateError('JUDGE_UNSUPPORTED', `this judge does not give token log-probabilities, so --verdict probability cannot work with it: ${error.message}`, error.details, { cause: error });
  }
  if (param !== undefined && (param in state.extraBody || (param === 'reasoning_effort' && options.reasoningEffort !== undefined))) {
    return new RubricateError('JUDGE_UNSUPPORTED', `the judge does not accept "${param}" (set by --judge-extra-body or --reasoning-effort): ${error.message}`, error.details, { cause: error });
  }
  if (param === 'model') return new RubricateError('JUDGE_NOT_FOUND', error.message, error.details, { cause: error });
  // The message decides too: Gemini names the schema keyword it refuses ("Unknown name "additionalProperties" at 'generation_config.response_schema'").
  const aboutFormat = param?.startsWith('response_format') === true || outputFormatComplaint.test(error.message);
  if (aboutFormat && state.requested === 'auto' && request.output !== undefined && level !== 'none') {
    const next = downgradeOrder[downgradeOrder.indexOf(level) + 1];
    // Another call may already have stepped down; only move forward.
    if (downgradeOrder.indexOf(state.outputLevel) < downgradeOrder.indexOf(next)) state.outputLevel = next;
    return true;
  }
  return false;
}

/** The output budget after an adjustment: what fits the context after an overflow, else within the ceiling learned. */
function adjustedBudget(state: OpenAIJudgeState, error: RubricateError, request: JudgeRequest, budget: number | undefined): number | undefined {
  if (budget === undefined) return undefined;
  if (error.code === 'JUDGE_CONTEXT_OVERFLOW') {
    const overflow = error.details.overflow as BudgetOverflow;
    const ceiling = outputCeiling(state, request) ?? budget;
    return Math.max(1, Math.min(ceiling, overflow.promptTokens !== undefined && overflow.contextWindow !== undefined ? overflow.contextWindow - overflow.promptTokens : ceiling));
  }
  return Math.min(budget, outputCeiling(state, request) ?? budget);
}

async function complete(state: OpenAIJudgeState, request: JudgeRequest, { signal }: CompleteOptions): Promise<JudgeReply> {
  const { profile, provenance, transport, options } = state;
  if (request.logprobs && profile.logprobs === 'ignored') {
    throw new RubricateError('JUDGE_UNSUPPORTED', `the ${profile.name} endpoint ignores "logprobs" and returns none, so --verdict probability cannot work with ${provenance.id}`);
  }
  let adjustments = 0;
  let budget = initialBudget(state, request);
  let spent: JudgeUsage | undefined;
  for (;;) {
    const level = state.outputLevel;
    let reply: JudgeReply;
    const body = buildBody(state, request, level, budget);
    try {
      const raw = await transport.postChatCompletion(body, signal, options.transport === 'sdk' ? undefined : serializeBody(body, request));
      reply = parseCompletion(raw, transport.endpoint);
    } catch (error) {
      if (!RubricateError.isInstance(error)) throw error;
      const adapted = adapt(state, error, request, level, budget, body);
      if (RubricateError.isInstance(adapted)) throw adapted;
      if (!adapted || adjustments >= maxAdjustments) throw error;
      adjustments += 1;
      budget = adjustedBudget(state, error, request, budget);
      continue;
    }
    spent = spent ? addUsage(spent, reply.usage) : reply.usage;
    if (reply.finishReason === 'length' && budget !== undefined) {
      // Thinking (or a long batch) used up the budget: raise it as far as the model allows.
      const ceiling = outputCeiling(state, request) ?? (request.maxTokens ?? budget) * budgetGrowth * budgetGrowth;
      if (budget < ceiling && adjustments < maxAdjustments) {
        adjustments += 1;
        budget = Math.min(ceiling, budget * budgetGrowth);
        continue;
      }
      if (outputCeiling(state, request) !== undefined) reply.atOutputLimit = true;
    }
    reply.usage = spent;
    if (request.logprobs && !reply.tokenProbabilities && reply.text.trim() !== '') {
      profile.logprobs = 'ignored';
      throw new RubricateError('JUDGE_UNSUPPORTED', `asked for token log-probabilities but ${provenance.id} returned none, so --verdict probability cannot work with this judge`, { endpoint: transport.endpoint });
    }
    return reply;
  }
}

/** The request parameter a 400 is about: the `param` field, else the name the message quotes. */
function rejectedParameter(error: RubricateError): string | undefined {
  const param = error.details.param;
  if (typeof param === 'string' && param !== '') return param;
  const quoted =
    /Unsupported (?:parameter|value): '([\w.[\]]+)'/i.exec(error.message) ??
    /Unknown name "([\w.]+)"/i.exec(error.message) ??
    /unknown (?:field|parameter)[:\s]+[`'"]?([\w.]+)/i.exec(error.message) ??
    /body\.([\w]+): Extra inputs are not permitted/i.exec(error.message) ??
    /'(\w+)' is not supported with this model/i.exec(error.message);
  return quoted?.[1];
}

function addUsage(left: JudgeUsage, right: JudgeUsage): JudgeUsage {
  return { inputTokens: left.inputTokens + right.inputTokens, outputTokens: left.outputTokens + right.outputTokens, cachedInputTokens: left.cachedInputTokens + right.cachedInputTokens };
}

/** Prompt size for fitting the output budget into the context (about four characters a token). */
function promptTokenEstimate(request: JudgeRequest): number {
  let characters = 0;
  for (const message of request.messages) characters += message.content.length + 8;
  if (request.output) characters += JSON.stringify(request.output.schema).length;
  return Math.ceil(characters / 4);
}

/**
 * JSON of a request body, reusing the serialisation of the parts that repeat call after
 * call (system prompts, output schemas): at thousands of calls a minute, serialising the
 * same kilobytes again is most of the client's CPU.
 */
function serializeBody(body: Record<string, unknown>, request: JudgeRequest): string {
  const { messages: _messages, response_format: responseFormat, ...rest } = body as { messages: JudgeRequest['messages']; response_format?: unknown };
  const head = JSON.stringify(rest);
  // Concatenated, not joined: the body is copied into one flat string once, when it is sent.
  let json = `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"messages":[`;
  request.messages.forEach((message, index) => {
    json += `${index > 0 ? ',' : ''}{"role":${JSON.stringify(message.role)},"content":${messageContentJson(message)}}`;
  });
  json += ']';
  if (responseFormat !== undefined) json += `,"response_format":${responseFormatJson(responseFormat as Record<string, unknown>, request)}`;
  return `${json}}`;
}

/** A message's content as JSON (system prompts from the cache). */
function messageContentJson(message: JudgeRequest['messages'][number]): string {
  if (message.images && message.images.length > 0) return JSON.stringify(contentParts(message));
  return message.role === 'system' ? cachedJson(message.content) : JSON.stringify(message.content);
}

function openAIMessage(message: JudgeRequest['messages'][number]): object {
  return message.images !== undefined ? { role: message.role, content: message.images.length > 0 ? contentParts(message) : message.content } : message;
}

/** A message with images as chat-completions content parts: the text, then one image_url part (a data URL) per image. */
function contentParts(message: JudgeRequest['messages'][number]): Array<Record<string, unknown>> {
  return [{ type: 'text', text: message.content }, ...(message.images ?? []).map((image) => ({ type: 'image_url', image_url: { url: imageDataUrl(image) } }))];
}

const jsonOfText = new Map<string, string>();

function cachedJson(text: string): string {
  let json = jsonOfText.get(text);
  if (json === undefined) {
    json = JSON.stringify(text);
    if (jsonOfText.size > 256) jsonOfText.clear();
    jsonOfText.set(text, json);
  }
  return json;
}

const jsonOfFormat = new WeakMap<object, Map<string, string>>();

function responseFormatJson(format: Record<string, unknown>, request: JudgeRequest): string {
  const schema = request.output?.schema;
  if (!schema) return JSON.stringify(format);
  let byType = jsonOfFormat.get(schema);
  if (!byType) jsonOfFormat.set(schema, (byType = new Map()));
  const key = `${String(format.type)}:${request.output!.name}`;
  let json = byType.get(key);
  if (json === undefined) byType.set(key, (json = JSON.stringify(format)));
  return json;
}

interface CompletionShape {
  model?: unknown;
  choices?: Array<{
    message?: { content?: unknown; refusal?: unknown; reasoning_content?: unknown; reasoning?: unknown };
    finish_reason?: unknown;
    logprobs?: { content?: Array<{ token?: unknown; logprob?: unknown; top_logprobs?: Array<{ token?: unknown; logprob?: unknown; id?: unknown; bytes?: unknown }> }> | null } | null;
  }>;
  usage?: {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    prompt_tokens_details?: { cached_tokens?: unknown } | null;
  };
}

/** A log-probability as sent; anything else is NaN, which the verdict reader refuses (never read as a probability of 1 or 0). */
function numberOrNaN(value: unknown): number {
  return typeof value === 'number' ? value : Number.NaN;
}

/**
 * Message content as text and reasoning: a string, or an array of parts (`text` /
 * `output_text` parts are the answer; `thinking` / `reasoning` parts are reasoning).
 */
function readContent(content: unknown): { text: string; reasoning: string } {
  if (typeof content === 'string') return { text: content, reasoning: '' };
  if (!Array.isArray(content)) return { text: '', reasoning: '' };
  let text = '';
  let reasoning = '';
  for (const part of content) {
    if (typeof part === 'string') {
      text += part;
      continue;
    }
    if (!part || typeof part !== 'object') continue;
    const { type, text: partText, thinking } = part as { type?: unknown; text?: unknown; thinking?: unknown };
    if (type === 'thinking' || type === 'reasoning') {
      if (typeof thinking === 'string') reasoning += thinking;
      else if (typeof partText === 'string') reasoning += partText;
    } else if (typeof partText === 'string') text += partText;
  }
  return { text, reasoning };
}

/** Reasoning the server returned apart from the answer: `reasoning_content` (DeepSeek, SGLang, older vLLM) or `reasoning` (vLLM, Ollama). */
function readReasoning(message: NonNullable<NonNullable<CompletionShape['choices']>[number]['message']>): string {
  for (const field of [message.reasoning_content, message.reasoning]) {
    if (typeof field === 'string' && field.trim() !== '') return field;
    if (field && typeof field === 'object' && typeof (field as { content?: unknown }).content === 'string') return (field as { content: string }).content;
  }
  return '';
}

/** Reads the parts of a chat completion we use, refusing shapes that are not one. */
export function parseCompletion(raw: unknown, endpoint: string): JudgeReply {
  const completion = raw as CompletionShape;
  const choice = completion?.choices?.[0];
  if (!choice || typeof choice !== 'object') {
    throw new RubricateError('JUDGE_SERVER_ERROR', 'judge response has no choices', { endpoint });
  }
  const message = choice.message ?? {};
  if (typeof message.refusal === 'string' && message.refusal.trim() !== '') {
    throw new RubricateError('JUDGE_REFUSED', `judge refused: ${message.refusal.slice(0, 300)}`, { endpoint });
  }
  if (choice.finish_reason === 'content_filter') {
    throw new RubricateError('JUDGE_CONTENT_FILTERED', "the provider's content filter withheld the judge's reply (finish_reason: content_filter)", { endpoint });
  }
  const content = readContent(message.content);
  const reasoning = readReasoning(message) || content.reasoning;
  // A reasoning parser that never saw the end of the thinking leaves the answer in `reasoning`,
  // after the thinking (whose drafts are not the answer).
  const text = content.text.trim() === '' && reasoning !== '' && choice.finish_reason !== 'length' ? (answerAfterThinking(reasoning) ?? reasoning) : content.text;
  const tokens = new TokenCountReader();
  const reply: JudgeReply = {
    text,
    usage: tokens.usage({
      inputTokens: tokens.count('prompt_tokens', completion.usage?.prompt_tokens),
      outputTokens: tokens.count('completion_tokens', completion.usage?.completion_tokens),
      cachedInputTokens: tokens.count('cached_tokens', completion.usage?.prompt_tokens_details?.cached_tokens),
    }),
  };
  if (reasoning !== '') reply.reasoning = reasoning;
  if (typeof choice.finish_reason === 'string') reply.finishReason = choice.finish_reason;
  const model = resolvedModelOf(completion.model);
  if (model !== undefined) reply.model = model;
  const logprobs = choice.logprobs?.content;
  if (Array.isArray(logprobs)) {
    reply.tokenProbabilities = logprobs.map(
      (entry): TokenProbability => ({
        token: String(entry.token ?? ''),
        logprob: numberOrNaN(entry.logprob),
        top: mergeAlikeAlternatives(
          (Array.isArray(entry.top_logprobs) ? entry.top_logprobs : []).map((alternative) => ({
            token: String(alternative.token ?? ''),
            logprob: numberOrNaN(alternative.logprob),
            identity: identityOf(alternative),
          })),
        ),
      }),
    );
  }
  return reply;
}
