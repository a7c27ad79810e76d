/** A boolean verdict read in one step from the logits of the tokens that can spell `true` or `false`. */
import { RubricateError } from '../../errors.js';
import type { RandomSource } from '../../util/random.js';
import { mergeAlikeAlternatives } from '../token-alternatives.js';
import type { TokenProbability } from '../types.js';
import { throwIfAborted } from './local-errors.js';
import type { LocalCall, LocalModelState } from './local-model.js';

type Token = import('node-llama-cpp').Token;

/** Far above any logit a model gives (tens at most), and small enough for float32 to keep the differences between the boosted tokens. */
const verdictLogitBoost = 1000;

interface ChosenVerdict {
  word: 'true' | 'false';
  logprob: number;
  top: TokenProbability['top'];
}

const wordOf = (text: string) => (text.trimStart().startsWith('t') ? 'true' : 'false');

/**
 * Evaluates `pending` and picks `true` or `false` among the tokens that can start either word
 * (worked out once per model, from the first verdict's distribution: one pass over the
 * vocabulary): the most probable at temperature 0, else drawn from the tempered distribution
 * restricted to them. With probabilities asked for, the whole distribution is read and the
 * reported one is renormalised over those tokens, as a grammar-constrained one is; without,
 * the sampler does the choosing, with those tokens' logits raised far above every other
 * token's (the same choice, without copying a 150,000-entry distribution into JavaScript).
 */
export async function chooseBoolean(call: LocalCall, pending: Token[], random: RandomSource): Promise<ChosenVerdict> {
  const { state, sequence, signal } = call;
  if (!call.wantProbabilities && state.verdictTokenIds !== undefined) return sampleBiased(call, pending, state.verdictTokenIds);
  const iterator = sequence.evaluateWithMetadata(pending, { probabilities: true }, { temperature: 0, topK: 0, topP: 1, minP: 0 });
  const allowed: Array<{ token: Token; text: string; probability: number }> = [];
  for await (const output of iterator) {
    throwIfAborted(signal);
    const verdictTokenIds = (state.verdictTokenIds ??= verdictTokensOf(state, output.probabilities.keys()));
    for (const [token, probability] of output.probabilities) {
      if (verdictTokenIds.has(token) && probability > 0) allowed.push({ token, text: state.model.detokenize([token], true), probability });
    }
    break;
  }
  if (allowed.length === 0) throw new RubricateError('JUDGE_SERVER_ERROR', 'local llama.cpp inference gave no probability to true or false at the verdict');
  allowed.sort((left, right) => right.probability - left.probability);
  const mass = allowed.reduce((sum, entry) => sum + entry.probability, 0);
  let chosen = allowed[0];
  if (call.sampling.temperature > 0) {
    const weights = allowed.map((entry) => entry.probability ** (1 / call.sampling.temperature));
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
    top: mergeAlikeAlternatives(allowed.slice(0, call.topAlternatives).map((entry) => ({ token: entry.text, logprob: Math.log(entry.probability) - Math.log(mass), identity: String(entry.token) }))),
  };
}

/** The tokens of the vocabulary that can start `true` or `false` (after leading spaces). */
function verdictTokensOf(state: LocalModelState, vocabulary: Iterable<Token>): Set<Token> {
  const tokens = new Set<Token>();
  for (const token of vocabulary) {
    const trimmed = state.model.detokenize([token], true).trimStart();
    if (trimmed.length > 0 && ('true'.startsWith(trimmed) || 'false'.startsWith(trimmed))) tokens.add(token);
  }
  return tokens;
}

/** The sampler's choice with the verdict tokens' logits raised above every other token's. */
async function sampleBiased(call: LocalCall, pending: Token[], verdictTokenIds: Set<Token>): Promise<ChosenVerdict> {
  const { state } = call;
  state.verdictBias ??= [...verdictTokenIds].reduce((bias, token) => bias.set(token, { logit: verdictLogitBoost }), new state.nodeLlamaCpp.TokenBias(state.model.tokenizer));
  const iterator = call.sequence.evaluateWithMetadata(pending, {}, { ...call.sampling, tokenBias: state.verdictBias });
  for await (const output of iterator) {
    throwIfAborted(call.signal);
    if (!verdictTokenIds.has(output.token)) break;
    return { word: wordOf(state.model.detokenize([output.token], true)), logprob: 0, top: [] };
  }
  throw new RubricateError('JUDGE_SERVER_ERROR', 'local llama.cpp inference chose no token that spells true or false at the verdict');
}
