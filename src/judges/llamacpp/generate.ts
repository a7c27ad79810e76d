/**
 * The local judge's generation: a prompt rendered and evaluated on a sequence (keeping the KV
 * cache of the prefix it shares with the sequence's previous prompt), then either a reply decoded
 * value by value (per-criterion verdict shapes) or a whole reply under one grammar (anything else).
 */
import { RubricateError } from '../../errors.js';
import { safeParseJson } from '../../util/json.js';
import { seededRandom } from '../../util/random.js';
import { mergeAlikeAlternatives, type ListedAlternative } from '../token-alternatives.js';
import type { ChatMessage, JudgeReply, JudgeRequest, TokenProbability } from '../types.js';
import { fieldByFieldShape, forcedReplyPieces, grammarEndTrigger, grammarFor, type ReplyField } from './grammar.js';
import { throwIfAborted } from './local-errors.js';
import { stageClock, type InferenceProfile, type LocalCall, type LocalModelState, type Sampling } from './local-model.js';
import { chooseBoolean } from './verdict-choice.js';
import { sharedPrefixLength } from './prefix-snapshots.js';

type NodeLlamaCpp = typeof import('node-llama-cpp');
type LlamaModel = import('node-llama-cpp').LlamaModel;
type LlamaContextSequence = import('node-llama-cpp').LlamaContextSequence;
type LlamaText = import('node-llama-cpp').LlamaText;
type ChatHistoryItem = import('node-llama-cpp').ChatHistoryItem;
type Token = import('node-llama-cpp').Token;

/** A call before its sampling settings are drawn (a call that fails before decoding draws no seed). */
type PreparedCall = Omit<LocalCall, 'sampling'>;

type PartialReply = Omit<JudgeReply, 'usage'>;

/** The chat template's rendering of `messages`, ending in a new assistant turn. */
export function contextText(state: LocalModelState, messages: ChatMessage[]) {
  const history: ChatHistoryItem[] = messages.map((message): ChatHistoryItem => {
    if (message.role === 'system') return { type: 'system', text: message.content };
    if (message.role === 'user') return { type: 'user', text: message.content };
    return { type: 'model', response: [message.content] };
  });
  // The reply always starts a new assistant turn; earlier assistant messages are history.
  history.push({ type: 'model', response: [] });
  return state.chatWrapper.generateContextState({ chatHistory: history });
}

/** A call's prompt as the model evaluates it: the chat template's rendering and its tokens. */
export interface PreparedPrompt {
  readonly rendered: ReturnType<typeof contextText>;
  readonly tokens: Token[];
}

export function preparePrompt(state: LocalModelState, request: JudgeRequest): PreparedPrompt {
  const rendered = contextText(state, request.messages);
  return { rendered, tokens: rendered.contextText.tokenize(state.model.tokenizer) };
}

/** How a call shares its prompt's prefix with the context's other sequences (`prefix-snapshots.ts`). */
export interface PrefixSharing {
  /** Prompt tokens loaded from another sequence's saved state before this call. */
  copiedTokens: number;
  /** Saves the evaluated prefix for other sequences: the prompt but its last token is evaluated first, then this runs. */
  publish?: (sequence: LlamaContextSequence) => Promise<void>;
}

