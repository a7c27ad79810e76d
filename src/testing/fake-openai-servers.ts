/**
 * Personalities for the loopback fake judge (`fake-judge.ts`): the request rules, reply shapes,
 * error bodies and status codes of the servers users point an OpenAI-compatible judge at,
 * written from their documentation and source (see the judge-servers guide):
 *
 *   openai            gpt-4.1 / gpt-4o: output limit and context checks, value ranges
 *   openai-reasoning  o1/o3/o4-mini/gpt-5: reject max_tokens, temperature ≠ 1 and logprobs; hidden reasoning eats the budget
 *   vllm              `message.reasoning`, logprobs over reasoning tokens too, max_model_len checks
 *   sglang            `reasoning_content`, flat `{object: "error"}` bodies
 *   llamacpp          `exceed_context_size_error`, output stops at the context end, `<think>` in content
 *   ollama            reads only max_tokens (max_completion_tokens is ignored), top_logprobs 0–20
 *   anthropic-compat  ignores response_format, seed and logprobs; caps temperature at 1; Anthropic error bodies
 *   gemini-compat     JSON-array error bodies, unknown fields refused, no logprobs, thinking counts against max_tokens
 *   azure             classic `/openai/deployments/D/chat/completions?api-version=V` or `/openai/v1`, `api-key` header
 */
import type { FakeJudgeAction, FakeJudgeRequest, FakeJudgeScript } from './fake-judge.js';

export type ServerKind = 'openai' | 'openai-reasoning' | 'vllm' | 'sglang' | 'llamacpp' | 'ollama' | 'anthropic-compat' | 'gemini-compat' | 'azure';

/** How a thinking model shows its thinking. */
export type ThinkingStyle =
  /** No thinking. */
  | 'none'
  /** In the reasoning field (`reasoning` for vLLM/Ollama, `reasoning_content` for SGLang), answer in content. */
  | 'field'
  /** The parser never saw `</think>`: content empty, everything (answer included) in the reasoning field. */
  | 'field-only'
  /** `<think>…</think>` then the answer, in content (no reasoning parser). */
  | 'inline'
  /** The chat template opened the block: content holds thinking, `</think>`, then the answer (R1 distills, QwQ). */
  | 'template-opened';

export interface PersonalityOptions {
  /** Models served; any other gets this server's 404. Default: every model. */
  models?: string[];
  maxOutputTokens?: number;
  contextWindow?: number;
  /** Tokens of hidden reasoning (reasoning models, Gemini thinking) spent before the answer, against the budget. */
  hiddenReasoningTokens?: number;
  thinking?: ThinkingStyle;
  /** In thinking text, the model first argues the opposite verdict (and writes it as JSON). */
  thinkingQuotesOpposite?: boolean;
  /** The verdict every criterion gets. Default true. */
  met?: boolean | ((criterion: FakeJudgeRequest['criteria'][number]) => boolean);
  /** Probability the model puts on `true` at the answer's verdict token (logprobs). Default 0.95 for met, 0.05 otherwise. */
  pTrue?: number;
  /** How the tokenizer splits the verdict: `": true` (default), `":true` merged, or `true}` merged. */
  vocabulary?: 'plain' | 'colon-merged' | 'brace-merged';
  /** Content as an array of parts instead of a string (Mistral magistral, some gateways). */
  contentParts?: boolean;
  /** Reply withheld by the content filter (Azure): finish_reason content_filter, content null. */
  contentFilter?: boolean;
  /** Gemini: refuse the strict schema (its native schema has no additionalProperties). */
  rejectStrictSchema?: boolean;
  /** Azure: the deployment, key and URL form the resource serves. */
  azure?: { deployment: string; apiKey: string; reasoning?: boolean };
  /** Called with every request that passed the server's rules (to look at what was sent). */
  onAccepted?: (request: FakeJudgeRequest) => void;
}

function estimatePromptTokens(request: FakeJudgeRequest): number {
  let characters = 0;
  for (const message of request.messages) characters += String(message.content ?? '').length + 8;
  return Math.ceil(characters / 4);
}

