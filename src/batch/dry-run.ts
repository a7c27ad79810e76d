/**
 * `--dry-run`: the run goes through the real pipeline (same planning, same batching of
 * criteria, same cache lookups, same in-flight dedupe) with a judge that counts and prices
 * each call instead of sending it, and a store that is read but never written. What comes out
 * is the exact number of calls, their input tokens counted with the model's tokenizer, the
 * output tokens a reply following the request's schema takes, the cache hits already in the
 * store, and the cost at synchronous, batch and prompt-cached prices.
 *
 * Commands whose later calls depend on earlier answers (`generate`, `refine`) plan in two
 * passes: one in which no call is answered (what it counts is exact), and one in which every
 * call gets a synthetic answer that follows its schema (the later stages, estimated).
 */
import { createRequire } from 'node:module';
import { RubricateError } from '../errors.js';
import type { Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import { extendJudge, wrapJudge } from '../judges/middleware.js';
import { batchPriceFactor, type ModelPrice } from '../engine/usage.js';
import { round } from '../statistics/descriptive.js';
import { isPromise, type ReplyStore } from '../store/types.js';
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

/**
 * A reply that follows the schema: each explanation-like string is `explanation`, every other
 * string `text()` (the explanation unless given), each other field at its shortest valid value;
 * an array holds one item, or the mean of its bounds when the schema bounds it (a generated
 * rubric's criteria).
 */
export function sampleReplyFor(schema: Record<string, unknown>, explanation: string, text: () => string = () => explanation): unknown {
  const type = schema.type;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (type === 'object') {
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    const value: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(properties)) value[name] = property.type === 'string' && /explanation|reason|rationale|feedback/i.test(name) ? explanation : sampleReplyFor(property, explanation, text);
    return value;
  }
  if (type === 'array') return schema.items ? Array.from({ length: boundedItems(schema) }, () => sampleReplyFor(schema.items as Record<string, unknown>, explanation, text)) : [];
  if (type === 'boolean') return true;
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'string') return text();
  return null;
}

/** Items of a sample array: the mean of `minItems` and `maxItems` when both bound it, else one (within a single bound). */
function boundedItems(schema: Record<string, unknown>): number {
  const min = typeof schema.minItems === 'number' ? schema.minItems : undefined;
  const max = typeof schema.maxItems === 'number' ? schema.maxItems : undefined;
  if (min !== undefined && max !== undefined) return Math.round((min + max) / 2);
  return Math.min(Math.max(1, min ?? 1), max ?? Number.POSITIVE_INFINITY);
}

const fillerWords = ['The', 'response', 'does', 'address', 'this', 'point', 'clearly', 'and', 'correctly'];
const fillerExplanation = Array.from({ length: expectedExplanationWords }, (_, index) => fillerWords[index % fillerWords.length]).join(' ');

/** Words a synthetic criterion takes (generated criteria are a sentence of about this length). */
export const syntheticCriterionWords = 16;
/** Tokens a synthetic plain-text reply takes (a sampled response, Prometheus feedback), within the request's budget. */
export const syntheticTextTokens = 256;

/** Common one-token words, drawn in a different order for each synthetic text so that no two texts overlap much. */
const syntheticVocabulary = (
  'able about above across action after again against age agree air all allow also always among amount animal answer any appear apply area argue arm around art ask avoid ' +
  'away back bad balance base basic bear beat become before begin behind best better between big bill black blood blue board body book both box break bring build ' +
  'business buy call camp can capital car card care carry case catch cause cell center certain chair chance change charge check child choice choose church city claim class ' +
  'clear close coach cold color come common company compare cost could country course court cover create crime cross cup current cut dark data day dead deal death ' +
  'decide deep degree design detail develop die differ dinner direct discuss doctor dog door down draw dream drink drive drop during early east easy eat edge effect ' +
  'effort eight either else end energy enjoy enough enter entire even event ever every exact example expect expert explain eye face fact fail fall family far fast ' +
  'father fear feel few field fight figure fill film final find fine finger finish fire firm first fish five floor fly focus follow food foot force form forward ' +
  'four free friend front full fund game garden gas general get girl give glass goal good great green ground group grow guess gun hair half hand hang happen happy ' +
  'hard head health hear heart heat heavy help here high hit hold home hope horse hospital hot hotel hour house huge human hundred idea image impact improve include'
).split(' ');