/** One call on a borrowed sequence: refused up front when prompt and reply cannot fit. */
export async function generate(state: LocalModelState, sequence: LlamaContextSequence, request: JudgeRequest, prompt: PreparedPrompt, signal: AbortSignal, sharing?: PrefixSharing): Promise<JudgeReply> {
  const { model } = state;
  const clock = stageClock();
  const promptTokens = prompt.tokens;
  if (request.maxTokens !== undefined && (!Number.isInteger(request.maxTokens) || request.maxTokens < 1)) {
    throw new RubricateError('JUDGE_REQUEST_REJECTED', 'maxTokens must be a positive integer', { field: 'maxTokens' });
  }
  const fields = request.output ? fieldByFieldShape(request.output.schema) : undefined;
  const maxTokens = replyBudget(model, sequence.contextSize, promptTokens.length, request, fields);
  const reused = await keepSharedPrefix(state, sequence, promptTokens);
  throwIfAborted(signal);
  const profile: InferenceProfile = {
    reusedTokens: reused,
    copiedTokens: Math.min(reused, sharing?.copiedTokens ?? 0),
    promptTokens: promptTokens.length - reused,
    forcedTokens: 0,
    generatedTokens: 0,
    prepareSeconds: clock.lap(),
    promptSeconds: 0,
    decodeSeconds: 0,
    verdictSeconds: 0,
    ownSeconds: 0,
  };
  const pending = await publishPrefix(sequence, promptTokens, reused, sharing, profile, clock);
  throwIfAborted(signal);
  const call: PreparedCall = { state, sequence, request, profile, signal, wantProbabilities: request.logprobs !== undefined, topAlternatives: Math.max(0, Math.floor(request.logprobs?.top ?? 0)) };
  const reply = fields
    ? await generateFieldByField(call, pending, fields, maxTokens)
    : await generateFree(call, pending, prompt.rendered.stopGenerationTriggers, maxTokens);
  state.onInference?.(profile);
  return { ...reply, usage: { inputTokens: promptTokens.length + profile.forcedTokens, outputTokens: profile.generatedTokens, cachedInputTokens: reused } };
}

/**
 * For a call that publishes its prefix: evaluates the prompt but its last token (the KV cells
 * a fresh evaluation of the whole prompt computes for those positions) and saves the state
 * for the other sequences; the last token then leads the first decoding step as usual.
 */
async function publishPrefix(sequence: LlamaContextSequence, promptTokens: Token[], reused: number, sharing: PrefixSharing | undefined, profile: InferenceProfile, clock: { lap(): number }): Promise<Token[]> {
  if (!sharing?.publish || promptTokens.length - 1 <= reused) return promptTokens.slice(reused);
  await sequence.evaluateWithoutGeneratingNewTokens(promptTokens.slice(reused, -1));
  profile.promptSeconds += clock.lap();
  await sharing.publish(sequence);
  profile.prepareSeconds += clock.lap();
  return promptTokens.slice(-1);
}

/** The reply tokens a call may generate: the request's, or what the context leaves; JUDGE_CONTEXT_OVERFLOW when they do not fit. */
function replyBudget(model: LlamaModel, capacity: number, promptLength: number, request: JudgeRequest, fields: readonly ReplyField[] | undefined): number {
  const forcedPieces = fields ? forcedReplyPieces(fields) : [];
  const forcedCount = forcedPieces.reduce((sum, piece) => sum + model.tokenize(piece).length, 0);
  const maxTokens = request.maxTokens ?? capacity - promptLength - forcedCount;
  if (promptLength + forcedCount + maxTokens > capacity || maxTokens < 1) {
    throw new RubricateError(
      'JUDGE_CONTEXT_OVERFLOW',
      `prompt of ${promptLength} tokens plus ${request.maxTokens ?? 'at least 1'} reply token(s) does not fit the context of ${capacity} tokens per sequence` +
        ' (raise the context size or shorten the prompt)',
      { promptTokens: promptLength, maxTokens: request.maxTokens, contextSize: capacity },
    );
  }
  return maxTokens;
}

/** Keeps the prefix the prompt shares with the sequence's previous one; at least one prompt token is evaluated, for the next-token logits. */
async function keepSharedPrefix(state: LocalModelState, sequence: LlamaContextSequence, promptTokens: readonly Token[]): Promise<number> {
  const reused = state.reusePrefix ? sharedPrefixLength(sequence.contextTokens, promptTokens, promptTokens.length - 1) : 0;
  if (sequence.nextTokenIndex > reused) await sequence.eraseContextTokenRanges([{ start: reused, end: sequence.nextTokenIndex }]);
  return reused;
}

/** Sampling settings shared by every step: plain temperature sampling, as the chat-completions APIs do (no top-k cut; top-p only when asked). */
function samplingOf(state: LocalModelState, request: JudgeRequest): Sampling {
  return {
    temperature: Math.max(0, request.temperature ?? 0),
    topK: 0,
    topP: request.topP ?? 1,
    minP: 0,
    // node-llama-cpp's fallback seed is the current second, which would repeat within a second.
    seed: request.seed ?? Math.floor(state.unseededCalls() * 2 ** 32),
  };
}

