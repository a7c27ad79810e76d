/**
 * The answer of `/v1/score/group` from its members' reward results: shaping (`shaping.ts`),
 * the `zero_variance` flag, per-axis rewards and group-relative advantages, computed from the
 * shaped rewards. Fallback members keep their flagged fallback and take no part in any group
 * statistic. The request's own fields beyond the group (shaping, outcomes, lengths, step) are
 * validated here, at the edge.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { characterCount, toScoredItem } from '../results/results.js';
import type { Scoring } from '../scoring/types.js';
import { groupAdvantages, type AdvantageEstimator } from './advantages.js';
import type { RewardResult } from './rewards.js';
import { shapeGroup, shapingSchema, zeroVariance, type Shaping } from './shaping.js';

export const groupRequestSchema = z.object({
  shaping: shapingSchema.optional(),
  /** Task outcomes in [0, 1], one per response (for `shaping.outcome_mix`, and the length penalty's pass). */
  outcomes: z.array(z.number().min(0).max(1)).optional(),
  /** Response lengths as the trainer counts them (tokens); default: characters. */
  lengths: z.array(z.number().int().nonnegative()).optional(),
  /** The training step, for the reward-hacking monitor's trend. */
  step: z.number().int().nonnegative().optional(),
});

export type GroupRequest = z.output<typeof groupRequestSchema>;

/** The group request's own fields, checked against its responses; a wrong one is a 400 naming it. */
export function parseGroupRequest(body: Record<string, unknown>, responses: number): GroupRequest {
  const parsed = groupRequestSchema.safeParse(body);
  if (!parsed.success) {
    throw zodIssueError(parsed.error, { unknownKeys: 'list', fieldWhenEmpty: '' });
  }
  const request = parsed.data;
  for (const name of ['outcomes', 'lengths'] as const) {
    const values = request[name];
    if (values && values.length !== responses) throw new RubricateError('INPUT_INVALID', `${values.length} entries for ${responses} responses: give one per response`, { field: name });
  }
  if (request.shaping?.outcome_mix && !request.outcomes) throw new RubricateError('INPUT_INVALID', 'shaping.outcome_mix mixes each response\'s outcome with its rubric reward: give `outcomes`, one per response', { field: 'outcomes' });
  return request;
}

/** A response's score over its criteria tagged with each axis (`axis:accuracy` …); null where it has none or failed. */
function axisRewards(results: readonly RewardResult[], prefix: string, scoring: Scoring): Record<string, Array<number | null>> {
  const axes = [...new Set(results.flatMap((result) => result.criteria.flatMap((criterion) => criterion.tags.filter((tag) => tag.startsWith(prefix)))))];
  const rewards: Record<string, Array<number | null>> = {};
  for (const axis of axes) {
    rewards[axis] = results.map((result) => {
      const criteria = result.criteria.filter((criterion) => criterion.tags.includes(axis));
      if (result.status !== 'ok' || criteria.length === 0) return null;
      return scoring.itemScore(toScoredItem({ id: result.id, status: 'ok', criteria, ...(result.gated ? { gated: true } : {}) }));
    });
  }
  return rewards;
}

export interface GroupAnswerInput {
  id: string;
  responses: readonly string[];
  results: RewardResult[];
  request: GroupRequest;
  estimator?: AdvantageEstimator;
  epsilon: number;
  scoring: Scoring;
}

export function groupAnswer({ id, responses, results, request, estimator, epsilon, scoring }: GroupAnswerInput): Record<string, unknown> {
  const raw = results.map((result) => result.reward);
  // Fallback rewards are not real rewards: no shaping, no group statistic.
  const real = results.map((result) => (result.fallback ? null : result.reward));
  const shaping: Shaping | undefined = request.shaping;
  const shaped = shaping
    ? shapeGroup(
        results.map((result, index) => ({
          reward: real[index],
          length: request.lengths?.[index] ?? characterCount(responses[index]),
          ...(request.outcomes ? { outcome: request.outcomes[index] } : {}),
          hardRuleFailed: result.criteria.some((criterion) => criterion.kind === 'hard_rule' && criterion.status === 'ok' && criterion.met === false),
        })),
        shaping,
      )
    : undefined;
  const rewards = shaped ? results.map((result, index) => (result.fallback ? result.reward : shaped.rewards[index])) : raw;
  const realShaped = shaped ? shaped.rewards : real;
  const answer: Record<string, unknown> = { id, rewards };
  if (shaped) answer.raw_rewards = raw;
  if (estimator) {
    const advantages = groupAdvantages(realShaped, estimator, epsilon);
    // Fallback members get a neutral advantage of 0 (flagged through `results[i].fallback`).
    answer.advantages = advantages.map((advantage, index) => (advantage === null && results[index].fallback ? 0 : advantage));
    answer.estimator = estimator;
  }
  // Each named component over the members (null where not scored), as `/v1/score/groups` gives it.
  const names = [...new Set(results.flatMap((result) => Object.keys(result.reward_components ?? {})))];
  answer.reward_components = Object.fromEntries(names.map((name) => [name, results.map((result) => result.reward_components?.[name] ?? null)]));
  // Process rewards: each member's per-step rewards (null for a member without steps).
  if (results.some((result) => result.step_rewards)) answer.step_rewards = results.map((result) => result.step_rewards ?? null);
  answer.zero_variance = shaped ? shaped.zeroVariance : zeroVariance(realShaped);
  if (shaped) answer.shaping = shaped.record;
  if (shaping?.axes) answer.axes = axisRewards(results, shaping.axes.prefix, scoring);
  if (results.some((result) => result.scripted)) answer.scripted = true;
  return answer;
}