function openAIError(status: number, message: string, param: string | null, code: string | null, type = 'invalid_request_error'): FakeJudgeAction {
  return { status, body: { error: { message, type, param, code } } };
}

/** Tokens and their alternatives for logprobs, in the shape each server sends. */
interface Token {
  token: string;
  logprob: number;
  top: Array<{ token: string; logprob: number }>;
}

function plainTokens(text: string): Token[] {
  return (text.match(/\s*[A-Za-z_]+|\s*\d+|\s*[^\sA-Za-z_\d]/g) ?? []).map((token) => ({ token, logprob: 0, top: [{ token, logprob: 0 }] }));
}

/** A verdict object's tokens, with the alternatives at the value token. */
function verdictTokens(explanation: string, met: boolean, pTrue: number, vocabulary: PersonalityOptions['vocabulary']): { text: string; tokens: Token[] } {
  const tokens: Token[] = [...plainTokens(`{"explanation": ${JSON.stringify(explanation)}, "criteria`), { token: '_met', logprob: 0, top: [{ token: '_met', logprob: 0 }] }];
  const value = (word: string) => (vocabulary === 'colon-merged' ? `":${word}` : vocabulary === 'brace-merged' ? `${word}}` : ` ${word}`);
  if (vocabulary !== 'colon-merged') tokens.push({ token: '":', logprob: 0, top: [{ token: '":', logprob: 0 }] });
  const chosen = value(met ? 'true' : 'false');
  const top = [
    { token: value('true'), logprob: Math.log(pTrue) },
    { token: value('false'), logprob: Math.log(1 - pTrue) },
  ].sort((left, right) => right.logprob - left.logprob);
  tokens.push({ token: chosen, logprob: Math.log(met ? pTrue : 1 - pTrue), top });
  if (vocabulary !== 'brace-merged') tokens.push({ token: '}', logprob: 0, top: [{ token: '}', logprob: 0 }] });
  const text = tokens.map((token) => token.token).join('');
  return { text, tokens };
}

function logprobsShape(kind: ServerKind, tokens: Token[]): unknown {
  const bytes = (token: string) => [...Buffer.from(token, 'utf8')];
  if (kind === 'llamacpp') {
    return { content: tokens.map((token, id) => ({ id, token: token.token, bytes: bytes(token.token), logprob: token.logprob, top_logprobs: token.top.map((alternative, index) => ({ id: id * 100 + index, token: alternative.token, bytes: bytes(alternative.token), logprob: alternative.logprob })) })) };
  }
  if (kind === 'vllm' || kind === 'sglang') {
    // vLLM writes −inf as -9999.0.
    return { content: tokens.map((token) => ({ token: token.token, logprob: Math.max(token.logprob, -9999), bytes: bytes(token.token), top_logprobs: token.top.map((alternative) => ({ token: alternative.token, logprob: Math.max(alternative.logprob, -9999), bytes: bytes(alternative.token) })) })) };
  }
  return { content: tokens.map((token) => ({ token: token.token, logprob: token.logprob, bytes: bytes(token.token), top_logprobs: token.top.map((alternative) => ({ ...alternative, bytes: bytes(alternative.token) })) })), refusal: null };
}

/** The answer to a rubricate grading request: one verdict, or a `verdicts` map for a batch. */
function answerFor(request: FakeJudgeRequest, options: PersonalityOptions): { text: string; tokens: Token[]; met: boolean } {
  const decide = (criterion: FakeJudgeRequest['criteria'][number]) => (typeof options.met === 'function' ? options.met(criterion) : options.met ?? true);
  const format = request.body.response_format as { json_schema?: { name?: string } } | undefined;
  const batched = format?.json_schema?.name === 'criteria_verdicts' || request.criteria.length > 1;
  if (batched) {
    const verdicts: Record<string, unknown> = {};
    for (const criterion of request.criteria) verdicts[criterion.id] = { explanation: `Checked: ${criterion.text.slice(0, 40)}`, criteria_met: decide(criterion) };
    const text = JSON.stringify({ verdicts });
    return { text, tokens: plainTokens(text), met: true };
  }
  const met = request.criteria[0] ? decide(request.criteria[0]) : true;
  const pTrue = options.pTrue ?? (met ? 0.95 : 0.05);
  const { text, tokens } = verdictTokens(met ? 'The response does this.' : 'The response does not do this.', met, pTrue, options.vocabulary);
  return { text, tokens, met };
}

