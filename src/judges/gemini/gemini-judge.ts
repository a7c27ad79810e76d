/**
 * Native Gemini API judge (`gemini:MODEL`), POST models/MODEL:generateContent.
 *
 * - Structured verdicts: responseMimeType application/json with our reply schema converted
 *   to Gemini's responseSchema; the reply text then goes through the same reader as every
 *   other judge's (tolerant reading, strict validation, retries, reports).
 * - Thinking: off by default where the model allows it (2.5 Flash / Flash-Lite: budget 0),
 *   the smallest budget where it does not (2.5 Pro: 128), `--thinking-budget N` to change it
 *   (-1: the model decides). Thinking tokens are billed as output, and counted so.
 * - Implicit caching: cachedContentTokenCount is counted as cached input.
 * - Blocked prompts (promptFeedback.blockReason) and SAFETY / RECITATION / … finishes are
 *   reported as filtered content (like OpenAI's content_filter); MAX_TOKENS reads like
 *   OpenAI's `length`: the budget grows up to the model's output limit, then it is reported.
 * - Probability verdicts: responseLogprobs + logprobs where the model returns them; a model
 *   that does not answers 400, which stops the run at once.
 */
import { resolvedModelOf } from '../resolved-model.js';
import { RubricateError } from '../../errors.js';
import { baseUrlOf, createJsonClient } from '../http/json-client.js';
import { withGrowingBudget } from '../output-budget.js';
import { modelLimitsFor } from '../profiles.js';
import { requestProvenance } from '../request-settings.js';
import type { ChatMessage, CompleteOptions, Judge, JudgeProvenance, JudgeReply, JudgeRequest, TokenProbability } from '../types.js';
import { geminiHttpError } from './errors.js';
import { toGeminiSchema } from './response-schema.js';
import { TokenCountReader } from '../usage-counts.js';

export const defaultGeminiBaseUrl = 'https://generativelanguage.googleapis.com';
/** Output room added for thinking when the model decides its own budget. */
const dynamicThinkingAllowance = 8192;

export interface GeminiJudgeOptions {
  model: string;
  apiKey?: string;
  baseUrl?: string;
  headers?: Record<string, string>;
  /** Merged into the body; a `generationConfig` object is merged into ours. */
  extraBody?: Record<string, unknown>;
  /** Thinking tokens per call: 0 off, -1 dynamic; default by model (see above). */
  thinkingBudget?: number;
  id?: string;
  /** Largest reply body read (default 8 MiB). */
  maxReplyBytes?: number;
}

type Part = { text: string } | { inlineData: { mimeType: string; data: string } };
type Content = { role: 'user' | 'model'; parts: Part[] };

/** One ChatMessage → Gemini parts: the only place content is mapped, so image parts can be added here. */
export function toGeminiParts(message: ChatMessage): Part[] {
  const parts: Part[] = [{ text: message.content }];
  for (const image of message.images ?? []) parts.push({ inlineData: { mimeType: image.mediaType, data: image.data } });
  return parts;
}

export function toGeminiContents(messages: ChatMessage[]): { systemInstruction?: { parts: Part[] }; contents: Content[] } {
  const system: Part[] = [];
  const contents: Content[] = [];
  for (const message of messages) {
    if (message.role === 'system') system.push(...toGeminiParts(message));
    else contents.push({ role: message.role === 'assistant' ? 'model' : 'user', parts: toGeminiParts(message) });
  }
  return { ...(system.length > 0 ? { systemInstruction: { parts: system } } : {}), contents };
}

