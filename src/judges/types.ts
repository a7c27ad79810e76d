/**
 * The judge contract. A judge turns chat messages into a reply; it knows nothing about
 * rubrics, caching, retries or concurrency (the engine owns those). Failures are thrown
 * as RubricateError with a JUDGE_* code so the engine can decide whether to retry.
 */
import type { JudgeImage } from '../images/images.js';

import type { ModelLimits } from './profiles.js';
import type { ExplanationLength } from '../spec/run-spec.js';

export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  /** The text; an attached image stands in it as its placeholder ([image N: type, bytes, sha256]). */
  content: string;
  /**
   * Image content parts sent after the text (OpenAI image_url parts, Anthropic image blocks,
   * Gemini inline data). Only judges with `acceptsImages` get messages that carry them.
   */
  images?: JudgeImage[];
}

/** A JSON schema the reply must follow, with a name for servers that want one. */
export interface OutputSchema {
  name: string;
  schema: Record<string, unknown>;
}

export interface JudgeRequest {
  messages: ChatMessage[];
  /** Ask for structured output following this schema where the judge supports it. */
  output?: OutputSchema;
  temperature?: number;
  /** Nucleus sampling (the model under test's `top_p`; judges leave it to the server). */
  topP?: number;
  maxTokens?: number;
  seed?: number;
  /** Ask for token log-probabilities of the reply (top alternatives per position). */
  logprobs?: { top: number };
  /**
   * Where the part shared with other calls (an item's criteria) ends: `messages[message]`'s
   * first `characters` characters and everything before them. Judges with explicit prompt
   * caching (Anthropic) put a cache breakpoint there; the others ignore it.
   */
  sharedPrefix?: { message: number; characters: number };
  /**
   * The item and criteria a grading request asks about (per-criterion and batched grading set
   * it). Judges that call a model ignore it; the replay judge answers by it.
   */
  subject?: { item: string; criteria: string[] };
}

export interface TokenAlternative {
  token: string;
  logprob: number;
}

export interface TokenProbability {
  token: string;
  logprob: number;
  top: TokenAlternative[];
}

export interface JudgeUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens the server reports as served from its prefix cache. */
  cachedInputTokens: number;
  /** Input tokens written to the server's prompt cache (Anthropic bills them above the input price). */
  cacheWriteInputTokens?: number;
  /** Answered through the provider's Batch API (billed at its batch discount). */
  batch?: boolean;
  /** Token counts the provider reported that cannot be true (`prompt_tokens -5`): left out of the counts above, never billed. */
  implausible?: string[];
}

export interface JudgeReply {
  text: string;
  usage: JudgeUsage;
  finishReason?: string;
  /** Per generated token, when `logprobs` was asked for and the judge gives them. */
  tokenProbabilities?: TokenProbability[];
  /** The model's reasoning, when the server returned it apart from the answer (`reasoning`, `reasoning_content`). */
  reasoning?: string;
  /** Cut off (`finishReason: length`) although the budget was already the model's own output limit. */
  atOutputLimit?: boolean;
  /** Milliseconds the answering call took, measured by the engine (kept with the stored reply, so a cache hit reports it too). */
  latencyMs?: number;
  /** When the answering call ended (ISO 8601), for replies whose time is recorded (sampled responses); kept with the stored reply. */
  answeredAt?: string;
  /** The model the provider says answered (`src/judges/resolved-model.ts`): a dated snapshot behind an alias; absent when the reply names none. */
  model?: string;
  /** The tools an agentic judge called before this reply's verdict (`src/judges/agentic/`), in order. */
  toolCalls?: JudgeToolCall[];
}

/** One tool call of an agentic judge, as results record it. */
export interface JudgeToolCall {
  name: string;
  /** The arguments the judge gave (long values cut). */
  arguments: Record<string, unknown>;
  outcome: 'ok' | 'error';
  /** What came back, in a line: for a fetch, the URL's status and type. */
  summary: string;
  /** Bytes of tool output the judge read. */
  bytes: number;
  /** Why the call failed (`outcome: "error"`). */
  error?: { code: string; message: string };
}

/** What goes into every result so a verdict can be traced to the judge that made it. */
export interface JudgeProvenance {
  /** Spec as the user wrote it, e.g. `openai:gpt-4.1` or `gguf:/models/q.gguf`. */
  id: string;
  model: string;
  /** Endpoint for HTTP judges, file path for local ones, absent for `none`. */
  baseUrl?: string;
  /** Settings that shape requests (profile, extra body, headers with secrets redacted), for results provenance. */
  settings?: Record<string, unknown>;
  /**
   * Canonical text of the settings that change what the judge replies (extra body fields,
   * reasoning effort). Part of the reply cache key when present.
   */
  variant?: string;
  /**
   * Replaces the endpoint's identity in the reply cache key (`--cache-namespace`): judges with the
   * same namespace and model share cached replies whatever their endpoint.
   */
  cacheNamespace?: string;
  /** A judge whose verdicts were recorded earlier and are replayed (`replay:FILE`): the file, its hash and the judge that recorded them. */
  replayed?: { file: string; sha256: string; judge: string };
}

export interface CompleteOptions {
  signal: AbortSignal;
}

/**
 * What a judge can do, as far as it knows now: one object, read live (an endpoint's limits and
 * its logprobs support are learned during a run) and forwarded whole by every wrapper (pool,
 * batch, dry run, fleet limits), so no wrapper can drop one.
 */
export interface JudgeCapabilities {
  /** Sends `ChatMessage.images` to its model; items with images are refused by the others. */
  readonly images: boolean;
  /** false: never returns token probabilities (probability verdicts are refused at start); undefined: not known yet. */
  readonly tokenProbabilities?: boolean;
  /** Upper bound on useful parallel calls (e.g. llama.cpp sequences); the engine caps concurrency at it. */
  readonly maxConcurrency?: number;
  /** What the judge knows of its model's output limit and context window. */
  readonly limits?: ModelLimits;
  /** CPU threads an in-process model computes on (the local judge's), for the forecast of a run's time. */
  readonly threads?: number;
  /** Grading-plan settings this judge grades best with when the run gives none (the embedded local judge: short explanations, measured by bench-local). */
  readonly defaults?: { readonly explanation?: ExplanationLength };
  /** Runs in this process (the embedded llama.cpp judge): the CLI shows its plan and forecasts its run time. */
  readonly embedded?: boolean;
}

export interface Judge {
  readonly provenance: JudgeProvenance;
  readonly capabilities: JudgeCapabilities;
  complete(request: JudgeRequest, options: CompleteOptions): Promise<JudgeReply>;
  close?(): Promise<void>;
}
