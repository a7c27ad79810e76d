/**
 * Rewards from result records. A reward is the item's raw score under the scoring in use;
 * a failed item has no reward (`null`) and says why. Where a trainer needs a number for every
 * sample, a configured fallback stands in and is flagged, so it can be masked or counted,
 * never mistaken for a real zero.
 */
import { emptyUsage, type Usage } from '../engine/usage.js';
import { RubricateError, type SerializedError } from '../errors.js';
import type { GradedCriterion, GroupStamp, ResultRecord } from '../results/results.js';
import { isMadeUp } from '../util/made-up.js';

export interface RewardResult {
  id: string;
  /** Raw item score (or the fallback when `fallback` is set); null when the item failed. */
  reward: number | null;
  status: 'ok' | 'error';
  /** Present (true) when `reward` is the configured fallback standing in for a failure. */
  fallback?: true;
  gated?: boolean;
  criteria: GradedCriterion[];
  usage: Usage;
  error?: SerializedError;
  /** Listwise and tournament judging: the group this response was judged with. */
  group?: GroupStamp;
  /** Present (true) when the verdicts are made up (the scripted judge, `rubricate fake-judge`): never a model's reward. */
  scripted?: true;
  /** Named reward components (reward-components.ts): null where a component was not scored. */
  reward_components?: Record<string, number | null>;
  /** The rubric's declared component weights, when it declares them (the reward is then their weighted sum). */
  reward_weights?: Record<string, number>;
  /** Process rewards: each trajectory step's reward (null: that step not graded); per-step verdicts are each criterion's `process`. */
  step_rewards?: Array<number | null>;
}

/** What to answer for a failed item: `null` (the default), or a flagged number. */
export type ErrorPolicy = { kind: 'null' } | { kind: 'fallback'; value: number };

export const nullPolicy: ErrorPolicy = { kind: 'null' };

/**
 * Parses `--on-error`: `null` or `fallback=X`.
 *
 * @example
 * ```ts
 * import { parseErrorPolicy } from 'rubricate/server';
 * const policy = parseErrorPolicy('fallback=0'); // { kind: 'fallback', value: 0 }
 * ```
 */
export function parseErrorPolicy(text: string): ErrorPolicy {
  const trimmed = text.trim();
  if (trimmed === 'null' || trimmed === 'none') return nullPolicy;
  const match = /^fallback=(.+)$/.exec(trimmed);
  const value = match ? Number(match[1]) : Number.NaN;
  if (!match || !Number.isFinite(value)) {
    throw new RubricateError('CONFIG_INVALID', `--on-error must be "null" or "fallback=NUMBER", got "${text}"`, { field: 'on-error' });
  }
  return { kind: 'fallback', value };
}

export function fallbackValue(policy: ErrorPolicy): number | undefined {
  return policy.kind === 'fallback' ? policy.value : undefined;
}

export function toRewardResult(record: ResultRecord, id = record.id, madeUp = isMadeUp(record)): RewardResult {
  const usage = record.usage ?? emptyUsage();
  const scripted = madeUp ? { scripted: true as const } : {};
  if (record.status === 'ok' && record.score !== null) {
    const result: RewardResult = { id, reward: record.score, status: 'ok', criteria: record.criteria, usage, ...scripted };
    if (record.gated) result.gated = true;
    if (record.group) result.group = record.group;
    if (record.step_rewards) result.step_rewards = record.step_rewards;
    return result;
  }
  const error: SerializedError =
    record.error ??
    (record.status === 'ok'
      ? // Graded, but the scoring has nothing to divide by (e.g. no positive points): no reward exists.
        { code: 'INPUT_INVALID', message: `the ${record.scoring ?? 'configured'} scoring gives this rubric no score (it has no positive points to score against)` }
      : { code: 'INTERNAL', message: 'item failed without a reason' });
  return { id, reward: null, status: 'error', criteria: record.criteria, usage, error, ...(record.group ? { group: record.group } : {}), ...(record.step_rewards ? { step_rewards: record.step_rewards } : {}), ...scripted };
}

/** A failure that never reached grading (bad label, deadline, overload), as a reward result. */
export function failedResult(id: string, error: RubricateError, criteria: GradedCriterion[] = []): RewardResult {
  return { id, reward: null, status: 'error', criteria, usage: emptyUsage(), error: error.toJSON() };
}

/** Replaces missing rewards with the fallback, flagged; returns how many were replaced. */
export function applyFallback(results: RewardResult[], fallback: number | undefined): number {
  if (fallback === undefined) return 0;
  let replaced = 0;
  for (const result of results) {
    if (result.reward !== null) continue;
    result.reward = fallback;
    result.fallback = true;
    replaced += 1;
  }
  return replaced;
}

/** Share of graded criteria that were met (0 when none were graded): a cheap breakdown for logs. */
export function metFraction(result: RewardResult): number {
  let graded = 0;
  let met = 0;
  for (const criterion of result.criteria) {
    if (criterion.status !== 'ok') continue;
    graded += 1;
    if (criterion.met) met += 1;
  }
  return graded === 0 ? 0 : met / graded;
}