/** The thinking settings sent by default for a model, and the output room they need. */
export function thinkingFor(model: string, budget: number | undefined): { config?: Record<string, unknown>; allowance: number } {
  const name = model.replace(/^models\//, '');
  if (budget !== undefined) {
    if (!Number.isInteger(budget) || budget < -1) throw new RubricateError('CONFIG_INVALID', `--thinking-budget must be -1, 0 or a positive integer, got ${budget}`, { field: 'thinking-budget' });
    return { config: { thinkingBudget: budget, includeThoughts: false }, allowance: budget === -1 ? dynamicThinkingAllowance : budget };
  }
  if (/^gemini-2\.5-pro/.test(name)) return { config: { thinkingBudget: 128, includeThoughts: false }, allowance: 128 };
  if (/^gemini-2\.5-flash/.test(name)) return { config: { thinkingBudget: 0, includeThoughts: false }, allowance: 0 };
  // Gemini 3 thinks at a level, and cannot be turned off.
  if (/^gemini-3/.test(name)) return { config: { thinkingLevel: 'low', includeThoughts: false }, allowance: dynamicThinkingAllowance };
  return { allowance: 0 };
}

const refusalFinishes = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE']);

interface GenerateShape {
  candidates?: Array<{
    content?: { parts?: Array<{ text?: unknown; thought?: unknown }> };
    finishReason?: unknown;
    finishMessage?: unknown;
    logprobsResult?: {
      chosenCandidates?: Array<{ token?: unknown; logProbability?: unknown }>;
      topCandidates?: Array<{ candidates?: Array<{ token?: unknown; logProbability?: unknown }> }>;
    };
  }>;
  promptFeedback?: { blockReason?: unknown; blockReasonMessage?: unknown };
  usageMetadata?: { promptTokenCount?: unknown; candidatesTokenCount?: unknown; thoughtsTokenCount?: unknown; cachedContentTokenCount?: unknown };
}

export function parseGeminiResponse(raw: unknown, endpoint: string): JudgeReply {
  const response = raw as GenerateShape;
  if (!response || typeof response !== 'object') throw new RubricateError('JUDGE_SERVER_ERROR', 'Gemini answer is not an object', { endpoint });
  const blocked = response.promptFeedback?.blockReason;
  if (typeof blocked === 'string' && blocked !== 'BLOCK_REASON_UNSPECIFIED') {
    const why = typeof response.promptFeedback?.blockReasonMessage === 'string' ? `: ${response.promptFeedback.blockReasonMessage}` : '';
    throw new RubricateError('JUDGE_CONTENT_FILTERED', `Gemini blocked the prompt (${blocked})${why}`, { endpoint, reason: blocked });
  }
  const candidate = response.candidates?.[0];
  if (!candidate || typeof candidate !== 'object') throw new RubricateError('JUDGE_SERVER_ERROR', 'Gemini answer has no candidates', { endpoint });
  const finish = typeof candidate.finishReason === 'string' ? candidate.finishReason : undefined;
  if (finish && refusalFinishes.has(finish)) {
    throw new RubricateError('JUDGE_CONTENT_FILTERED', `Gemini withheld the reply (finishReason ${finish})`, { endpoint, reason: finish });
  }
  // Thought summaries (only present if asked for) are not the answer.
  const text = (candidate.content?.parts ?? [])
    .filter((part) => part && part.thought !== true && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('');
  const usage = response.usageMetadata ?? {};
  const tokens = new TokenCountReader();
  const reply: JudgeReply = {
    text,
    usage: tokens.usage({
      // promptTokenCount includes the implicitly cached tokens; thinking is billed as output.
      inputTokens: tokens.count('promptTokenCount', usage.promptTokenCount),
      outputTokens: tokens.count('candidatesTokenCount', usage.candidatesTokenCount) + tokens.count('thoughtsTokenCount', usage.thoughtsTokenCount),
      cachedInputTokens: tokens.count('cachedContentTokenCount', usage.cachedContentTokenCount),
    }),
  };
  if (finish === 'MAX_TOKENS') reply.finishReason = 'length';
  else if (finish === 'STOP') reply.finishReason = 'stop';
  else if (finish !== undefined) reply.finishReason = finish.toLowerCase();
  const model = resolvedModelOf((response as { modelVersion?: unknown }).modelVersion);
  if (model !== undefined) reply.model = model;
  const chosen = candidate.logprobsResult?.chosenCandidates;
  if (Array.isArray(chosen)) {
    const top = candidate.logprobsResult?.topCandidates ?? [];
    reply.tokenProbabilities = chosen.map(
      (entry, index): TokenProbability => ({
        token: String(entry.token ?? ''),
        logprob: geminiLogProbability(entry.logProbability),
        top: (top[index]?.candidates ?? []).map((alternative) => ({
          token: String(alternative.token ?? ''),
          logprob: geminiLogProbability(alternative.logProbability),
        })),
      }),
    );
  }
  return reply;
}

/**
 * A candidate's `logProbability`. The API writes proto3 JSON, which leaves out a field at its
 * default: an absent value is 0 (a probability of 1). Anything else that is not a number is NaN,
 * which the verdict reader refuses; so are proto3's "NaN"/"Infinity" strings.
 */
function geminiLogProbability(value: unknown): number {
  if (value === undefined) return 0;
  return typeof value === 'number' ? value : Number.NaN;
}

export function createGeminiJudge(options: GeminiJudgeOptions): Judge & { close(): Promise<void> } {
  const base = baseUrlOf(options.baseUrl ?? defaultGeminiBaseUrl);
  const model = options.model.replace(/^models\//, '');
  const versioned = /\/v1(beta|alpha)?\/$/.test(base.pathname);
  const url = new URL(`${versioned ? '' : 'v1beta/'}models/${encodeURIComponent(model)}:generateContent`, base);
  const client = createJsonClient({
    url,
    headers: { ...(options.apiKey ? { 'x-goog-api-key': options.apiKey } : {}), ...options.headers },
    mapError: geminiHttpError,
    maxReplyBytes: options.maxReplyBytes,
  });
  const provenance: JudgeProvenance = { id: options.id ?? `gemini:${model}`, model, baseUrl: client.endpoint, ...requestProvenance(options) };
  const thinking = thinkingFor(model, options.thinkingBudget);
  const limits = modelLimitsFor(model);
  const { generationConfig: extraGeneration, ...extraRest } = (options.extraBody ?? {}) as { generationConfig?: Record<string, unknown> };

  function buildBody(request: JudgeRequest): Record<string, unknown> {
    const generationConfig: Record<string, unknown> = {};
    if (request.temperature !== undefined) generationConfig.temperature = request.temperature;
    if (request.topP !== undefined) generationConfig.topP = request.topP;
    if (request.maxTokens !== undefined) generationConfig.maxOutputTokens = request.maxTokens + thinking.allowance;
    if (request.seed !== undefined) generationConfig.seed = request.seed;
    if (request.output) {
      generationConfig.responseMimeType = 'application/json';
      generationConfig.responseSchema = toGeminiSchema(request.output.schema);
    }
    if (thinking.config) generationConfig.thinkingConfig = thinking.config;
    if (request.logprobs) {
      generationConfig.responseLogprobs = true;
      generationConfig.logprobs = Math.min(20, Math.max(1, request.logprobs.top));
    }
    if (extraGeneration) Object.assign(generationConfig, extraGeneration);
    return { ...toGeminiContents(request.messages), generationConfig, ...extraRest };
  }

  return {
    provenance,
    // Image parts go as inline data (`toGeminiParts`).
    capabilities: { images: true, limits },
    async complete(request: JudgeRequest, { signal }: CompleteOptions): Promise<JudgeReply> {
      const body = buildBody(request);
      const generationConfig = body.generationConfig as Record<string, unknown>;
      if (typeof generationConfig.maxOutputTokens !== 'number') return parseGeminiResponse(await client.post(JSON.stringify(body), signal), client.endpoint);
      // A reply cut off at MAX_TOKENS is asked again with more room, up to the model's limit.
      return withGrowingBudget(generationConfig.maxOutputTokens, limits.maxOutputTokens, async (budget) => {
        const raw = await client.post(JSON.stringify({ ...body, generationConfig: { ...generationConfig, maxOutputTokens: budget } }), signal);
        return parseGeminiResponse(raw, client.endpoint);
      });
    },
    async close() {
      client.close();
    },
  };
}
