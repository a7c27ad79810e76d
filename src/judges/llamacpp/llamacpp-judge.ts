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
 *
 * Files by concern: this one loads the model and answers calls; `generate.ts` decodes a reply,
 * `verdict-choice.ts` reads a boolean from its tokens' logits, `grammar.ts` holds the grammars
 * and the reply shapes decoded value by value, `local-model.ts` what they share.
 */
import os from 'node:os';
import path from 'node:path';
import { RubricateError } from '../../errors.js';
import { seededRandom } from '../../util/random.js';
import type { ChatMessage, CompleteOptions, Judge, JudgeProvenance, JudgeReply, JudgeRequest } from '../types.js';
import { chatWrapperFor } from './chat-wrapper.js';
import { contextText, generate, preparePrompt, type PreparedPrompt } from './generate.js';
import { abortError, describe, throwIfAborted, toJudgeError } from './local-errors.js';
import type { InferenceProfile, LocalModelState } from './local-model.js';
import { resolveModelReference, type DownloadProgress } from './model-file.js';
import { ResourcePool } from './pool.js';
import { PrefixSnapshots, sharedPrefixLength, type PrefixPlan } from './prefix-snapshots.js';
import { batchWhenAllQueued, type BatchingState } from './batching.js';
import { getSharedLlama, loadNodeLlamaCpp } from './runtime.js';

export type { InferenceProfile } from './local-model.js';

type Llama = import('node-llama-cpp').Llama;
type LlamaModel = import('node-llama-cpp').LlamaModel;
type LlamaContext = import('node-llama-cpp').LlamaContext;
type LlamaContextSequence = import('node-llama-cpp').LlamaContextSequence;

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