/** What whole-reply decoding has produced so far. */
interface FreeDecoding {
  generated: Token[];
  tokenProbabilities: TokenProbability[];
  runningText: string;
  finishReason: 'stop' | 'length';
  stopText: string | undefined;
}

/** A reply with no schema, or a schema the field-by-field decoder does not take: one grammar over the whole reply. */
async function generateFree(prepared: PreparedCall, pending: Token[], stopTriggers: readonly LlamaText[], maxTokens: number): Promise<PartialReply> {
  const { state, request } = prepared;
  const grammar = request.output ? await grammarFor(state.grammars, request.output.schema) : undefined;
  const call: LocalCall = { ...prepared, sampling: samplingOf(state, request) };
  const decoding: FreeDecoding = { generated: [], tokenProbabilities: [], runningText: '', finishReason: 'length', stopText: undefined };
  await decodeFree(call, pending, grammar, stopTriggerTexts(state.nodeLlamaCpp, stopTriggers, grammar !== undefined), maxTokens, decoding);
  call.profile.generatedTokens += decoding.generated.length;
  let text = state.model.detokenize(decoding.generated);
  if (decoding.stopText !== undefined) {
    const cut = text.lastIndexOf(decoding.stopText);
    if (cut >= 0) text = text.slice(0, cut);
  }
  if (grammar) text = text.trimEnd();
  return { text, finishReason: decoding.finishReason, ...(call.wantProbabilities ? { tokenProbabilities: decoding.tokenProbabilities } : {}) };
}

async function decodeFree(
  call: LocalCall,
  pending: Token[],
  grammar: import('node-llama-cpp').LlamaGrammar | undefined,
  stopTexts: readonly string[],
  maxTokens: number,
  decoding: FreeDecoding,
): Promise<void> {
  const { state, profile } = call;
  const { model } = state;
  const grammarEvaluationState = grammar ? new state.nodeLlamaCpp.LlamaGrammarEvaluationState({ model, grammar }) : undefined;
  const longestStop = stopTexts.reduce((longest, text) => Math.max(longest, text.length), 0);
  const { generated } = decoding;
  const clock = stageClock();
  const iterator = call.sequence.evaluateWithMetadata(
    pending,
    // Typed as always-on so `output.probabilities` is visible; it is undefined when not asked for.
    { probabilities: call.wantProbabilities } as { readonly probabilities: true },
    { ...call.sampling, grammarEvaluationState, yieldEogToken: true },
  );
  for await (const output of iterator) {
    if (generated.length === 0) profile.promptSeconds += clock.lap();
    else profile.decodeSeconds += clock.lap();
    throwIfAborted(call.signal);
    const token = output.token;
    if (model.isEogToken(token)) {
      decoding.finishReason = 'stop';
      break;
    }
    generated.push(token);
    const pieceText = model.detokenize([token], true);
    if (call.wantProbabilities && output.probabilities) {
      decoding.tokenProbabilities.push(toTokenProbability(model, token, pieceText, output.probabilities, call.topAlternatives, call.sampling.temperature));
    }
    decoding.runningText += pieceText;
    let closed = false;
    if (grammar && /[}\]]/.test(pieceText)) {
      // A closed top-level object or array cannot grow: stop without the grammar's trailing newlines.
      const candidate = model.detokenize(generated).trimEnd();
      closed = /[}\]]$/.test(candidate) && safeParseJson(candidate).ok;
    }
    if (!closed && longestStop > 0) {
      const tail = decoding.runningText.slice(-(longestStop + pieceText.length));
      decoding.stopText = stopTexts.find((text) => tail.includes(text));
    }
    profile.ownSeconds += clock.lap();
    if (closed || decoding.stopText !== undefined) {
      decoding.finishReason = 'stop';
      break;
    }
    if (generated.length >= maxTokens) break;
  }
}

