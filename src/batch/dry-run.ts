/**
 * `--dry-run`: the run goes through the real pipeline (same planning, same batching of
 * criteria, same cache lookups, same in-flight dedupe) with a judge that counts and prices
 * each call instead of sending it, and a store that is read but never written. What comes out
 * is the exact number of calls, their input tokens counted with the model's tokenizer, the
 * output tokens a reply following the request's schema takes, the cache hits already in the
 * store, and the cost at synchronous, batch and prompt-cached prices.
 */
import { createRequire } from 'node:module';
import { RubricateError } from '../errors.js';
import type { Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import { batchPriceFactor, type ModelPrice } from '../engine/usage.js';
import type { ReplyStore } from '../store/index.js';
import { sha256Hex } from '../util/hash.js';

export type TokenizerName = 'o200k_base' | 'cl100k_base';

export interface DryRunTotals {
  calls: number;
  input_tokens: number;
  /** Input tokens of shared prefixes a prompt cache would serve (the second and later calls of an item, 1,024 tokens or more, in 128-token steps as OpenAI caches). */
  cacheable_input_tokens: number;
  expected_output_tokens: number;
  /** Which tokenizer counted, and whether it is the model's own or an approximation. */
  tokenizer: TokenizerName;
  exact_tokenizer: boolean;
}

/** Words an explanation is assumed to take (the verdict schemas bound neither way; judges write a sentence or two). */
export const expectedExplanationWords = 25;
/** Chat framing per message and reply priming, as OpenAI's token-counting guide gives them. */
const tokensPerMessage = 3;
const replyPrimingTokens = 3;
const minimumCachedPrefix = 1024;
const cacheStep = 128;

const requireModule = createRequire(import.meta.url);

/** The model's tokenizer: o200k for the GPT-4o / 4.1 / 5 and o-series families, cl100k for GPT-4 and 3.5; o200k as a stated approximation for any other model. */
export function tokenizerFor(model: string): { name: TokenizerName; exact: boolean; count: (text: string) => number } {
  const bare = model.replace(/^.*\//, '');
  const cl100k = /^(gpt-4(?!o|\.)|gpt-3\.5|text-embedding-3|text-embedding-ada)/.test(bare);
  const o200k = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o|gpt-oss)/.test(bare);
  const name: TokenizerName = cl100k ? 'cl100k_base' : 'o200k_base';
  const encoding = requireModule(`gpt-tokenizer/encoding/${name}`) as { encode: (text: string, options?: unknown) => number[] };
  const options = { disallowedSpecial: new Set<string>() };
  return { name, exact: cl100k || o200k, count: (text) => (text === '' ? 0 : encoding.encode(text, options).length) };
}

/** Input tokens of one request: each message's text plus OpenAI's chat framing. */
export function requestInputTokens(request: JudgeRequest, count: (text: string) => number): number {
  let total = replyPrimingTokens;
  for (const message of request.messages) total += tokensPerMessage + count(message.content);
  return total;
}

/** A reply that follows the schema: each explanation-like string of the expected length, every other field at its shortest valid value. */
export function sampleReplyFor(schema: Record<string, unknown>, explanation: string): unknown {
  const type = schema.type;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (type === 'object') {
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    const value: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(properties)) value[name] = property.type === 'string' && /explanation|reason|rationale|feedback/i.test(name) ? explanation : sampleReplyFor(property, explanation);
    return value;
  }
  if (type === 'array') return schema.items ? [sampleReplyFor(schema.items as Record<string, unknown>, explanation)] : [];
  if (type === 'boolean') return true;
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'string') return explanation;
  return null;
}

const fillerExplanation = Array.from({ length: expectedExplanationWords }, (_, index) => ['The', 'response', 'does', 'address', 'this', 'point', 'clearly', 'and', 'correctly'][index % 9]).join(' ');

export interface DryRunJudge extends Judge {
  readonly totals: DryRunTotals;
}

/** Counts and prices each call; never sends one (every call ends in JUDGE_DRY_RUN, which nothing retries). */
export function createDryRunJudge(inner: Judge): DryRunJudge {
  const tokenizer = tokenizerFor(inner.provenance.model);
  const totals: DryRunTotals = { calls: 0, input_tokens: 0, cacheable_input_tokens: 0, expected_output_tokens: 0, tokenizer: tokenizer.name, exact_tokenizer: tokenizer.exact };
  const seenPrefixes = new Set<string>();
  const inputTokens = (request: JudgeRequest) => requestInputTokens(request, tokenizer.count);
  function prefixTokens(request: JudgeRequest): number {
    const shared = request.sharedPrefix;
    if (!shared) return 0;
    let total = 0;
    for (let index = 0; index < shared.message; index += 1) total += tokensPerMessage + tokenizer.count(request.messages[index].content);
    const text = request.messages[shared.message]?.content.slice(0, shared.characters) ?? '';
    total += tokenizer.count(text);
    const key = sha256Hex(JSON.stringify(request.messages.slice(0, shared.message)) + '\u0000' + text);
    if (!seenPrefixes.has(key)) {
      seenPrefixes.add(key);
      return 0;
    }
    return total < minimumCachedPrefix ? 0 : Math.floor(total / cacheStep) * cacheStep;
  }
  function outputTokens(request: JudgeRequest): number {
    if (request.output) return tokenizer.count(JSON.stringify(sampleReplyFor(request.output.schema, fillerExplanation)));
    // A plain-text reply (Prometheus' feedback and [RESULT]): a paragraph, within the budget.
    return Math.min(request.maxTokens ?? 256, 256);
  }
  return {
    provenance: inner.provenance,
    get modelLimits() {
      return inner.modelLimits;
    },
    get supportsTokenProbabilities() {
      return inner.supportsTokenProbabilities;
    },
    totals,
    async complete(request: JudgeRequest): Promise<JudgeReply> {
      totals.calls += 1;
      totals.input_tokens += inputTokens(request);
      totals.cacheable_input_tokens += prefixTokens(request);
      totals.expected_output_tokens += outputTokens(request);
      throw new RubricateError('JUDGE_DRY_RUN', 'dry run: the call was counted, not sent');
    },
    close: () => inner.close?.() ?? Promise.resolve(),
  };
}

/** A store that answers lookups and keeps nothing (a dry run must leave the cache as it was). */
export function readOnlyStore(store: ReplyStore | undefined): ReplyStore | undefined {
  if (!store) return undefined;
  return { get: (key) => store.get(key), put: () => undefined, close: () => undefined };
}

export interface CostEstimate {
  synchronous: number | null;
  batch: number | null;
  prompt_cached: number | null;
}

export function estimateCost(totals: DryRunTotals, price: ModelPrice | undefined): CostEstimate {
  if (!price) return { synchronous: null, batch: null, prompt_cached: null };
  const round = (value: number) => Math.round(value * 1e6) / 1e6;
  const synchronous = (totals.input_tokens * price.input + totals.expected_output_tokens * price.output) / 1e6;
  const cached = Math.min(totals.cacheable_input_tokens, totals.input_tokens);
  const promptCached = ((totals.input_tokens - cached) * price.input + cached * (price.cached_input ?? price.input) + totals.expected_output_tokens * price.output) / 1e6;
  return { synchronous: round(synchronous), batch: round(synchronous * batchPriceFactor), prompt_cached: round(promptCached) };
}