/** Thinking text (and tokens) before the answer; quoting the opposite verdict when asked to. */
function thinkingFor(met: boolean, options: PersonalityOptions): { text: string; tokens: Token[] } {
  const opening = plainTokens('Let me check the criterion against the response. At first sight ');
  if (!options.thinkingQuotesOpposite) {
    const tokens = [...opening, ...plainTokens('it is clear.')];
    return { text: tokens.map((token) => token.token).join(''), tokens };
  }
  // A draft verdict of the opposite, with confident logprobs: the trap for a reader of all tokens.
  const draft = verdictTokens('draft', !met, met ? 0.1 : 0.9, options.vocabulary);
  const tokens = [...opening, ...draft.tokens, ...plainTokens(' but on reflection that is wrong.')];
  return { text: tokens.map((token) => token.token).join(''), tokens };
}

function completion(model: string, message: Record<string, unknown>, finishReason: string, usage: Record<string, unknown>, logprobs?: unknown): FakeJudgeAction {
  return {
    status: 200,
    body: {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 0,
      model,
      choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason, logprobs: logprobs ?? null }],
      usage,
    },
  };
}

/** One request as a personality reads it: the server, its options and the output budget asked for. */
interface Call {
  kind: ServerKind;
  options: PersonalityOptions;
  request: FakeJudgeRequest;
  body: Record<string, unknown>;
  model: string;
  promptTokens: number;
  budgetField?: 'max_completion_tokens' | 'max_tokens';
  /** The output budget the server applies (llama.cpp and Ollama change it). */
  budget?: number;
}

const accessDenied = 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.';