export interface LlamaCppJudge extends Judge {
  readonly capabilities: Judge['capabilities'] & { readonly maxConcurrency: number; readonly threads: number };
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

/**
 * Tokens per sequence when none are given: the model's trained context up to 8192 for one
 * sequence; with several, the KV cells of two such sequences shared out, but never under 4096
 * (a HealthBench prompt with its reply is under 2,100 tokens), since every sequence's cells are
 * allocated up front (4 sequences of the 4B model: about 2.4 GB, as 2 of 8192).
 */
export function defaultContextSize(trainContextSize: number, sequences: number): number {
  const cap = Math.min(trainContextSize || defaultMaxContextSize, defaultMaxContextSize);
  return sequences <= 1 ? cap : Math.min(cap, Math.max(4096, Math.floor((2 * defaultMaxContextSize) / sequences)));
}

interface SequenceSlot {
  sequence: LlamaContextSequence;
}

/** A loaded local judge: its model's state, its sequences, and the calls in flight (awaited on close). */
interface LocalJudgeState {
  readonly local: LocalModelState;
  readonly context: LlamaContext;
  readonly pool: ResourcePool<SequenceSlot>;
  /** Item prefixes shared between sequences (several sequences with prefix reuse only). */
  readonly snapshots: PrefixSnapshots | undefined;
  readonly batching: BatchingState;
  readonly inFlight: Set<Promise<unknown>>;
  closed: boolean;
}

/** A prefix is shared through a saved state only when it spares at least this many tokens of prefill. */
const minSharedPrefixTokens = 64;

function checkOptions(options: LlamaCppJudgeOptions): void {
  const sequences = options.sequences ?? 1;
  if (!Number.isInteger(sequences) || sequences < 1) throw new RubricateError('CONFIG_INVALID', 'sequences must be a positive integer', { field: 'sequences' });
  if (options.threads !== undefined && (!Number.isInteger(options.threads) || options.threads < 1)) {
    throw new RubricateError('CONFIG_INVALID', 'threads must be a positive integer', { field: 'threads' });
  }
  if (options.contextSize !== undefined && (!Number.isInteger(options.contextSize) || options.contextSize < 16)) {
    throw new RubricateError('CONFIG_INVALID', 'contextSize must be an integer of at least 16', { field: 'contextSize' });
  }
}

async function loadModelAndContext(llama: Llama, modelPath: string, options: LlamaCppJudgeOptions, threads: number, batching: BatchingState): Promise<{ model: LlamaModel; context: LlamaContext }> {
  let model: LlamaModel;
  try {
    model = await llama.loadModel({ modelPath });
  } catch (error) {
    throw new RubricateError('JUDGE_UNAVAILABLE', `could not load the GGUF model ${modelPath}: ${describe(error)}`, { file: modelPath }, { cause: error });
  }
  try {
    const context = await model.createContext({
      contextSize: options.contextSize ?? defaultContextSize(model.trainContextSize, options.sequences ?? 1),
      sequences: options.sequences ?? 1,
      threads,
      ...((options.sequences ?? 1) > 1 ? { batching: { dispatchSchedule: batchWhenAllQueued(batching) } } : {}),
    });
    return { model, context };
  } catch (error) {
    await model.dispose().catch(() => undefined);
    throw new RubricateError('JUDGE_UNAVAILABLE', `could not create a llama.cpp context for ${modelPath}: ${describe(error)}`, { file: modelPath }, { cause: error });
  }
}

function sequenceSlots(context: LlamaContext, sequences: number): SequenceSlot[] {
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
  return slots;
}

export async function createLlamaCppJudge(options: LlamaCppJudgeOptions): Promise<LlamaCppJudge> {
  checkOptions(options);
  const sequences = options.sequences ?? 1;
  const nodeLlamaCpp = await loadNodeLlamaCpp();
  const modelPath = await resolveModelReference(options.model, {
    cacheDirectory: options.cacheDirectory,
    download: true,
    onProgress: options.onDownloadProgress,
  });
  const llama = await getSharedLlama();
  const threads = options.threads ?? defaultLocalThreads(llama.cpuMathCores, os.loadavg()[0]);
  const batching: BatchingState = { decoding: 0, context: undefined };
  const { model, context } = await loadModelAndContext(llama, modelPath, options, threads, batching);
  batching.context = context;
  const local: LocalModelState = {
    nodeLlamaCpp,
    model,
    chatWrapper: chatWrapperFor(nodeLlamaCpp, model),
    grammars: { llama, grammars: new Map() },
    reusePrefix: options.reusePrefix !== false,
    onInference: options.onInference,
    unseededCalls: seededRandom(0x5eed),
    verdictTokenIds: undefined,
    verdictBias: undefined,
  };
  const snapshots = sequences > 1 && local.reusePrefix ? new PrefixSnapshots({ minSharedTokens: minSharedPrefixTokens, maxSnapshots: sequences + 1 }) : undefined;
  const state: LocalJudgeState = { local, context, pool: new ResourcePool(sequenceSlots(context, sequences)), snapshots, batching, inFlight: new Set(), closed: false };
  const provenance: JudgeProvenance = {
    id: options.id ?? `gguf:${options.model}`,
    model: path.basename(modelPath),
    baseUrl: modelPath,
    // Replies decoded value by value differ in their JSON spacing (and can differ in a sampled
    // token) from the whole-reply grammar's: cached replies of the two never mix.
    variant: 'decoding:field-by-field',
  };
  const promptTokenIds = (messages: ChatMessage[]) => contextText(local, messages).contextText.tokenize(model.tokenizer);
  return {
    provenance,
    // Short explanations: the plan bench-local measured fastest that keeps a reason per verdict (docs/benchmarks.md).
    capabilities: { images: false, maxConcurrency: sequences, threads, defaults: { explanation: 'short' }, embedded: true },
    contextSize: context.contextSize,
    threads,
    chatWrapperName: local.chatWrapper.wrapperName,
    renderPrompt: (messages) => model.detokenize(promptTokenIds(messages), true),
    promptTokenIds,
    complete: (request, callOptions) => complete(state, request, callOptions),
    close: () => close(state),
  };
}

async function complete(state: LocalJudgeState, request: JudgeRequest, { signal }: CompleteOptions): Promise<JudgeReply> {
  if (state.closed) throw new RubricateError('JUDGE_UNAVAILABLE', 'the local judge is closed');
  throwIfAborted(signal);
  let prompt: PreparedPrompt;
  try {
    prompt = preparePrompt(state.local, request);
  } catch (error) {
    throw toJudgeError(error, signal);
  }
  // The sequence whose KV cache already holds the longest part of this prompt.
  const preference = state.local.reusePrefix ? (slot: SequenceSlot) => sharedPrefixLength(slot.sequence.contextTokens, prompt.tokens) : undefined;
  let slot: SequenceSlot;
  try {
    slot = await state.pool.acquire(signal, preference);
  } catch (error) {
    if (signal.aborted) throw abortError(signal);
    throw error;
  }
  const run = runOnSequence(state, slot, request, prompt, signal);
  state.inFlight.add(run);
  try {
    return await run;
  } finally {
    state.inFlight.delete(run);
  }
}

async function runOnSequence(state: LocalJudgeState, slot: SequenceSlot, request: JudgeRequest, prompt: PreparedPrompt, signal: AbortSignal): Promise<JudgeReply> {
  let sharing: PrefixPlan | undefined;
  let decoding = false;
  try {
    sharing = await state.snapshots?.prepare(slot.sequence, prompt.tokens, signal);
    throwIfAborted(signal);
    state.batching.decoding += 1;
    decoding = true;
    return await generate(state.local, slot.sequence, request, prompt, signal, sharing);
  } catch (error) {
    throw toJudgeError(error, signal);
  } finally {
    if (decoding) state.batching.decoding -= 1;
    sharing?.abandon();
    state.pool.release(slot);
  }
}

async function close(state: LocalJudgeState): Promise<void> {
  if (state.closed) return;
  state.closed = true;
  state.pool.close();
  await Promise.allSettled([...state.inFlight]);
  state.snapshots?.close();
  await state.context.dispose().catch(() => undefined);
  await state.local.model.dispose().catch(() => undefined);
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
