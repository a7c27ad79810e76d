/**
 * Judge that runs a GGUF model in-process through llama.cpp (node-llama-cpp), so grading
 * works on a laptop with nothing else installed.
 *
 * One model, one context with `sequences` sequences; each call borrows a sequence, keeps the
 * longest prefix of tokens it shares with the sequence's previous prompt (that part of the
 * KV cache is exactly what a fresh evaluation would compute), erases the rest and generates.
 * Nothing else carries over between calls: no chat history, no sampler or grammar state.
 * Structured output is enforced with a grammar built from the request's JSON schema, so
 * every finished reply parses. Prompts that do not fit are refused up front (never shifted).
 */
import path from 'node:path';
import { RubricateError } from '../../errors.js';
import { canonicalJson, safeParseJson } from '../../util/json.js';
import { seededRandom } from '../../util/random.js';
import type { ChatMessage, CompleteOptions, Judge, JudgeProvenance, JudgeReply, JudgeRequest, TokenProbability } from '../types.js';
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
  /** CPU threads for evaluation; default the physical core count minus one (at least 1). */
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
  /** Token count of plain text in this model's vocabulary. */
  countTextTokens(text: string): number;
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
  // llama.cpp's own default is at least 4 threads; on small machines that oversubscribes badly.
  // One core is left for Node's event loop and the HTTP/IO work around inference: on a
  // 2-core machine 2 threads measured 100× slower than 1 (threads spin-waiting on each other).
  const threads = options.threads ?? Math.max(1, llama.cpuMathCores - 1);

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
  /** Token ids a `true`/`false` value can start with (computed on the first verdict-only call). */
  let verdictTokenIds: Set<Token> | undefined;
  const inFlight = new Set<Promise<unknown>>();
  // Seeds for calls that bring none: distinct per call, and the same sequence on every run.
  const unseededCalls = seededRandom(0x5eed);
  let closed = false;

  const provenance: JudgeProvenance = {
    id: options.id ?? `gguf:${options.model}`,
    model: path.basename(modelPath),
    baseUrl: modelPath,
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
    const state = contextText(request.messages);
    const promptTokens = state.contextText.tokenize(model.tokenizer);
    const capacity = sequence.contextSize;
    if (request.maxTokens !== undefined && (!Number.isInteger(request.maxTokens) || request.maxTokens < 1)) {
      throw new RubricateError('JUDGE_REQUEST_REJECTED', 'maxTokens must be a positive integer', { field: 'maxTokens' });
    }
    const maxTokens = request.maxTokens ?? capacity - promptTokens.length;
    if (promptTokens.length + maxTokens > capacity || maxTokens < 1) {
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

    if (request.output && isVerdictOnlySchema(request.output.schema)) {
      return generateVerdictOnly(sequence, promptTokens, reused, request, signal);
    }
    const grammar = request.output ? await grammarFor(request.output.schema) : undefined;
    const grammarEvaluationState = grammar ? new nodeLlamaCpp.LlamaGrammarEvaluationState({ model, grammar }) : undefined;
    const temperature = Math.max(0, request.temperature ?? 0);
    const wantProbabilities = request.logprobs !== undefined;
    const topAlternatives = Math.max(0, Math.floor(request.logprobs?.top ?? 0));
    const stopTexts = stopTriggerTexts(nodeLlamaCpp, state.stopGenerationTriggers, grammar !== undefined);
    const longestStop = stopTexts.reduce((longest, text) => Math.max(longest, text.length), 0);

    const generated: Token[] = [];
    const tokenProbabilities: TokenProbability[] = [];
    let runningText = '';
    let finishReason: 'stop' | 'length' = 'length';
    let stopText: string | undefined;

    const iterator = sequence.evaluateWithMetadata(
      promptTokens.slice(reused),
      // Typed as always-on so `output.probabilities` is visible; it is undefined when not asked for.
      { probabilities: wantProbabilities } as { readonly probabilities: true },
      {
        temperature,
        // Plain temperature sampling, as the chat-completions APIs do (no top-k/top-p cut).
        topK: 0,
        topP: 1,
        minP: 0,
        // node-llama-cpp's fallback seed is the current second, which would repeat within a second.
        seed: request.seed ?? Math.floor(unseededCalls() * 2 ** 32),
        grammarEvaluationState,
        yieldEogToken: true,
      },
    );
    for await (const output of iterator) {
      throwIfAborted(signal);
      const token = output.token;
      if (model.isEogToken(token)) {
        finishReason = 'stop';
        break;
      }
      generated.push(token);
      const pieceText = model.detokenize([token], true);
      if (wantProbabilities && output.probabilities) {
        tokenProbabilities.push(toTokenProbability(model, token, pieceText, output.probabilities, topAlternatives, temperature));
      }
      runningText += pieceText;
      if (grammar && /[}\]]/.test(pieceText)) {
        // A closed top-level object or array cannot grow: stop without the grammar's trailing newlines.
        const candidate = model.detokenize(generated).trimEnd();
        if (/[}\]]$/.test(candidate) && safeParseJson(candidate).ok) {
          finishReason = 'stop';
          break;
        }
      }
      if (longestStop > 0) {
        const tail = runningText.slice(-(longestStop + pieceText.length));
        stopText = stopTexts.find((text) => tail.includes(text));
        if (stopText !== undefined) {
          finishReason = 'stop';
          break;
        }
      }
      if (generated.length >= maxTokens) break;
    }

    let text = model.detokenize(generated);
    if (stopText !== undefined) {
      const cut = text.lastIndexOf(stopText);
      if (cut >= 0) text = text.slice(0, cut);
    }
    if (grammar) text = text.trimEnd();
    return {
      text,
      usage: { inputTokens: promptTokens.length, outputTokens: generated.length, cachedInputTokens: reused },
      finishReason,
      ...(wantProbabilities ? { tokenProbabilities } : {}),
    };
  }

  /**
   * A reply schema that is only `{"criteria_met": boolean}` leaves the model one free choice, so
   * the forced text up to the value joins the prompt (evaluated in the same batch, which costs
   * a fraction of a decode step per token) and a single decode step picks `true` or `false`:
   * one generated token per criterion instead of one per character of JSON.
   */
  async function generateVerdictOnly(sequence: LlamaContextSequence, promptTokens: Token[], reused: number, request: JudgeRequest, signal: AbortSignal): Promise<JudgeReply> {
    const forcedTokens = model.tokenize(verdictOnlyPrefix);
    const capacity = sequence.contextSize;
    if (promptTokens.length + forcedTokens.length + 1 > capacity) {
      throw new RubricateError('JUDGE_CONTEXT_OVERFLOW', `prompt of ${promptTokens.length} tokens does not fit the context of ${capacity} tokens per sequence`, {
        promptTokens: promptTokens.length,
        contextSize: capacity,
      });
    }
    const iterator = sequence.evaluateWithMetadata([...promptTokens.slice(reused), ...forcedTokens], { probabilities: true }, { temperature: 0, topK: 0, topP: 1, minP: 0 });
    let choice: { token: Token; text: string; probability: number } | undefined;
    const alternatives: TokenProbability['top'] = [];
    const topAlternatives = Math.max(0, Math.floor(request.logprobs?.top ?? 0));
    let allowedMass = 0;
    for await (const output of iterator) {
      throwIfAborted(signal);
      // Greedy over the tokens a grammar would allow here: non-empty prefixes of `true` or `false`.
      // Which ids those are is worked out once per model (one pass over the vocabulary).
      if (verdictTokenIds === undefined) {
        verdictTokenIds = new Set();
        for (const token of output.probabilities.keys()) {
          const trimmed = model.detokenize([token], true).trimStart();
          if (trimmed.length > 0 && ('true'.startsWith(trimmed) || 'false'.startsWith(trimmed))) verdictTokenIds.add(token);
        }
      }
      for (const [token, probability] of output.probabilities) {
        if (!verdictTokenIds.has(token)) continue;
        const text = model.detokenize([token], true);
        allowedMass += probability;
        if (alternatives.length < topAlternatives) alternatives.push({ token: text, logprob: Math.log(Math.max(probability, Number.MIN_VALUE)) });
        if (choice === undefined || probability > choice.probability) choice = { token, text, probability };
      }
      break;
    }
    if (choice === undefined) throw new RubricateError('JUDGE_SERVER_ERROR', 'local llama.cpp inference gave no probability to true or false at the verdict');
    // Renormalised over the allowed tokens seen, as a grammar-constrained distribution is.
    const normalised = alternatives.map((alternative) => ({ token: alternative.token, logprob: alternative.logprob - Math.log(allowedMass) }));
    return {
      text: `${verdictOnlyPrefix}${choice.text.trimStart().startsWith('t') ? 'true' : 'false'}}`,
      usage: { inputTokens: promptTokens.length + forcedTokens.length, outputTokens: 1, cachedInputTokens: reused },
      finishReason: 'stop',
      ...(request.logprobs
        ? {
            tokenProbabilities: [
              // The forced prefix had no alternative: probability 1.
              { token: verdictOnlyPrefix, logprob: 0, top: [] },
              // The chosen token may be a prefix (`t`); what follows it is forced, as the grammar would force it.
              { token: choice.text.trimStart().startsWith('t') ? 'true' : 'false', logprob: Math.log(choice.probability) - Math.log(allowedMass), top: normalised },
              { token: '}', logprob: 0, top: [] },
            ],
          }
        : {}),
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
    capabilities: { images: false, maxConcurrency: sequences },
    contextSize: context.contextSize,
    threads,
    chatWrapperName: chatWrapper.wrapperName,
    renderPrompt: (messages) => model.detokenize(contextText(messages).contextText.tokenize(model.tokenizer), true),
    promptTokenIds: (messages) => contextText(messages).contextText.tokenize(model.tokenizer),
    countTextTokens: (text) => model.tokenize(text).length,
    complete,
    close,
  };
}

const verdictOnlyPrefix = '{"criteria_met": ';

/** `{type: object, properties: {criteria_met: {type: boolean}}}` and nothing else. */
function isVerdictOnlySchema(schema: Record<string, unknown>): boolean {
  const properties = schema.properties;
  if (schema.type !== 'object' || properties === null || typeof properties !== 'object') return false;
  const names = Object.keys(properties);
  const verdict = (properties as Record<string, unknown>).criteria_met as Record<string, unknown> | undefined;
  return names.length === 1 && names[0] === 'criteria_met' && verdict?.type === 'boolean';
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
  const alternatives: TokenProbability['top'] = [];
  for (const [candidate, probability] of probabilities) {
    if (alternatives.length >= top || !(probability > 0)) break;
    alternatives.push({ token: model.detokenize([candidate], true), logprob: logOf(probability) });
  }
  return { token: tokenText, logprob: logOf(probabilities.get(token) ?? 0), top: alternatives };
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
