/**
 * Output budgets of judge calls, from what the reply has to hold: one verdict object per
 * criterion (its id, its label or boolean, and an explanation of bounded length), or one
 * list of quotes per criterion for evidence. Batched calls are split into groups whose
 * budget fits the judge's output limit and, with the prompt, its context window.
 */
import type { ModelLimits } from '../judges/profiles.js';
import type { Criterion } from '../rubric/schema.js';

/** Explanation tokens each verdict of a multi-verdict reply may use (at most `--max-tokens`). */
export const batchedExplanationTokens = 300;
/** Quote tokens each criterion of an evidence reply may use (at most the evidence budget per criterion). */
export const evidenceQuoteTokens = 600;
/** Braces, the outer key and whitespace of a reply. */
const replyOverheadTokens = 64;
/** Share of the output limit a group's budget may take: the rest is headroom for thinking before the answer. */
const outputLimitShare = 0.75;

function keyTokens(criterion: Criterion): number {
  return Math.ceil(criterion.id.length / 3) + 4;
}

/** Tokens of one criterion's entry in a batched reply: key, value, explanation, punctuation. */
export function verdictEntryTokens(criterion: Criterion, tokensPerVerdict: number): number {
  const scale = criterion.scale;
  const valueTokens = scale?.type === 'ordinal' ? Math.max(...scale.choices.map((choice) => Math.ceil(choice.label.length / 3))) + 8 : 8;
  return keyTokens(criterion) + valueTokens + 12 + Math.min(tokensPerVerdict, batchedExplanationTokens);
}

/** Output budget of a batched call over these criteria. */
export function batchedOutputBudget(criteria: readonly Criterion[], tokensPerVerdict: number): number {
  let total = replyOverheadTokens;
  for (const criterion of criteria) total += verdictEntryTokens(criterion, tokensPerVerdict);
  return total;
}

/** Output budget of an evidence call over these criteria. */
export function evidenceOutputBudget(criteria: readonly Criterion[], tokensPerCriterion: number): number {
  let total = replyOverheadTokens;
  for (const criterion of criteria) total += keyTokens(criterion) + 8 + Math.min(tokensPerCriterion, evidenceQuoteTokens);
  return total;
}

export interface GroupingOptions {
  /** Most criteria in one call (`--criteria-per-call`). */
  maxPerCall: number;
  tokensPerVerdict: number;
  limits?: ModelLimits;
  /** Prompt tokens shared by every group (conversation, response, instructions). */
  sharedPromptTokens: number;
  /** Prompt tokens a criterion adds (its rendered block). */
  criterionPromptTokens: (criterion: Criterion) => number;
}

/**
 * Consecutive groups of at most `maxPerCall` criteria whose output budget fits the model's
 * output limit and whose prompt plus budget fits its context window. A criterion that does
 * not fit even alone gets a group of its own (the server then says why).
 */
export function groupCriteriaToFit(criteria: readonly Criterion[], options: GroupingOptions): Criterion[][] {
  const outputRoom = options.limits?.maxOutputTokens !== undefined ? Math.floor(options.limits.maxOutputTokens * outputLimitShare) : Number.POSITIVE_INFINITY;
  const contextRoom = options.limits?.contextWindow ?? Number.POSITIVE_INFINITY;
  const groups: Criterion[][] = [];
  let group: Criterion[] = [];
  let budget = replyOverheadTokens;
  let prompt = options.sharedPromptTokens;
  for (const criterion of criteria) {
    const entry = verdictEntryTokens(criterion, options.tokensPerVerdict);
    const block = options.criterionPromptTokens(criterion);
    const fits = budget + entry <= outputRoom && prompt + block + budget + entry <= contextRoom;
    if (group.length > 0 && (group.length >= options.maxPerCall || !fits)) {
      groups.push(group);
      group = [];
      budget = replyOverheadTokens;
      prompt = options.sharedPromptTokens;
    }
    group.push(criterion);
    budget += entry;
    prompt += block;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
