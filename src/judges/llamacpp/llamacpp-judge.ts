/**
 * Judge that runs a GGUF model in-process through llama.cpp (node-llama-cpp), so grading
 * works on a laptop with nothing else installed.
 *
 * One model, one context with `sequences` sequences; each call borrows a sequence, keeps the
 * longest prefix of tokens it shares with the sequence's previous prompt (that part of the
 * KV cache is exactly what a fresh evaluation would compute), erases the rest and generates.
 * Nothing else carries over between calls: no chat history, no sampler or grammar state.
 * Structured output is enforced with grammars built from the request's JSON schema, so every
 * finished reply parses: per-criterion verdict shapes value by value (the JSON around the
 * values forced, each value under its own grammar), anything else under one grammar for the
 * whole reply. Prompts that do not fit are refused up front (never shifted).
 */
import os from 'node:os';
import path from 'node:path';
import { RubricateError } from '../../errors.js';
import { isRecord } from '../../util/is-record.js';
import { canonicalJson, safeParseJson } from '../../util/json.js';
import { seededRandom, type RandomSource } from '../../util/random.js';
import type { ChatMessage, CompleteOptions, Judge, JudgeProvenance, JudgeReply, JudgeRequest, TokenProbability } from '../types.js';
import { mergeAlikeAlternatives, type ListedAlternative } from '../token-alternatives.js';
import { chatWrapperFor } from './chat-wrapper.js';
import { toGrammarJsonSchema } from './grammar-schema.js';
import { resolveModelReference, type DownloadProgress } from './model-file.js';
import { ResourcePool } from './pool.js';
import { getSharedLlama, loadNodeLlamaCpp } from './runtime.js';

type NodeLlamaCpp = typeof import('node-llama-cpp');
type LlamaModel = import('node-llama-cpp').LlamaModel;
type LlamaContext = import('node-llama-cpp').LlamaContext;
type LlamaContextSequence = import('node-llama-cpp').LlamaContextSequence;
type LlamaGrammar = import('node-llama-cpp').LlamaGrammar;
type ChatWrapper = import('node-llama-cpp').ChatWrapper;
type ChatHistoryItem = import('node-llama-cpp').ChatHistoryItem;
type Token = import('node-llama-cpp').Token;

export interface LlamaCppJudgeOptions {
  /** A GGUF file path, or a model URI such as `hf:USER/REPO:QUANT` (resolved into `cacheDirectory`). */
  model: string;
  /** CPU threads for evaluation; default {@link defaultLocalThreads} (the math cores other work leaves free). */
  threads?: number;
  /** Parallel sequences in the context (the judge's `capabilities.maxConcurrency`); default 1. */
  sequences?: number;
  /** Tokens per sequence; default the model's trained context, at most 8192. */
  contextSize?: number;
  cacheDirectory?: string;
  /**
   * Keep the KV cache of the longest prompt prefix a sequence shares with its previous call
   * (default true). Our prompts put what an item's criteria share first, so each criterion
   * after the first evaluates only its own tail. Off only to measure what reuse saves.
   */
  reusePrefix?: boolean;
  /** Provenance id; default `gguf:` + `model`. */
  id?: string;
  onDownloadProgress?: DownloadProgress;
  /** Called after each completed call with where its time went (`bench-local`'s per-stage profile). */
  onInference?: (profile: InferenceProfile) => void;
}

/**
 * Where one call's time went. Seconds are wall time inside the judge; `promptSeconds` is the
 * first evaluation step (the prompt tokens not served from the KV cache, any forced reply text
 * before the first free value, and the first token's sampling), so it is what prefill costs.
 */
export interface InferenceProfile {
  /** Prompt tokens served from the sequence's KV cache. */
  reusedTokens: number;
  /** Prompt tokens evaluated. */
  promptTokens: number;
  /** Reply text the judge wrote itself (JSON keys and punctuation), evaluated like prompt text. */
  forcedTokens: number;
  /** Tokens the model chose (free values, one per boolean). */
  generatedTokens: number;
  /** Chat template rendering, tokenizing, prefix comparison and KV erasure. */
  prepareSeconds: number;
  promptSeconds: number;
  /** Decode steps after the first: evaluation, sampling and grammar, as llama.cpp runs them. */
  decodeSeconds: number;
  /** Steps that read a boolean's logits (their forced text evaluated in the same batch). */
  verdictSeconds: number;
  /** Our own per-token work: detokenizing, completeness checks, probability maps. */
  ownSeconds: number;
}

