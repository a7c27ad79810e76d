/**
 * The reward of a rubric generator (Rubric-ARM, the DeepResearch rubric-generator papers): how
 * well a candidate rubric, graded on responses whose quality is known, reproduces that
 * knowledge. Given labelled preference pairs, the share of pairs whose chosen response the
 * rubric scores strictly higher (the contrastive filter's test, `preferenceOutcome`: a tie
 * reproduces nothing); given responses with expert scores, the rank correlation of the
 * rubric's scores with the experts' (Spearman's ρ, Kendall's τ-b); and always how far apart
 * the rubric puts the responses (`separation`). A response the judge could not grade is left
 * out and counted; a reward with nothing graded behind it is null, never 0.
 */
import { z } from 'zod';
import { zodIssueError } from '../util/zod-issue.js';
import { normalizeMessages } from '../rubric/normalize.js';
import { messageInputSchema, type Item, type Message, type Rubric } from '../rubric/schema.js';
import { kendallTauB, spearmanCorrelation } from '../statistics/correlation.js';
import { preferenceOutcome } from './contrastive.js';
import { separation, type Separation } from './measures.js';

export const rubricRewardSources = ['pairs', 'spearman', 'kendall'] as const;

/** One rubric to reward: its prompt, the rubric, and the responses of known quality. */
export const rubricRewardInputSchema = z
  .object({
    id: z.union([z.string().min(1), z.number()]).optional(),
    prompt: z.union([z.string().min(1), z.array(messageInputSchema).min(1)]),
    /** The candidate rubric (an object, or a JSON string); validated as every rubric is. */
    rubric: z.unknown(),
    reference: z.string().optional(),
    pairs: z.array(z.strictObject({ chosen: z.string(), rejected: z.string() })).min(1).optional(),
    responses: z.array(z.strictObject({ response: z.string(), score: z.number().refine(Number.isFinite, 'must be a finite number') })).min(2).optional(),
    /** Which figure is the reward (default: `pairs` when pairs are given, else `spearman`). */
    reward: z.enum(rubricRewardSources).optional(),
  })
  .refine((input) => input.pairs !== undefined || input.responses !== undefined, { message: 'give `pairs` (chosen and rejected) or `responses` (with expert scores)', path: ['pairs'] })
  .refine((input) => input.reward === undefined || (input.reward === 'pairs' ? input.pairs !== undefined : input.responses !== undefined), { message: 'the reward must come from what was given: "pairs" needs pairs, "spearman" and "kendall" responses', path: ['reward'] });

export type RubricRewardInput = z.output<typeof rubricRewardInputSchema>;

export interface RubricQuality {
  /** The figure `reward_from` names; null when nothing behind it could be graded. */
  reward: number | null;
  reward_from: (typeof rubricRewardSources)[number];
  pairs?: { n: number; graded: number; reproduced: number; reversed: number; ties: number; errors: number; accuracy: number | null; accuracy_ties_half: number | null };
  ranking?: { n: number; graded: number; spearman: number | null; kendall: number | null };
  /** How far apart the rubric's scores put the distinct responses graded. */
  separation: Separation;
  /** Distinct responses graded, and how many of them failed. */
  responses: { graded: number; errors: number };
}

/** The distinct responses a reward needs graded, in first-appearance order. */
export function rubricRewardResponses(input: RubricRewardInput): string[] {
  const texts = [...(input.pairs ?? []).flatMap((pair) => [pair.chosen, pair.rejected]), ...(input.responses ?? []).map((entry) => entry.response)];
  return [...new Set(texts)];
}

/** The items that grade those responses with the candidate rubric (one per distinct response). */
export function rubricRewardItems(input: RubricRewardInput, rubric: Rubric, id: string): { prompt: Message[]; responses: string[]; items: Item[] } {
  const prompt = normalizeMessages(input.prompt);
  const responses = rubricRewardResponses(input);
  const items = responses.map((response, index): Item => ({ id: `${id}/${index}`, prompt, response, rubric, ...(input.reference !== undefined ? { reference: input.reference } : {}) }));
  return { prompt, responses, items };
}

/** The reward from each distinct response's score under the rubric (null: not graded). */
export function rubricQuality(input: RubricRewardInput, scoreOf: ReadonlyMap<string, number | null>): RubricQuality {
  const score = (response: string) => scoreOf.get(response) ?? null;
  const scores = [...scoreOf.values()];
  const quality: RubricQuality = {
    reward: null,
    reward_from: input.reward ?? (input.pairs ? 'pairs' : 'spearman'),
    separation: separation(scores),
    responses: { graded: scores.length, errors: scores.filter((value) => value === null).length },
  };
  if (input.pairs) {
    const counts = { higher: 0, lower: 0, tie: 0, error: 0 };
    for (const pair of input.pairs) counts[preferenceOutcome(score(pair.chosen), score(pair.rejected))] += 1;
    const graded = counts.higher + counts.lower + counts.tie;
    quality.pairs = {
      n: input.pairs.length,
      graded,
      reproduced: counts.higher,
      reversed: counts.lower,
      ties: counts.tie,
      errors: counts.error,
      accuracy: graded > 0 ? counts.higher / graded : null,
      accuracy_ties_half: graded > 0 ? (counts.higher + counts.tie / 2) / graded : null,
    };
  }
  if (input.responses) {
    const graded = input.responses.filter((entry) => score(entry.response) !== null);
    const rubricScores = graded.map((entry) => score(entry.response)!);
    const expertScores = graded.map((entry) => entry.score);
    quality.ranking = { n: input.responses.length, graded: graded.length, spearman: spearmanCorrelation(rubricScores, expertScores), kendall: kendallTauB(rubricScores, expertScores) };
  }
  quality.reward = quality.reward_from === 'pairs' ? (quality.pairs?.accuracy ?? null) : (quality.ranking?.[quality.reward_from] ?? null);
  return quality;
}

/** The input read at the edge: a wrong field is INPUT_INVALID naming it. */
export function parseRubricRewardInput(value: unknown, location: { file?: string; line?: number } = {}): RubricRewardInput {
  const parsed = rubricRewardInputSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw zodIssueError(parsed.error, { details: location, omitEmptyField: true });
}