/** A text of `words` words, different for every `seed`. */
function syntheticText(seed: number, words: number): string {
  let state = (seed * 2654435761 + 1) >>> 0;
  const picked: string[] = [];
  for (let index = 0; index < words; index += 1) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    picked.push(syntheticVocabulary[state % syntheticVocabulary.length]);
  }
  return picked.join(' ');
}

export interface DryRunJudge extends Judge {
  readonly totals: DryRunTotals;
}

/** How the calls of one dry-run pass end: refused with JUDGE_DRY_RUN (only what needs no answer is planned), or answered with a synthetic reply. */
export type DryRunAnswers = 'none' | 'synthetic';

/**
 * A dry-run judge for commands whose later calls depend on earlier answers (`generate`,
 * `refine`). Each pass starts from zero: with `none`, every call ends in JUDGE_DRY_RUN as in
 * `grade --dry-run`, so only the calls that need no answer are made, and those are exact;
 * with `synthetic`, every call gets a reply that follows its request's schema, so the pipeline
 * plans the later stages too. The caller must keep synthetic replies out of the store and
 * of every output.
 */
export interface PlanningDryRunJudge extends DryRunJudge {
  startPass(answers: DryRunAnswers): void;
}

/** Counts and prices each call; never sends one (every call ends in JUDGE_DRY_RUN, which nothing retries). */
export function createDryRunJudge(inner: Judge): PlanningDryRunJudge {
  return countingJudge(inner, () => fillerExplanation, 'none');
}

export function createPlanningDryRunJudge(inner: Judge): PlanningDryRunJudge {
  let counter = 0;
  return countingJudge(inner, () => syntheticText((counter += 1), syntheticCriterionWords), 'synthetic');
}

type Tokenizer = ReturnType<typeof tokenizerFor>;

/** What a counting judge has counted in its current pass, and how it answers. */
interface CountingState {
  tokenizer: Tokenizer;
  /** The explanation text of each synthetic reply. */
  text: () => string;
  totals: DryRunTotals;
  answers: DryRunAnswers;
  seenPrefixes: Set<string>;
  plainTexts: number;
}

function emptyTotals(tokenizer: Tokenizer): DryRunTotals {
  return { calls: 0, input_tokens: 0, cacheable_input_tokens: 0, expected_output_tokens: 0, tokenizer: tokenizer.name, exact_tokenizer: tokenizer.exact };
}

function countingJudge(inner: Judge, text: () => string, initialAnswers: DryRunAnswers): PlanningDryRunJudge {
  const tokenizer = tokenizerFor(inner.provenance.model);
  const state: CountingState = { tokenizer, text, totals: emptyTotals(tokenizer), answers: initialAnswers, seenPrefixes: new Set(), plainTexts: 0 };
  // Never calls the inner judge: each call is counted, then refused or answered with a synthetic reply.
  const counting = wrapJudge(inner, { wrapComplete: async ({ request }) => countCall(state, request) });
  const members = {
    get totals() {
      return state.totals;
    },
    startPass(next: DryRunAnswers) {
      state.answers = next;
      state.totals = emptyTotals(tokenizer);
      state.seenPrefixes = new Set();
    },
  };
  return extendJudge(counting, members);
}

