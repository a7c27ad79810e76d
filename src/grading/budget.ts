/**
 * Output budgets of judge calls, from what the reply has to hold: one verdict object per
 * criterion (its id, its label or boolean, and an explanation of bounded length), or one
 * list of quotes per criterion for evidence. Batched calls are split into groups whose
 * budget fits the judge's output limit and, with the prompt, its context window; listwise
 * calls (every response of a group on each criterion) are split the same way.
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

/** What a call's reply and prompt may take of the model's limits (unknown limits: no bound). */
function roomOf(limits: ModelLimits | undefined): { outputRoom: number; contextRoom: number } {
  return {
    outputRoom: limits?.maxOutputTokens !== undefined ? Math.floor(limits.maxOutputTokens * outputLimitShare) : Number.POSITIVE_INFINITY,
    contextRoom: limits?.contextWindow ?? Number.POSITIVE_INFINITY,
  };
}

export interface GroupingOptions {
  /** Most criteria in one call (`--criteria-per-call`). */
  maxPerCall: number;
  /** Verdicts each criterion asks for (listwise calls: one per response shown); default 1. */
  verdictsPerCriterion?: number;
  /** Reply tokens besides the verdicts (default: braces and the outer key). */
  overheadTokens?: number;
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
  const { outputRoom, contextRoom } = roomOf(options.limits);
  const overhead = options.overheadTokens ?? replyOverheadTokens;
  const verdicts = options.verdictsPerCriterion ?? 1;
  const groups: Criterion[][] = [];
  let group: Criterion[] = [];
  let budget = overhead;
  let prompt = options.sharedPromptTokens;
  for (const criterion of criteria) {
    const entry = verdictEntryTokens(criterion, options.tokensPerVerdict) * verdicts;
    const block = options.criterionPromptTokens(criterion);
    const fits = budget + entry <= outputRoom && prompt + block + budget + entry <= contextRoom;
    if (group.length > 0 && (group.length >= options.maxPerCall || !fits)) {
      groups.push(group);
      group = [];
      budget = overhead;
      prompt = options.sharedPromptTokens;
    }
    group.push(criterion);
    budget += entry;
    prompt += block;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** Reply tokens of one response's entry in a listwise reply besides its verdicts (its label, braces, the key). */
export const listwiseLabelTokens = 12;

/** Output budget of a listwise call: every response shown, judged on every criterion shown. */
export function listwiseOutputBudget(criteria: readonly Criterion[], responses: number, tokensPerVerdict: number): number {
  let perResponse = listwiseLabelTokens;
  for (const criterion of criteria) perResponse += verdictEntryTokens(criterion, tokensPerVerdict);
  return replyOverheadTokens + responses * perResponse;
}

export interface ListwiseSplitOptions {
  /** Most criteria in one call (`--criteria-per-call`; Infinity: the whole rubric). */
  maxCriteriaPerCall: number;
  tokensPerVerdict: number;
  limits?: ModelLimits;
  /** Prompt tokens every call of the group shares (instructions, conversation, reference). */
  sharedPromptTokens: number;
  /** Prompt tokens of each response, in presentation order. */
  responsePromptTokens: readonly number[];
  criterionPromptTokens: (criterion: Criterion) => number;
}

/**
 * The calls a listwise group needs: chunks of responses (in presentation order, as positions)
 * each graded on groups of criteria, so that every call's verdicts fit the model's output limit
 * and its prompt plus budget its context window. All responses share one call while one
 * criterion's verdicts on all of them fit; criteria are split first, responses only when needed.
 * A response that does not fit even alone with one criterion gets calls of its own (the server
 * then says why).
 */
export function splitGroupToFit(criteria: readonly Criterion[], options: ListwiseSplitOptions): Array<{ responses: number[]; criteria: Criterion[] }> {
  const { outputRoom, contextRoom } = roomOf(options.limits);
  const largestEntry = Math.max(0, ...criteria.map((criterion) => verdictEntryTokens(criterion, options.tokensPerVerdict)));
  const largestBlock = Math.max(0, ...criteria.map(options.criterionPromptTokens));
  const chunks: number[][] = [];
  let chunk: number[] = [];
  let budget = replyOverheadTokens;
  let prompt = options.sharedPromptTokens + largestBlock;
  options.responsePromptTokens.forEach((tokens, position) => {
    const entry = listwiseLabelTokens + largestEntry;
    const fits = budget + entry <= outputRoom && prompt + tokens + budget + entry <= contextRoom;
    if (chunk.length > 0 && !fits) {
      chunks.push(chunk);
      chunk = [];
      budget = replyOverheadTokens;
      prompt = options.sharedPromptTokens + largestBlock;
    }
    chunk.push(position);
    budget += entry;
    prompt += tokens;
  });
  if (chunk.length > 0) chunks.push(chunk);
  return chunks.flatMap((responses) =>
    groupCriteriaToFit(criteria, {
      maxPerCall: options.maxCriteriaPerCall,
      tokensPerVerdict: options.tokensPerVerdict,
      limits: options.limits,
      sharedPromptTokens: options.sharedPromptTokens + responses.reduce((total, position) => total + options.responsePromptTokens[position], 0),
      criterionPromptTokens: options.criterionPromptTokens,
      verdictsPerCriterion: responses.length,
      overheadTokens: replyOverheadTokens + listwiseLabelTokens * responses.length,
    }).map((group) => ({ responses, criteria: group })),
  );
}