/** Azure's endpoint, key and deployment checks: an error, or the OpenAI rules the deployment follows. */
function azureAccess(call: Call): FakeJudgeAction | 'openai' | 'openai-reasoning' {
  const azure = call.options.azure!;
  const url = new URL(call.request.path, 'http://fake');
  const classic = url.pathname === `/openai/deployments/${azure.deployment}/chat/completions` && url.searchParams.has('api-version');
  const v1 = url.pathname === '/openai/v1/chat/completions';
  if (!classic && !v1) return { status: 404, body: { error: { code: '404', message: 'Resource not found' } } };
  const key = call.request.headers['api-key'] ?? (v1 ? String(call.request.headers.authorization ?? '').replace(/^Bearer /, '') : undefined);
  if (key !== azure.apiKey) return { status: 401, body: { error: { code: '401', message: accessDenied } } };
  if (v1 && call.model !== azure.deployment) {
    return { status: 404, body: { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.' } } };
  }
  return azure.reasoning ? 'openai-reasoning' : 'openai';
}

/** Each server's answer for a model it does not serve. */
function modelNotFound(kind: ServerKind, model: string): FakeJudgeAction {
  switch (kind) {
    case 'vllm':
      return { status: 404, body: { error: { message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', param: 'model', code: 404 } } };
    case 'ollama':
      return { status: 404, body: { error: { message: `model "${model}" not found, try pulling it first`, type: 'api_error', param: null, code: null } } };
    case 'gemini-compat':
      return { status: 404, body: [{ error: { code: 404, message: `models/${model} is not found for API version v1main, or is not supported for generateContent.`, status: 'NOT_FOUND' } }] };
    case 'anthropic-compat':
      return { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: `model: ${model}` } } };
    default:
      return openAIError(404, `The model \`${model}\` does not exist or you do not have access to it.`, null, 'model_not_found');
  }
}

/** What OpenAI's reasoning models refuse. */
function reasoningRuleError(body: Record<string, unknown>): FakeJudgeAction | undefined {
  if (body.max_tokens !== undefined) return openAIError(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens', 'unsupported_parameter');
  if (body.temperature !== undefined && body.temperature !== 1) {
    return openAIError(400, `Unsupported value: 'temperature' does not support ${body.temperature} with this model. Only the default (1) value is supported.`, 'temperature', 'unsupported_value');
  }
  if (body.logprobs !== undefined) return openAIError(400, "Unsupported parameter: 'logprobs' is not supported with this model.", 'logprobs', 'unsupported_parameter');
  return undefined;
}

/** OpenAI's value ranges, output limit and context window. */
function openAIRuleError(call: Call): FakeJudgeAction | undefined {
  const { body, budget, budgetField, promptTokens, options } = call;
  if (typeof body.temperature === 'number' && body.temperature > 2) {
    return openAIError(400, `Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got ${body.temperature} instead.`, 'temperature', 'decimal_above_max_value');
  }
  if (body.seed !== undefined && !Number.isInteger(body.seed)) return openAIError(400, "Invalid type for 'seed': expected an integer, but got a decimal number instead.", 'seed', 'invalid_type');
  if (typeof body.top_logprobs === 'number' && body.top_logprobs > 20) {
    return openAIError(400, `Invalid 'top_logprobs': integer above maximum value. Expected a value <= 20, but got ${body.top_logprobs} instead.`, 'top_logprobs', 'integer_above_max_value');
  }
  const cap = options.maxOutputTokens;
  if (cap !== undefined && budget !== undefined && budget > cap) {
    return openAIError(400, `${budgetField} is too large: ${budget}. This model supports at most ${cap} completion tokens, whereas you provided ${budget}.`, budgetField!, 'invalid_value');
  }
  if (options.contextWindow !== undefined && promptTokens + (budget ?? 0) > options.contextWindow) {
    return openAIError(
      400,
      `This model's maximum context length is ${options.contextWindow} tokens. However, you requested ${promptTokens + (budget ?? 0)} tokens (${promptTokens} in the messages, ${budget ?? 0} in the completion). Please reduce the length of the messages or completion.`,
      'messages',
      'context_length_exceeded',
    );
  }
  return undefined;
}

/** vLLM's and SGLang's max_model_len and logprob checks, each in its error body. */
function vllmRuleError(call: Call): FakeJudgeAction | undefined {
  const { kind, body, budget, promptTokens } = call;
  const window = call.options.contextWindow;
  const error = (message: string): FakeJudgeAction =>
    kind === 'sglang' ? { status: 400, body: { object: 'error', message, type: 'BadRequestError', param: null, code: 400 } } : { status: 400, body: { error: { message, type: 'BadRequestError', param: null, code: 400 } } };
  if (window !== undefined && budget !== undefined && budget > window) return error(`max_tokens=${budget} cannot be greater than max_model_len=${window}. Please request fewer output tokens.`);
  if (window !== undefined && promptTokens + (budget ?? 0) > window) {
    return error(`You passed ${promptTokens} input tokens and requested ${budget ?? 0} output tokens. However, the model's context length is only ${window} tokens, resulting in a maximum input length of ${window - (budget ?? 0)} tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=${promptTokens})`);
  }
  if (typeof body.top_logprobs === 'number' && body.top_logprobs > 20) return error(`Requested logprobs of ${body.top_logprobs}, which is greater than max allowed: 20`);
  return undefined;
}

/** llama.cpp's context check; generation stops where the context ends. */
function llamacppRuleError(call: Call): FakeJudgeAction | undefined {
  const window = call.options.contextWindow;
  if (window === undefined) return undefined;
  if (call.promptTokens >= window) {
    return {
      status: 400,
      body: { error: { code: 400, message: `request (${call.promptTokens} tokens) exceeds the available context size (${window} tokens), try increasing it`, type: 'exceed_context_size_error', n_prompt_tokens: call.promptTokens, n_ctx: window } },
    };
  }
  call.budget = Math.min(call.budget ?? Infinity, window - call.promptTokens);
  return undefined;
}

/** Ollama reads only max_tokens; its top_logprobs range. */
function ollamaRuleError(call: Call): FakeJudgeAction | undefined {
  const body = call.body;
  // Ollama's request struct has no max_completion_tokens: it is dropped and nothing limits the output.
  call.budget = body.max_tokens !== undefined ? Number(body.max_tokens) : undefined;
  if (typeof body.top_logprobs === 'number' && (body.top_logprobs < 0 || body.top_logprobs > 20)) {
    return { status: 400, body: { error: { message: 'top_logprobs must be between 0 and 20', type: 'invalid_request_error', param: null, code: null } } };
  }
  return undefined;
}

/** Anthropic's OpenAI layer: its output cap and prompt length, in Anthropic's error body. */
function anthropicCompatRuleError(call: Call): FakeJudgeAction | undefined {
  const { budget, promptTokens, options } = call;
  const cap = options.maxOutputTokens;
  if (cap !== undefined && budget !== undefined && budget > cap) {
    return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: `max_tokens: ${budget} > ${cap}, which is the maximum allowed number of output tokens for ${call.model}` } } };
  }
  if (options.contextWindow !== undefined && promptTokens > options.contextWindow) {
    return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${promptTokens} tokens > ${options.contextWindow} maximum` } } };
  }
  return undefined;
}

const geminiCompatFields = new Set(['model', 'messages', 'temperature', 'top_p', 'n', 'stop', 'max_tokens', 'max_completion_tokens', 'seed', 'response_format', 'reasoning_effort', 'logprobs', 'top_logprobs', 'stream', 'stream_options', 'tools', 'tool_choice', 'extra_body']);

/** Gemini's OpenAI layer: unknown fields, logprobs and (when asked) the strict schema refused. */
function geminiCompatRuleError(call: Call): FakeJudgeAction | undefined {
  const invalidArgument = (message: string): FakeJudgeAction => ({ status: 400, body: [{ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }] });
  for (const field of Object.keys(call.body)) {
    if (!geminiCompatFields.has(field)) return invalidArgument(`Invalid JSON payload received. Unknown name "${field}": Cannot find field.`);
  }
  if (call.body.logprobs) return invalidArgument(`Logprobs is not enabled for models/${call.model}`);
  const format = call.body.response_format as { type?: string } | undefined;
  if (call.options.rejectStrictSchema && format?.type === 'json_schema') {
    return invalidArgument(`Invalid JSON payload received. Unknown name "additionalProperties" at 'generation_config.response_schema': Cannot find field.`);
  }
  return undefined;
}

/** The first rule of this server the request breaks, as the server answers it. */
function ruleError(call: Call): FakeJudgeAction | undefined {
  let openAIRules: 'openai' | 'openai-reasoning' | undefined = call.kind === 'openai' || call.kind === 'openai-reasoning' ? call.kind : undefined;
  if (call.kind === 'azure') {
    const access = azureAccess(call);
    if (typeof access !== 'string') return access;
    openAIRules = access;
  } else if (call.options.models && !call.options.models.includes(call.model)) {
    return modelNotFound(call.kind, call.model);
  }
  if (openAIRules === 'openai-reasoning') {
    const refused = reasoningRuleError(call.body);
    if (refused) return refused;
  }
  if (openAIRules) {
    const refused = openAIRuleError(call);
    if (refused) return refused;
  }
  switch (call.kind) {
    case 'vllm':
    case 'sglang':
      return vllmRuleError(call);
    case 'llamacpp':
      return llamacppRuleError(call);
    case 'ollama':
      return ollamaRuleError(call);
    case 'anthropic-compat':
      return anthropicCompatRuleError(call);
    case 'gemini-compat':
      return geminiCompatRuleError(call);
    default:
      return undefined;
  }
}

const separatorToken = (token: string): Token => ({ token, logprob: 0, top: [{ token, logprob: 0 }] });

/** The message and the tokens its logprobs cover, for each way of showing thinking. */
function thinkingMessage(thinking: ThinkingStyle, reasoningField: string, thought: { text: string; tokens: Token[] }, answerText: string, answerTokens: Token[]): { message: Record<string, unknown>; tokens: Token[] } {
  switch (thinking) {
    case 'none':
      return { message: { content: answerText }, tokens: answerTokens };
    case 'field':
      // vLLM's logprobs cover every generated token, the reasoning's included.
      return { message: { content: answerText, [reasoningField]: thought.text }, tokens: [...thought.tokens, separatorToken('</think>'), separatorToken('\n\n'), ...answerTokens] };
    case 'field-only':
      return { message: { content: null, [reasoningField]: `${thought.text}\n\n${answerText}` }, tokens: [...thought.tokens, separatorToken('\n\n'), ...answerTokens] };
    case 'inline':
    case 'template-opened': {
      const open = thinking === 'inline' ? [separatorToken('<think>')] : [];
      const tokens = [...open, ...thought.tokens, separatorToken('</think>'), separatorToken('\n\n'), ...answerTokens];
      return { message: { content: `${thinking === 'inline' ? '<think>' : ''}${thought.text}</think>\n\n${answerText}` }, tokens };
    }
  }
}

/** The reply to a request that passed the rules: cut off where the budget ends, thinking as the server shows it. */
function reply(call: Call): FakeJudgeAction {
  const { kind, body, model, options, promptTokens, budget } = call;
  if (options.contentFilter) {
    return completion(model, { content: null, refusal: null }, 'content_filter', { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens });
  }
  const answer = answerFor(call.request, options);
  const answerText = kind === 'anthropic-compat' ? `Here is my assessment.\n\n\`\`\`json\n${answer.text}\n\`\`\`` : answer.text;
  const thinkingOff = (body.chat_template_kwargs as { enable_thinking?: boolean } | undefined)?.enable_thinking === false || body.reasoning_effort === 'none' || body.think === false;
  const thinking = options.thinking && options.thinking !== 'none' && !thinkingOff ? options.thinking : 'none';
  const thought = thinkingFor(answer.met, options);
  const hidden = thinkingOff ? 0 : options.hiddenReasoningTokens ?? 0;
  const visibleThinking = thinking === 'none' ? 0 : thought.tokens.length + 2;
  const spent = hidden + visibleThinking + answer.tokens.length;
  const usage = (completionTokens: number) => ({
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...(kind === 'ollama' || kind === 'llamacpp' ? {} : { prompt_tokens_details: { cached_tokens: 0 } }),
    ...(hidden > 0 ? { completion_tokens_details: { reasoning_tokens: Math.min(hidden, budget ?? hidden) } } : {}),
  });
  const reasoningField = kind === 'sglang' ? 'reasoning_content' : 'reasoning';
  if (budget !== undefined && spent > budget) {
    // Out of budget before the answer was complete: thinking (hidden or not) comes first.
    const message: Record<string, unknown> = { content: thinking === 'inline' ? `<think>${thought.text}` : thinking === 'template-opened' ? thought.text : null };
    if (thinking === 'field' || thinking === 'field-only') message[reasoningField] = thought.text;
    return completion(model, message, 'length', usage(budget));
  }
  const { message, tokens } = thinkingMessage(thinking, reasoningField, thought, answerText, answer.tokens);
  if (options.contentParts && typeof message.content === 'string') message.content = [{ type: 'text', text: message.content }];
  if (kind === 'openai' || kind === 'azure' || kind === 'openai-reasoning') message.refusal = null;
  const wantsLogprobs = body.logprobs === true && kind !== 'anthropic-compat';
  return completion(model, message, 'stop', usage(spent), wantsLogprobs ? logprobsShape(kind, tokens) : undefined);
}

/** A script that answers like the given server. */
export function serverPersonality(kind: ServerKind, options: PersonalityOptions = {}): FakeJudgeScript {
  return (request) => {
    const body = request.body;
    const budgetField = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : body.max_tokens !== undefined ? 'max_tokens' : undefined;
    const call: Call = { kind, options, request, body, model: String(body.model ?? ''), promptTokens: estimatePromptTokens(request), budgetField, budget: budgetField ? Number(body[budgetField]) : undefined };
    const refused = ruleError(call);
    if (refused) return refused;
    options.onAccepted?.(request);
    return reply(call);
  };
}