export interface LlamaCppJudge extends Judge {
  readonly capabilities: Judge['capabilities'] & { readonly maxConcurrency: number };
  /** Tokens each sequence holds (prompt + reply must fit). */
  readonly contextSize: number;
  readonly threads: number;
  /** node-llama-cpp chat wrapper that renders the messages, e.g. `ChatML`. */
  readonly chatWrapperName: string;
  /** The prompt exactly as the model sees it (special tokens written out). */
  renderPrompt(messages: ChatMessage[]): string;
  /** Token ids of the prompt as the model evaluates it (for projections without generating). */
  promptTokenIds(messages: ChatMessage[]): readonly number[];
  close(): Promise<void>;
}

/** Cap on the default context: judge prompts rarely need more, and KV memory grows with it. */
const defaultMaxContextSize = 8192;
const grammarCacheLimit = 32;
/** node-llama-cpp's JSON grammars end with four newlines; stop there if a reply gets that far. */
const grammarEndTrigger = '\n\n\n\n';

interface SequenceSlot {
  sequence: LlamaContextSequence;
}

export async function createLlamaCppJudge(options: LlamaCppJudgeOptions): Promise<LlamaCppJudge> {
  const sequences = options.sequences ?? 1;
  if (!Number.isInteger(sequences) || sequences < 1) throw new RubricateError('CONFIG_INVALID', 'sequences must be a positive integer', { field: 'sequences' });
  if (options.threads !== undefined && (!Number.isInteger(options.threads) || options.threads < 1)) {
    throw new RubricateError('CONFIG_INVALID', 'threads must be a positive integer', { field: 'threads' });
  }
  if (options.contextSize !== undefined && (!Number.isInteger(options.contextSize) || options.contextSize < 16)) {
    throw new RubricateError('CONFIG_INVALID', 'contextSize must be an integer of at least 16', { field: 'contextSize' });
  }

  const nodeLlamaCpp = await loadNodeLlamaCpp();
  const modelPath = await resolveModelReference(options.model, {
    cacheDirectory: options.cacheDirectory,
    download: true,
    onProgress: options.onDownloadProgress,
  });
  const llama = await getSharedLlama();
  const threads = options.threads ?? defaultLocalThreads(llama.cpuMathCores, os.loadavg()[0]);

  let model: LlamaModel;
  try {
    model = await llama.loadModel({ modelPath });
  } catch (error) {
    throw new RubricateError('JUDGE_UNAVAILABLE', `could not load the GGUF model ${modelPath}: ${describe(error)}`, { file: modelPath }, { cause: error });
  }

  let context: LlamaContext;
  try {
    context = await model.createContext({
      contextSize: options.contextSize ?? Math.min(model.trainContextSize || defaultMaxContextSize, defaultMaxContextSize),
      sequences,
      threads,
    });
  } catch (error) {
    await model.dispose().catch(() => undefined);
    throw new RubricateError('JUDGE_UNAVAILABLE', `could not create a llama.cpp context for ${modelPath}: ${describe(error)}`, { file: modelPath }, { cause: error });
  }

  const chatWrapper: ChatWrapper = chatWrapperFor(nodeLlamaCpp, model);
  const slots: SequenceSlot[] = [];
  for (let index = 0; index < sequences; index += 1) {
    slots.push({
      sequence: context.getSequence({
        // Safety net: the up-front size check means this never runs; if it did, truncating the
        // prompt silently would corrupt the verdict, so fail the call instead.
        contextShift: {
          strategy: () => {
            throw new RubricateError('JUDGE_CONTEXT_OVERFLOW', 'the sequence ran out of context');
          },
        },
      }),
    });
  }
  const pool = new ResourcePool(slots);
  const grammars = new Map<string, LlamaGrammar>();
  /** Token ids a `true`/`false` value can start with (computed on the first verdict). */
  let verdictTokenIds: Set<Token> | undefined;
  /** Those tokens' logits raised above every other token's, for verdicts read without probabilities. */
  let verdictBias: import('node-llama-cpp').TokenBias | undefined;
  const inFlight = new Set<Promise<unknown>>();
  // Seeds for calls that bring none: distinct per call, and the same sequence on every run.
  const unseededCalls = seededRandom(0x5eed);
  let closed = false;

  const provenance: JudgeProvenance = {
    id: options.id ?? `gguf:${options.model}`,
    model: path.basename(modelPath),
    baseUrl: modelPath,
    // Replies decoded value by value differ in their JSON spacing (and can differ in a sampled
    // token) from the whole-reply grammar's: cached replies of the two never mix.
    variant: 'decoding:field-by-field',
  };

  function contextText(messages: ChatMessage[]) {
    const history: ChatHistoryItem[] = messages.map((message): ChatHistoryItem => {
      if (message.role === 'system') return { type: 'system', text: message.content };
      if (message.role === 'user') return { type: 'user', text: message.content };
      return { type: 'model', response: [message.content] };
    });
    // The reply always starts a new assistant turn; earlier assistant messages are history.
    history.push({ type: 'model', response: [] });
    return chatWrapper.generateContextState({ chatHistory: history });
  }

  async function grammarFor(schema: Record<string, unknown>): Promise<LlamaGrammar> {
    const key = canonicalJson(schema);
    const cached = grammars.get(key);
    if (cached) return cached;
    let grammar: LlamaGrammar;
    try {
      grammar = await llama.createGrammarForJsonSchema(toGrammarJsonSchema(schema) as Parameters<typeof llama.createGrammarForJsonSchema>[0]);
    } catch (error) {
      throw new RubricateError('JUDGE_REQUEST_REJECTED', `the output schema cannot be turned into a llama.cpp grammar: ${describe(error)}`, { field: 'output.schema' }, { cause: error });
    }
    if (grammars.size >= grammarCacheLimit) grammars.delete(grammars.keys().next().value as string);
    grammars.set(key, grammar);
    return grammar;
  }

  async function generate(slot: SequenceSlot, request: JudgeRequest, signal: AbortSignal): Promise<JudgeReply> {
    const { sequence } = slot;
    const clock = stageClock();
    const state = contextText(request.messages);
    const promptTokens = state.contextText.tokenize(model.tokenizer);
    const capacity = sequence.contextSize;
    if (request.maxTokens !== undefined && (!Number.isInteger(request.maxTokens) || request.maxTokens < 1)) {
      throw new RubricateError('JUDGE_REQUEST_REJECTED', 'maxTokens must be a positive integer', { field: 'maxTokens' });
    }
    const fields = request.output ? fieldByFieldShape(request.output.schema) : undefined;
    const forcedPieces = fields ? forcedReplyPieces(fields) : [];
    const forcedCount = forcedPieces.reduce((sum, piece) => sum + model.tokenize(piece).length, 0);
    const maxTokens = request.maxTokens ?? capacity - promptTokens.length - forcedCount;
    if (promptTokens.length + forcedCount + maxTokens > capacity || maxTokens < 1) {
      throw new RubricateError(
        'JUDGE_CONTEXT_OVERFLOW',
        `prompt of ${promptTokens.length} tokens plus ${request.maxTokens ?? 'at least 1'} reply token(s) does not fit the context of ${capacity} tokens per sequence` +
          ' (raise the context size or shorten the prompt)',
        { promptTokens: promptTokens.length, maxTokens: request.maxTokens, contextSize: capacity },
      );
    }

    // Keep the shared prefix; at least one prompt token must be evaluated to get the next-token logits.
    const previous = sequence.contextTokens;
    let reused = 0;
    const reusable = options.reusePrefix === false ? 0 : Math.min(previous.length, promptTokens.length - 1);
    while (reused < reusable && previous[reused] === promptTokens[reused]) reused += 1;
    if (sequence.nextTokenIndex > reused) await sequence.eraseContextTokenRanges([{ start: reused, end: sequence.nextTokenIndex }]);
    throwIfAborted(signal);
    const profile: InferenceProfile = {
      reusedTokens: reused,
      promptTokens: promptTokens.length - reused,
      forcedTokens: 0,
      generatedTokens: 0,
      prepareSeconds: clock.lap(),
      promptSeconds: 0,
      decodeSeconds: 0,
      verdictSeconds: 0,
      ownSeconds: 0,
    };
    const reply = fields
      ? await generateFieldByField(sequence, promptTokens.slice(reused), fields, maxTokens, request, profile, signal)
      : await generateFree(sequence, promptTokens.slice(reused), state.stopGenerationTriggers, maxTokens, request, profile, signal);
    options.onInference?.(profile);
    return { ...reply, usage: { inputTokens: promptTokens.length + profile.forcedTokens, outputTokens: profile.generatedTokens, cachedInputTokens: reused } };
  }

  /** Sampling settings shared by every step: plain temperature sampling, as the chat-completions APIs do (no top-k cut; top-p only when asked). */
  function samplingOf(request: JudgeRequest) {
    return {
      temperature: Math.max(0, request.temperature ?? 0),
      topK: 0,
      topP: request.topP ?? 1,
      minP: 0,
      // node-llama-cpp's fallback seed is the current second, which would repeat within a second.
      seed: request.seed ?? Math.floor(unseededCalls() * 2 ** 32),
    };
  }

  /** A reply with no schema, or a schema the field-by-field decoder does not take: one grammar over the whole reply. */
  async function generateFree(
    sequence: LlamaContextSequence,
    pending: Token[],
    stopTriggers: readonly import('node-llama-cpp').LlamaText[],
    maxTokens: number,
    request: JudgeRequest,
    profile: InferenceProfile,
    signal: AbortSignal,
  ): Promise<Omit<JudgeReply, 'usage'>> {
    const grammar = request.output ? await grammarFor(request.output.schema) : undefined;
    const grammarEvaluationState = grammar ? new nodeLlamaCpp.LlamaGrammarEvaluationState({ model, grammar }) : undefined;
    const sampling = samplingOf(request);
    const wantProbabilities = request.logprobs !== undefined;
    const topAlternatives = Math.max(0, Math.floor(request.logprobs?.top ?? 0));
    const stopTexts = stopTriggerTexts(nodeLlamaCpp, stopTriggers, grammar !== undefined);
    const longestStop = stopTexts.reduce((longest, text) => Math.max(longest, text.length), 0);

    const generated: Token[] = [];
    const tokenProbabilities: TokenProbability[] = [];
    let runningText = '';
    let finishReason: 'stop' | 'length' = 'length';
    let stopText: string | undefined;
    const clock = stageClock();
    const iterator = sequence.evaluateWithMetadata(
      pending,
      // Typed as always-on so `output.probabilities` is visible; it is undefined when not asked for.
      { probabilities: wantProbabilities } as { readonly probabilities: true },
      { ...sampling, grammarEvaluationState, yieldEogToken: true },
    );
    for await (const output of iterator) {
      if (generated.length === 0) profile.promptSeconds += clock.lap();
      else profile.decodeSeconds += clock.lap();
      throwIfAborted(signal);
      const token = output.token;
      if (model.isEogToken(token)) {
        finishReason = 'stop';
        break;
      }
      generated.push(token);
      const pieceText = model.detokenize([token], true);
      if (wantProbabilities && output.probabilities) {
        tokenProbabilities.push(toTokenProbability(model, token, pieceText, output.probabilities, topAlternatives, sampling.temperature));
      }
      runningText += pieceText;
      let closed = false;
      if (grammar && /[}\]]/.test(pieceText)) {
        // A closed top-level object or array cannot grow: stop without the grammar's trailing newlines.
        const candidate = model.detokenize(generated).trimEnd();
        closed = /[}\]]$/.test(candidate) && safeParseJson(candidate).ok;
      }
      if (!closed && longestStop > 0) {
        const tail = runningText.slice(-(longestStop + pieceText.length));
        stopText = stopTexts.find((text) => tail.includes(text));
      }
      profile.ownSeconds += clock.lap();
      if (closed || stopText !== undefined) {
        finishReason = 'stop';
        break;
      }
      if (generated.length >= maxTokens) break;
    }
    profile.generatedTokens += generated.length;

    let text = model.detokenize(generated);
    if (stopText !== undefined) {
      const cut = text.lastIndexOf(stopText);
      if (cut >= 0) text = text.slice(0, cut);
    }
    if (grammar) text = text.trimEnd();
    return { text, finishReason, ...(wantProbabilities ? { tokenProbabilities } : {}) };
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
  async function generateFieldByField(
    sequence: LlamaContextSequence,
    promptTokens: Token[],
    fields: readonly ReplyField[],
    maxTokens: number,
    request: JudgeRequest,
    profile: InferenceProfile,
    signal: AbortSignal,
  ): Promise<Omit<JudgeReply, 'usage'>> {
    const sampling = samplingOf(request);
    const wantProbabilities = request.logprobs !== undefined;
    const topAlternatives = Math.max(0, Math.floor(request.logprobs?.top ?? 0));
    const pieces = forcedReplyPieces(fields);
    const tokenProbabilities: TokenProbability[] = [];
    const choose = seededRandom(sampling.seed);
    let pending: Token[] = [...promptTokens];
    let text = '';
    let firstStep = true;
    let budget = maxTokens;
    const force = (piece: string) => {
      const tokens = model.tokenize(piece);
      pending.push(...tokens);
      profile.forcedTokens += tokens.length;
      text += piece;
      // Forced text has one alternative, itself, with probability 1.
      if (wantProbabilities) tokenProbabilities.push({ token: piece, logprob: 0, top: [{ token: piece, logprob: 0 }] });
    };

    for (const [index, field] of fields.entries()) {
      force(pieces[index]);
      if (field.kind === 'boolean') {
        const clock = stageClock();
        const verdict = await chooseBoolean(sequence, pending, sampling, wantProbabilities, topAlternatives, choose, signal);
        if (firstStep) profile.promptSeconds += clock.lap();
        else profile.verdictSeconds += clock.lap();
        firstStep = false;
        profile.generatedTokens += 1;
        budget -= 1;
        text += verdict.word;
        if (wantProbabilities) tokenProbabilities.push({ token: verdict.word, logprob: verdict.logprob, top: verdict.top });
        // What follows the chosen token is forced, as the grammar would force it; the next batch evaluates the whole word.
        pending = model.tokenize(verdict.word);
        profile.ownSeconds += clock.lap();
        continue;
      }
      const value = await generateValue(sequence, pending, field.schema, budget, sampling, firstStep, topAlternatives, wantProbabilities, profile, signal);
      firstStep = false;
      budget -= value.tokens.length;
      text += value.text;
      tokenProbabilities.push(...value.tokenProbabilities);
      if (!value.complete) {
        // Out of tokens (or the model ended) inside a value: the partial text is what the parser sees, and it refuses it.
        return { text, finishReason: value.ended ? 'stop' : 'length', ...(wantProbabilities ? { tokenProbabilities } : {}) };
      }
      // The last sampled token has not been evaluated yet: it leads the next batch.
      pending = [value.tokens[value.tokens.length - 1]];
    }
    force(pieces[fields.length]);
    return { text, finishReason: 'stop', ...(wantProbabilities ? { tokenProbabilities } : {}) };
  }

  /** One value under the grammar of its own schema, sampled until it is whole JSON. */
  async function generateValue(
    sequence: LlamaContextSequence,
    pending: Token[],
    schema: Record<string, unknown>,
    budget: number,
    sampling: ReturnType<typeof samplingOf>,
    firstStep: boolean,
    topAlternatives: number,
    wantProbabilities: boolean,
    profile: InferenceProfile,
    signal: AbortSignal,
  ): Promise<{ tokens: Token[]; text: string; complete: boolean; ended: boolean; tokenProbabilities: TokenProbability[] }> {
    const grammar = await grammarFor(schema);
    const grammarEvaluationState = new nodeLlamaCpp.LlamaGrammarEvaluationState({ model, grammar });
    const tokens: Token[] = [];
    const tokenProbabilities: TokenProbability[] = [];
    let text = '';
    const clock = stageClock();
    const iterator = sequence.evaluateWithMetadata(pending, { probabilities: wantProbabilities } as { readonly probabilities: true }, {
      ...sampling,
      grammarEvaluationState,
      yieldEogToken: true,
    });
    for await (const output of iterator) {
      if (tokens.length === 0 && firstStep) profile.promptSeconds += clock.lap();
      else profile.decodeSeconds += clock.lap();
      throwIfAborted(signal);
      if (model.isEogToken(output.token)) {
        profile.generatedTokens += tokens.length;
        return { tokens, text, complete: false, ended: true, tokenProbabilities };
      }
      tokens.push(output.token);
      const pieceText = model.detokenize([output.token], true);
      if (wantProbabilities && output.probabilities) {
        tokenProbabilities.push(toTokenProbability(model, output.token, pieceText, output.probabilities, topAlternatives, sampling.temperature));
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
   * Evaluates `pending` and picks `true` or `false` among the tokens that can start either word
   * (worked out once per model, from the first verdict's distribution: one pass over the
   * vocabulary): the most probable at temperature 0, else drawn from the tempered distribution
   * restricted to them. With probabilities asked for, the whole distribution is read and the
   * reported one is renormalised over those tokens, as a grammar-constrained one is; without,
   * the sampler does the choosing, with those tokens' logits raised far above every other
   * token's (the same choice, without copying a 150,000-entry distribution into JavaScript).
   */
  async function chooseBoolean(
    sequence: LlamaContextSequence,
    pending: Token[],
    sampling: ReturnType<typeof samplingOf>,
    withProbabilities: boolean,
    topAlternatives: number,
    random: RandomSource,
    signal: AbortSignal,
  ): Promise<{ word: 'true' | 'false'; logprob: number; top: TokenProbability['top'] }> {
    const wordOf = (text: string) => (text.trimStart().startsWith('t') ? 'true' : 'false');
    if (!withProbabilities && verdictTokenIds !== undefined) {
      verdictBias ??= [...verdictTokenIds].reduce((bias, token) => bias.set(token, { logit: verdictLogitBoost }), new nodeLlamaCpp.TokenBias(model.tokenizer));
      const iterator = sequence.evaluateWithMetadata(pending, {}, { ...sampling, tokenBias: verdictBias });
      for await (const output of iterator) {
        throwIfAborted(signal);
        if (!verdictTokenIds.has(output.token)) break;
        return { word: wordOf(model.detokenize([output.token], true)), logprob: 0, top: [] };
      }
      throw new RubricateError('JUDGE_SERVER_ERROR', 'local llama.cpp inference chose no token that spells true or false at the verdict');
    }
    const iterator = sequence.evaluateWithMetadata(pending, { probabilities: true }, { temperature: 0, topK: 0, topP: 1, minP: 0 });
    const allowed: Array<{ token: Token; text: string; probability: number }> = [];
    for await (const output of iterator) {
      throwIfAborted(signal);
      if (verdictTokenIds === undefined) {
        verdictTokenIds = new Set();
        for (const token of output.probabilities.keys()) {
          const trimmed = model.detokenize([token], true).trimStart();
          if (trimmed.length > 0 && ('true'.startsWith(trimmed) || 'false'.startsWith(trimmed))) verdictTokenIds.add(token);
        }
      }
      for (const [token, probability] of output.probabilities) {
        if (verdictTokenIds.has(token) && probability > 0) allowed.push({ token, text: model.detokenize([token], true), probability });
      }
      break;
    }
    if (allowed.length === 0) throw new RubricateError('JUDGE_SERVER_ERROR', 'local llama.cpp inference gave no probability to true or false at the verdict');
    allowed.sort((left, right) => right.probability - left.probability);
    const mass = allowed.reduce((sum, entry) => sum + entry.probability, 0);
    let chosen = allowed[0];
    if (sampling.temperature > 0) {
      const weights = allowed.map((entry) => entry.probability ** (1 / sampling.temperature));
      let draw = random() * weights.reduce((sum, weight) => sum + weight, 0);
      for (const [index, weight] of weights.entries()) {
        draw -= weight;
        chosen = allowed[index];
        if (draw <= 0) break;
      }
    }
    return {
      word: wordOf(chosen.text),
      logprob: Math.log(chosen.probability) - Math.log(mass),
      top: mergeAlikeAlternatives(allowed.slice(0, topAlternatives).map((entry) => ({ token: entry.text, logprob: Math.log(entry.probability) - Math.log(mass), identity: String(entry.token) }))),
    };
  }

  async function complete(request: JudgeRequest, { signal }: CompleteOptions): Promise<JudgeReply> {
    if (closed) throw new RubricateError('JUDGE_UNAVAILABLE', 'the local judge is closed');
    throwIfAborted(signal);
    let slot: SequenceSlot;
    try {
      slot = await pool.acquire(signal);
    } catch (error) {
      if (signal.aborted) throw abortError(signal);
      throw error;
    }
    const run = (async () => {
      try {
        return await generate(slot, request, signal);
      } catch (error) {
        throw toJudgeError(error, signal);
      } finally {
        pool.release(slot);
      }
    })();
    inFlight.add(run);
    try {
      return await run;
    } finally {
      inFlight.delete(run);
    }
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    pool.close();
    await Promise.allSettled([...inFlight]);
    await context.dispose().catch(() => undefined);
    await model.dispose().catch(() => undefined);
  }

  return {
    provenance,
    // Short explanations: the plan bench-local measured fastest that keeps a reason per verdict (docs/benchmarks.md).
    capabilities: { images: false, maxConcurrency: sequences, defaults: { explanation: 'short' }, embedded: true },
    contextSize: context.contextSize,
    threads,
    chatWrapperName: chatWrapper.wrapperName,
    renderPrompt: (messages) => model.detokenize(contextText(messages).contextText.tokenize(model.tokenizer), true),
    promptTokenIds: (messages) => contextText(messages).contextText.tokenize(model.tokenizer),
    complete,
    close,
  };
}

/** Far above any logit a model gives (tens at most), and small enough for float32 to keep the differences between the boosted tokens. */
const verdictLogitBoost = 1000;

type ReplyField = { name: string; kind: 'boolean' } | { name: string; kind: 'string'; schema: Record<string, unknown> };

/**
 * The fields of a reply schema that can be decoded one value at a time: an object whose
 * properties are all booleans or strings (a string enum included), in schema order (the order
 * the whole-reply grammar writes them). Anything else (numbers, nested values, open objects)
 * takes the whole-reply grammar.
 */
function fieldByFieldShape(schema: Record<string, unknown>): ReplyField[] | undefined {
  const properties = schema.properties;
  if (schema.type !== 'object' || !isRecord(properties)) return undefined;
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) return undefined;
  const fields: ReplyField[] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (!isRecord(property)) return undefined;
    const isStringEnum = Array.isArray(property.enum) && property.enum.length > 0 && property.enum.every((value) => typeof value === 'string');
    if (property.type === 'boolean' && property.enum === undefined && property.const === undefined) fields.push({ name, kind: 'boolean' });
    else if ((property.type === 'string' && property.const === undefined) || isStringEnum) fields.push({ name, kind: 'string', schema: property });
    else return undefined;
  }
  return fields.length > 0 ? fields : undefined;
}