function countCall(state: CountingState, request: JudgeRequest): JudgeReply {
  const { totals, tokenizer } = state;
  const input = requestInputTokens(request, tokenizer.count);
  const reply = replyText(state, request);
  // A plain-text reply (a sampled response, Prometheus' feedback and [RESULT]): a paragraph, within the budget.
  const output = reply === undefined ? Math.min(request.maxTokens ?? syntheticTextTokens, syntheticTextTokens) : tokenizer.count(reply);
  totals.calls += 1;
  totals.input_tokens += input;
  totals.cacheable_input_tokens += prefixTokens(state, request);
  totals.expected_output_tokens += output;
  if (state.answers === 'none' || reply === undefined) throw new RubricateError('JUDGE_DRY_RUN', 'dry run: the call was counted, not sent');
  return { text: reply, usage: { inputTokens: input, outputTokens: output, cachedInputTokens: 0 }, finishReason: 'stop' };
}

/** Input tokens a provider's prompt cache would serve: none the first time a shared prefix is seen. */
function prefixTokens(state: CountingState, request: JudgeRequest): number {
  const shared = request.sharedPrefix;
  if (!shared) return 0;
  const { tokenizer } = state;
  let total = 0;
  for (let index = 0; index < shared.message; index += 1) total += tokensPerMessage + tokenizer.count(request.messages[index].content);
  const text = request.messages[shared.message]?.content.slice(0, shared.characters) ?? '';
  total += tokenizer.count(text);
  const key = sha256Hex(JSON.stringify(request.messages.slice(0, shared.message)) + '\u0000' + text);
  if (!state.seenPrefixes.has(key)) {
    state.seenPrefixes.add(key);
    return 0;
  }
  return total < minimumCachedPrefix ? 0 : Math.floor(total / cacheStep) * cacheStep;
}

/** The reply a call is assumed to get: one that follows its schema, or a paragraph of plain text. */
function replyText(state: CountingState, request: JudgeRequest): string | undefined {
  if (request.output) return JSON.stringify(sampleReplyFor(request.output.schema, fillerExplanation, state.text));
  if (state.answers === 'none') return undefined;
  state.plainTexts += 1;
  const tokens = Math.min(request.maxTokens ?? syntheticTextTokens, syntheticTextTokens);
  return `${syntheticText(1e6 + state.plainTexts, tokens)}${prometheusResult(request)}`;
}

/** The closing line a Prometheus prompt asks for, so its reader takes the synthetic feedback. */
function prometheusResult(request: JudgeRequest): string {
  const instructions = request.messages.map((message) => message.content).join('\n');
  if (/\[RESULT\] \(Either "A" or "B"\)/.test(instructions)) return '\n[RESULT] A';
  if (/\[RESULT\] \(an integer number between 1 and 5\)/.test(instructions)) return ' [RESULT] 5';
  return '';
}

/** A store that answers lookups and keeps nothing (a dry run must leave the cache as it was); `hits` counts the lookups it answered. */
export function readOnlyStore(store: ReplyStore | undefined, hits?: { count: number }): ReplyStore | undefined {
  if (!store) return undefined;
  if (!hits) return { get: (key) => store.get(key), put: () => undefined, close: () => undefined };
  const counted = (reply: JudgeReply | undefined) => {
    if (reply) hits.count += 1;
    return reply;
  };
  return {
    get: (key) => {
      const found = store.get(key);
      return isPromise(found) ? found.then(counted) : counted(found);
    },
    put: () => undefined,
    close: () => undefined,
  };
}

export interface CostEstimate {
  synchronous: number | null;
  batch: number | null;
  prompt_cached: number | null;
}

export function estimateCost(totals: DryRunTotals, price: ModelPrice | undefined): CostEstimate {
  if (!price) return { synchronous: null, batch: null, prompt_cached: null };
  const synchronous = (totals.input_tokens * price.input + totals.expected_output_tokens * price.output) / 1e6;
  const cached = Math.min(totals.cacheable_input_tokens, totals.input_tokens);
  const promptCached = ((totals.input_tokens - cached) * price.input + cached * (price.cached_input ?? price.input) + totals.expected_output_tokens * price.output) / 1e6;
  return { synchronous: round(synchronous), batch: round(synchronous * batchPriceFactor), prompt_cached: round(promptCached) };
}