/** What field-by-field decoding has written so far, and the tokens the next step evaluates first. */
interface FieldDecoding {
  text: string;
  pending: Token[];
  tokenProbabilities: TokenProbability[];
}

/**
 * Per-criterion verdict shapes (`{"explanation": string, "criteria_met": boolean}`, a `choice`
 * string, or the verdict alone) decoded one value at a time. The JSON around the values has
 * no alternative, so the judge writes it and evaluates it with the next batch (a fraction of
 * a decode step per token); a boolean is one step that reads the logits of the tokens that
 * can spell `true` or `false`; a string is sampled under the grammar of that value alone and
 * ends where its closing quote makes it whole. So a reply costs its free tokens plus one per
 * boolean, not one step per character of JSON.
 */
async function generateFieldByField(prepared: PreparedCall, promptTokens: Token[], fields: readonly ReplyField[], maxTokens: number): Promise<PartialReply> {
  const call: LocalCall = { ...prepared, sampling: samplingOf(prepared.state, prepared.request) };
  const { profile, wantProbabilities } = call;
  const pieces = forcedReplyPieces(fields);
  const choose = seededRandom(call.sampling.seed);
  const decoding: FieldDecoding = { text: '', pending: [...promptTokens], tokenProbabilities: [] };
  const probabilities = () => (wantProbabilities ? { tokenProbabilities: decoding.tokenProbabilities } : {});
  let firstStep = true;
  let budget = maxTokens;
  for (const [index, field] of fields.entries()) {
    force(call, decoding, pieces[index]);
    if (field.kind === 'boolean') {
      const clock = stageClock();
      const verdict = await chooseBoolean(call, decoding.pending, choose);
      if (firstStep) profile.promptSeconds += clock.lap();
      else profile.verdictSeconds += clock.lap();
      firstStep = false;
      profile.generatedTokens += 1;
      budget -= 1;
      decoding.text += verdict.word;
      if (wantProbabilities) decoding.tokenProbabilities.push({ token: verdict.word, logprob: verdict.logprob, top: verdict.top });
      // What follows the chosen token is forced, as the grammar would force it; the next batch evaluates the whole word.
      decoding.pending = call.state.model.tokenize(verdict.word);
      profile.ownSeconds += clock.lap();
      continue;
    }
    const value = await generateValue(call, decoding.pending, field.schema, budget, firstStep);
    firstStep = false;
    budget -= value.tokens.length;
    decoding.text += value.text;
    decoding.tokenProbabilities.push(...value.tokenProbabilities);
    if (!value.complete) {
      // Out of tokens (or the model ended) inside a value: the partial text is what the parser sees, and it refuses it.
      return { text: decoding.text, finishReason: value.ended ? 'stop' : 'length', ...probabilities() };
    }
    // The last sampled token has not been evaluated yet: it leads the next batch.
    decoding.pending = [value.tokens[value.tokens.length - 1]];
  }
  force(call, decoding, pieces[fields.length]);
  return { text: decoding.text, finishReason: 'stop', ...probabilities() };
}

/** Writes reply text the judge forces (JSON keys and punctuation), to be evaluated with the next batch. */
function force(call: LocalCall, decoding: FieldDecoding, piece: string): void {
  const tokens = call.state.model.tokenize(piece);
  decoding.pending.push(...tokens);
  call.profile.forcedTokens += tokens.length;
  decoding.text += piece;
  // Forced text has one alternative, itself, with probability 1.
  if (call.wantProbabilities) decoding.tokenProbabilities.push({ token: piece, logprob: 0, top: [{ token: piece, logprob: 0 }] });
}

interface DecodedValue {
  tokens: Token[];
  text: string;
  complete: boolean;
  ended: boolean;
  tokenProbabilities: TokenProbability[];
}

