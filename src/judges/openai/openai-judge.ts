/**
 * Judge for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, SGLang,
 * llama.cpp server, Ollama). Structured output: JSON schema where the server takes it,
 * else JSON mode, else plain text (the grading parser extracts JSON tolerantly).
 */
import { RubricateError } from '../../errors.js';
import type { CompleteOptions, Judge, JudgeReply, JudgeRequest, JudgeProvenance, TokenProbability } from '../types.js';
import { createHttpTransport } from './http-transport.js';
import { createSdkTransport } from './sdk-transport.js';
import type { ChatTransport } from './transport.js';
import { redactUrl, registerSecret } from '../../util/redact.js';

export type StructuredOutputMode = 'auto' | 'json_schema' | 'json_object' | 'none';

export interface OpenAICompatibleJudgeOptions {
  model: string;
  baseUrl: string;
  apiKey?: string;
  /** `http` (lean node:http client, default) or `sdk` (the official openai package). */
  transport?: 'http' | 'sdk';
  structuredOutput?: StructuredOutputMode;
  headers?: Record<string, string>;
  /** Extra fields merged into every request body (e.g. vLLM's `chat_template_kwargs`). */
  extraBody?: Record<string, unknown>;
  /** Spec the user wrote, kept for provenance. */
  id?: string;
  /** Largest reply body read by the lean transport (default 8 MiB). */
  maxReplyBytes?: number;
}

type OutputLevel = 'json_schema' | 'json_object' | 'none';
const downgradeOrder: OutputLevel[] = ['json_schema', 'json_object', 'none'];
const unsupportedOutputPattern = /response_format|json_schema|json_object|structured|guided|grammar|not supported|unsupported|unknown (field|parameter)|extra (fields|inputs)/i;

export function createOpenAICompatibleJudge(options: OpenAICompatibleJudgeOptions): Judge & { close(): Promise<void> } {
  const transport: ChatTransport =
    options.transport === 'sdk'
      ? createSdkTransport({ baseUrl: options.baseUrl, apiKey: options.apiKey, headers: options.headers })
      : createHttpTransport({ baseUrl: options.baseUrl, apiKey: options.apiKey, headers: options.headers, maxReplyBytes: options.maxReplyBytes });
  const requested = options.structuredOutput ?? 'auto';
  // In auto mode we start with JSON schema and step down, once, when the server refuses it.
  let outputLevel: OutputLevel = requested === 'auto' ? 'json_schema' : requested;
  const provenance: JudgeProvenance = {
    id: options.id ?? `openai:${options.model}`,
    model: options.model,
    // Shown in results, reports and /healthz: never with the URL's credentials.
    baseUrl: redactUrl(options.baseUrl),
  };
  registerSecret(options.apiKey);

  function buildBody(request: JudgeRequest, level: OutputLevel): Record<string, unknown> {
    const body: Record<string, unknown> = { model: options.model, messages: request.messages };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
    if (request.seed !== undefined) body.seed = request.seed;
    if (request.logprobs) {
      body.logprobs = true;
      body.top_logprobs = request.logprobs.top;
    }
    if (request.output && level === 'json_schema') {
      body.response_format = {
        type: 'json_schema',
        json_schema: { name: request.output.name, schema: request.output.schema, strict: true },
      };
    } else if (request.output && level === 'json_object') {
      body.response_format = { type: 'json_object' };
    }
    if (options.extraBody) Object.assign(body, options.extraBody);
    return body;
  }

  async function complete(request: JudgeRequest, { signal }: CompleteOptions): Promise<JudgeReply> {
    for (;;) {
      const level = outputLevel;
      try {
        const body = buildBody(request, level);
        const raw = await transport.postChatCompletion(body, signal, options.transport === 'sdk' ? undefined : serializeBody(body, request));
        return parseCompletion(raw, transport.endpoint);
      } catch (error) {
        const canStepDown =
          requested === 'auto' &&
          request.output !== undefined &&
          level !== 'none' &&
          RubricateError.isInstance(error) &&
          error.code === 'JUDGE_REQUEST_REJECTED' &&
          unsupportedOutputPattern.test(error.message);
        if (!canStepDown) throw error;
        const next = downgradeOrder[downgradeOrder.indexOf(level) + 1];
        // Another call may already have stepped down; only move forward.
        if (downgradeOrder.indexOf(outputLevel) < downgradeOrder.indexOf(next)) outputLevel = next;
      }
    }
  }

  return {
    provenance,
    complete,
    async close() {
      transport.close();
    },
  };
}

/**
 * JSON of a request body, reusing the serialisation of the parts that repeat call after
 * call (system prompts, output schemas): at thousands of calls a minute, serialising the
 * same kilobytes again is most of the client's CPU.
 */
function serializeBody(body: Record<string, unknown>, request: JudgeRequest): string {
  const { messages, response_format: responseFormat, ...rest } = body as { messages: JudgeRequest['messages']; response_format?: unknown };
  let json = JSON.stringify(rest);
  const messagesJson = request.messages.map((message) => `{"role":${JSON.stringify(message.role)},"content":${message.role === 'system' ? cachedJson(message.content) : JSON.stringify(message.content)}}`).join(',');
  json = `${json.slice(0, -1)}${json.length > 2 ? ',' : ''}"messages":[${messagesJson}]`;
  if (responseFormat !== undefined) json += `,"response_format":${responseFormatJson(responseFormat as Record<string, unknown>, request)}`;
  return `${json}}`;
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
  choices?: Array<{
    message?: { content?: unknown; refusal?: unknown; reasoning_content?: unknown };
    finish_reason?: unknown;
    logprobs?: { content?: Array<{ token?: unknown; logprob?: unknown; top_logprobs?: Array<{ token?: unknown; logprob?: unknown }> }> | null } | null;
  }>;
  usage?: {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    prompt_tokens_details?: { cached_tokens?: unknown } | null;
  };
}

function numberOrZero(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
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
  const text = typeof message.content === 'string' ? message.content : '';
  const reply: JudgeReply = {
    text,
    usage: {
      inputTokens: numberOrZero(completion.usage?.prompt_tokens),
      outputTokens: numberOrZero(completion.usage?.completion_tokens),
      cachedInputTokens: numberOrZero(completion.usage?.prompt_tokens_details?.cached_tokens),
    },
  };
  if (typeof choice.finish_reason === 'string') reply.finishReason = choice.finish_reason;
  const logprobs = choice.logprobs?.content;
  if (Array.isArray(logprobs)) {
    reply.tokenProbabilities = logprobs.map(
      (entry): TokenProbability => ({
        token: String(entry.token ?? ''),
        logprob: numberOrZero(entry.logprob),
        top: (entry.top_logprobs ?? []).map((alternative) => ({
          token: String(alternative.token ?? ''),
          logprob: typeof alternative.logprob === 'number' ? alternative.logprob : Number.NEGATIVE_INFINITY,
        })),
      }),
    );
  }
  return reply;
}
