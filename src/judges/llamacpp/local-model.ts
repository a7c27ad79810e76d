/**
 * What the local judge's decoding shares: the loaded model and what it has worked out once
 * (grammars, the tokens that spell a verdict), one call's settings, and where its time went.
 */
import type { RandomSource } from '../../util/random.js';
import type { JudgeRequest } from '../types.js';
import type { GrammarCache } from './grammar.js';

type NodeLlamaCpp = typeof import('node-llama-cpp');
type LlamaModel = import('node-llama-cpp').LlamaModel;
type LlamaContextSequence = import('node-llama-cpp').LlamaContextSequence;
type ChatWrapper = import('node-llama-cpp').ChatWrapper;
type Token = import('node-llama-cpp').Token;

/**
 * Where one call's time went. Seconds are wall time inside the judge; `promptSeconds` is the
 * first evaluation step (the prompt tokens not served from the KV cache, any forced reply text
 * before the first free value, and the first token's sampling), so it is what prefill costs.
 */
export interface InferenceProfile {
  /** Prompt tokens served from the sequence's KV cache. */
  reusedTokens: number;
  /** Of those, tokens loaded from another sequence's saved state for this call (several sequences). */
  copiedTokens: number;
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

/** One loaded model and what its calls share. */
export interface LocalModelState {
  readonly nodeLlamaCpp: NodeLlamaCpp;
  readonly model: LlamaModel;
  readonly chatWrapper: ChatWrapper;
  readonly grammars: GrammarCache;
  /** Keep the KV cache of the prompt prefix a sequence shares with its previous call. */
  readonly reusePrefix: boolean;
  readonly onInference: ((profile: InferenceProfile) => void) | undefined;
  /** Seeds for calls that bring none: distinct per call, and the same sequence on every run. */
  readonly unseededCalls: RandomSource;
  /** Token ids a `true`/`false` value can start with (computed on the first verdict). */
  verdictTokenIds: Set<Token> | undefined;
  /** Those tokens' logits raised above every other token's, for verdicts read without probabilities. */
  verdictBias: import('node-llama-cpp').TokenBias | undefined;
}

/** Sampling settings shared by every step of a call. */
export interface Sampling {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  seed: number;
}

/** One call being decoded on one sequence. */
export interface LocalCall {
  readonly state: LocalModelState;
  readonly sequence: LlamaContextSequence;
  readonly request: JudgeRequest;
  readonly sampling: Sampling;
  readonly wantProbabilities: boolean;
  /** Alternatives reported per token position. */
  readonly topAlternatives: number;
  readonly profile: InferenceProfile;
  readonly signal: AbortSignal;
}

/** Laps of a monotonic clock, in seconds. */
export function stageClock(): { lap(): number } {
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