/** One value under the grammar of its own schema, sampled until it is whole JSON. */
async function generateValue(call: LocalCall, pending: Token[], schema: Record<string, unknown>, budget: number, firstStep: boolean): Promise<DecodedValue> {
  const { state, profile, sampling, wantProbabilities } = call;
  const { model } = state;
  const grammar = await grammarFor(state.grammars, schema);
  const grammarEvaluationState = new state.nodeLlamaCpp.LlamaGrammarEvaluationState({ model, grammar });
  const tokens: Token[] = [];
  const tokenProbabilities: TokenProbability[] = [];
  let text = '';
  const clock = stageClock();
  const iterator = call.sequence.evaluateWithMetadata(pending, { probabilities: wantProbabilities } as { readonly probabilities: true }, {
    ...sampling,
    grammarEvaluationState,
    yieldEogToken: true,
  });
  for await (const output of iterator) {
    if (tokens.length === 0 && firstStep) profile.promptSeconds += clock.lap();
    else profile.decodeSeconds += clock.lap();
    throwIfAborted(call.signal);
    if (model.isEogToken(output.token)) {
      profile.generatedTokens += tokens.length;
      return { tokens, text, complete: false, ended: true, tokenProbabilities };
    }
    tokens.push(output.token);
    const pieceText = model.detokenize([output.token], true);
    if (wantProbabilities && output.probabilities) {
      tokenProbabilities.push(toTokenProbability(model, output.token, pieceText, output.probabilities, call.topAlternatives, sampling.temperature));
    }
    // A string is whole once a closing quote makes the text parse; until then only a quote can end it.
    let complete = false;
    if (pieceText.includes('"')) {
      text = model.detokenize(tokens);
      const parsed = safeParseJson(text.trim());
      complete = parsed.ok && typeof parsed.value === 'string';
    }
    profile.ownSeconds += clock.lap();
    if (complete || tokens.length >= budget) {
      profile.generatedTokens += tokens.length;
      return { tokens, text: model.detokenize(tokens), complete, ended: false, tokenProbabilities };
    }
  }
  profile.generatedTokens += tokens.length;
  return { tokens, text: model.detokenize(tokens), complete: false, ended: true, tokenProbabilities };
}

/**
 * The texts that end a reply. Special-token triggers (EOS) are already handled as end-of-generation
 * tokens; the rest are matched on the decoded text.
 */
function stopTriggerTexts(nodeLlamaCpp: NodeLlamaCpp, triggers: readonly LlamaText[], hasGrammar: boolean): string[] {
  const texts = new Set<string>();
  for (const trigger of triggers) {
    let text = '';
    let usable = true;
    for (const value of trigger.values) {
      if (typeof value === 'string') text += value;
      else if (value instanceof nodeLlamaCpp.SpecialTokensText) text += value.value;
      else usable = false;
    }
    if (usable && text.length > 0) texts.add(text);
  }
  if (hasGrammar) texts.add(grammarEndTrigger);
  return [...texts];
}

/**
 * Per-token log-probabilities from node-llama-cpp's sampling distribution. They are taken
 * after the grammar mask (tokens the grammar forbids have probability 0 and are left out), so
 * they are the model's probabilities renormalised over the allowed tokens; the ratio between
 * two allowed tokens (say `t` and `f` where a boolean starts) is the model's own. Sampling at a
 * temperature T reports p^(1/T)-tempered values; we undo that (p_i ∝ q_i^T) so the numbers do
 * not depend on the temperature used to draw the reply.
 */
function toTokenProbability(model: LlamaModel, token: Token, tokenText: string, probabilities: Map<Token, number>, top: number, temperature: number): TokenProbability {
  let normaliser = 1;
  const untemper = temperature > 0 && temperature !== 1;
  if (untemper) {
    normaliser = 0;
    for (const probability of probabilities.values()) if (probability > 0) normaliser += probability ** temperature;
  }
  const logOf = (probability: number) => {
    const value = untemper ? probability ** temperature / normaliser : probability;
    return value > 0 ? Math.log(value) : Math.log(Number.MIN_VALUE);
  };
  const alternatives: ListedAlternative[] = [];
  for (const [candidate, probability] of probabilities) {
    if (alternatives.length >= top || !(probability > 0)) break;
    alternatives.push({ token: model.detokenize([candidate], true), logprob: logOf(probability), identity: String(candidate) });
  }
  return { token: tokenText, logprob: logOf(probabilities.get(token) ?? 0), top: mergeAlikeAlternatives(alternatives) };
}