/** The JSON the judge writes around the values: before each field's value, and the closing brace. */
function forcedReplyPieces(fields: readonly ReplyField[]): string[] {
  return [...fields.map((field, index) => `${index === 0 ? '{' : ', '}${JSON.stringify(field.name)}: `), '}'];
}

/** Laps of a monotonic clock, in seconds. */
function stageClock(): { lap(): number } {
  let last = process.hrtime.bigint();
  return {
    lap() {
      const now = process.hrtime.bigint();
      const seconds = Number(now - last) / 1e9;
      last = now;
      return seconds;
    },
  };
}

/**
 * llama.cpp threads when none are given: the math cores that other work leaves free by the
 * 1-minute load average at start-up. On an idle 2-core machine 2 threads run prefill and
 * decode about twice as fast as 1; with one core busy elsewhere, 2 threads decode 3× slower
 * than 1, because llama.cpp's threads wait on each other at every step (docs/benchmarks.md).
 */
export function defaultLocalThreads(mathCores: number, loadAverage: number): number {
  const busy = Number.isFinite(loadAverage) ? Math.floor(Math.max(0, loadAverage)) : 0;
  return Math.max(1, Math.min(mathCores, mathCores - busy));
}

/** {@link defaultLocalThreads} for this machine now. */
export async function defaultLocalThreadsNow(): Promise<number> {
  const llama = await getSharedLlama();
  return defaultLocalThreads(llama.cpuMathCores, os.loadavg()[0]);
}

/**
 * The texts that end a reply. Special-token triggers (EOS) are already handled as end-of-generation
 * tokens; the rest are matched on the decoded text.
 */
function stopTriggerTexts(nodeLlamaCpp: NodeLlamaCpp, triggers: readonly import('node-llama-cpp').LlamaText[], hasGrammar: boolean): string[] {
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

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function abortError(signal: AbortSignal): RubricateError {
  const reason: unknown = signal.reason;
  if (RubricateError.isInstance(reason)) return reason;
  return new RubricateError('JUDGE_TIMEOUT', `judge call aborted: ${reason instanceof Error ? reason.message : String(reason ?? 'aborted')}`);
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}

function toJudgeError(error: unknown, signal: AbortSignal): RubricateError {
  if (signal.aborted) return abortError(signal);
  if (RubricateError.isInstance(error)) return error;
  const message = describe(error);
  if (error instanceof Error && error.name === 'DisposedError') {
    return new RubricateError('JUDGE_UNAVAILABLE', `the local model was unloaded during the call: ${message}`, {}, { cause: error });
  }
  return new RubricateError('JUDGE_SERVER_ERROR', `local llama.cpp inference failed: ${message}`, {}, { cause: error });
}
