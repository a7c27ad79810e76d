/**
 * POST /v1/score/groups: several groups (the responses to several prompts) in one request, so
 * that an estimator needing the whole batch can be computed here. `advantages: "gdpo"`
 * normalises each named reward component within its group, weighs and sums them, then whitens
 * the sums over the batch (advantages.ts); `"grpo"` and `"dr_grpo"` are per group, as on
 * `/v1/score/group`, for comparison.
 *   {groups: [{id?, prompt, rubric | rubric_id, responses, reference?}], advantages?, eps?, step?}
 *   → {groups: [{id, rewards, reward_components, advantages?, zero_variance, results}], estimator?, fallbacks}
 */
import { RubricateError } from '../errors.js';
import { isRecord } from '../util/is-record.js';
import { batchAdvantageEstimators, defaultAdvantageEpsilon, gdpoAdvantages, groupAdvantages, type BatchAdvantageEstimator } from './advantages.js';
import { readJsonBody } from './body.js';
import type { RouteContext, ServerApp } from './context.js';
import { floatJson } from './float-json.js';
import { groupItems, parseGroupInput, type GroupInput } from './input.js';
import { publicResult } from './public-errors.js';
import { componentWeights } from './reward-components.js';
import type { RewardResult } from './rewards.js';
import { zeroVariance } from './shaping.js';

/** Groups one request may carry: a trainer step's batch is sent in a few requests, not one huge one. */
export const maxGroupsPerRequest = 64;
/** Responses over all the groups of one request (each is a graded item). */
export const maxResponsesPerGroupsRequest = 2048;

const requestFields = new Set(['groups', 'advantages', 'eps', 'step']);
const groupFields = new Set(['id', 'prompt', 'rubric', 'rubric_id', 'responses', 'reference']);

interface GroupsRequest {
  groups: GroupInput[];
  estimator?: BatchAdvantageEstimator;
  epsilon: number;
  step?: number;
}

function refuseUnknown(record: Record<string, unknown>, known: ReadonlySet<string>, prefix: string): void {
  const unknown = Object.keys(record).filter((key) => !known.has(key));
  if (unknown.length > 0) throw new RubricateError('INPUT_INVALID', `not a setting of /v1/score/groups (${unknown.join(', ')})`, { field: `${prefix}${unknown[0]}` });
}

function parseGroupsRequest(body: unknown, context: Parameters<typeof parseGroupInput>[1]): GroupsRequest {
  if (!isRecord(body) || !Array.isArray(body.groups) || body.groups.length === 0) throw new RubricateError('INPUT_INVALID', 'expected {"groups": [{prompt, rubric, responses}, ...]} with at least one group', { field: 'groups' });
  refuseUnknown(body, requestFields, '');
  // Counted before any group is parsed: the work this request asks for is bounded first.
  if (body.groups.length > maxGroupsPerRequest) throw new RubricateError('INPUT_INVALID', `${body.groups.length} groups in one request; at most ${maxGroupsPerRequest} (send the batch in several requests, or use "grpo" per group)`, { field: 'groups' });
  const total = body.groups.reduce<number>((sum, group) => sum + (isRecord(group) && Array.isArray(group.responses) ? group.responses.length : 0), 0);
  if (total > maxResponsesPerGroupsRequest) throw new RubricateError('INPUT_INVALID', `${total} responses in one request; at most ${maxResponsesPerGroupsRequest}`, { field: 'groups' });
  let estimator: BatchAdvantageEstimator | undefined;
  if (body.advantages !== undefined && body.advantages !== null) {
    if (!batchAdvantageEstimators.includes(body.advantages as BatchAdvantageEstimator)) throw new RubricateError('INPUT_INVALID', `advantages must be one of ${batchAdvantageEstimators.join(', ')}`, { field: 'advantages' });
    estimator = body.advantages as BatchAdvantageEstimator;
  }
  const epsilon = body.eps === undefined ? defaultAdvantageEpsilon : body.eps;
  if (typeof epsilon !== 'number' || !Number.isFinite(epsilon) || epsilon < 0) throw new RubricateError('INPUT_INVALID', 'eps must be a finite number ≥ 0', { field: 'eps' });
  if (body.step !== undefined && (typeof body.step !== 'number' || !Number.isInteger(body.step) || body.step < 0)) throw new RubricateError('INPUT_INVALID', 'the training step must be an integer ≥ 0', { field: 'step' });
  const groups = body.groups.map((group, index) => {
    if (!isRecord(group)) throw new RubricateError('INPUT_INVALID', 'expected a group {prompt, rubric, responses}', { field: `groups[${index}]` });
    refuseUnknown(group, groupFields, `groups[${index}].`);
    try {
      const parsed = parseGroupInput(group, context);
      // Two groups of the same prompt and rubric would share member ids: number them apart.
      return group.id === undefined ? { ...parsed, id: `${parsed.id}_${index}` } : parsed;
    } catch (error) {
      if (RubricateError.isInstance(error) && typeof error.details?.field === 'string') throw new RubricateError(error.code, error.message, { field: `groups[${index}].${error.details.field}` });
      throw error;
    }
  });
  return { groups, epsilon, ...(estimator ? { estimator } : {}), ...(typeof body.step === 'number' ? { step: body.step } : {}) };
}

/** Each component's values over a group's members (null where not scored). */
function groupComponents(results: readonly RewardResult[], names: readonly string[]): Record<string, Array<number | null>> {
  return Object.fromEntries(names.map((name) => [name, results.map((result) => result.reward_components?.[name] ?? null)]));
}

function advantagesOf(request: GroupsRequest, scored: ReadonlyArray<{ results: RewardResult[]; names: string[]; weights: Record<string, number> }>): Array<Array<number | null>> | undefined {
  const { estimator, epsilon } = request;
  if (!estimator) return undefined;
  const real = scored.map(({ results }) => results.map((result) => result.reward !== null && !result.fallback));
  const advantages =
    estimator === 'gdpo'
      ? gdpoAdvantages(
          scored.map(({ results, names, weights }, index) => ({ real: real[index], components: groupComponents(results, names), weights })),
          epsilon,
        )
      : scored.map(({ results }, index) => groupAdvantages(results.map((result, member) => (real[index][member] ? result.reward : null)), estimator, epsilon));
  // Fallback members get a neutral 0, as on /v1/score/group (flagged through results[i].fallback).
  return advantages.map((group, index) => group.map((advantage, member) => (advantage === null && scored[index].results[member].fallback ? 0 : advantage)));
}

export function registerScoreGroupsRoute(app: ServerApp, { service, maxBodyBytes }: RouteContext): void {
  app.post('/v1/score/groups', async (context) => {
    service.assertRoom();
    const body = await readJsonBody(context, maxBodyBytes);
    const request = parseGroupsRequest(body, { rubrics: service.rubrics, rubricCache: service.rubricCache });
    context.set('items', request.groups.reduce((sum, group) => sum + group.responses.length, 0));
    const scored = await Promise.all(
      request.groups.map(async (group) => {
        const { results, fallbacks } = await service.scoreGroup(groupItems(group), { groupId: group.id, ...(request.step !== undefined ? { step: request.step } : {}) });
        const weights = componentWeights(group.rubric);
        return { group, results, fallbacks, names: Object.keys(weights), weights };
      }),
    );
    const advantages = advantagesOf(request, scored);
    const fallbacks = scored.reduce((sum, { fallbacks: count }) => sum + count, 0);
    context.set('fallbacks', fallbacks);
    const groups = scored.map(({ group, results, names }, index) => ({
      id: group.id,
      rewards: results.map((result) => result.reward),
      reward_components: groupComponents(results, names),
      ...(advantages ? { advantages: advantages[index] } : {}),
      zero_variance: zeroVariance(results.map((result) => (result.fallback ? null : result.reward))),
      results: results.map(publicResult),
    }));
    return floatJson(context, { groups, ...(request.estimator ? { estimator: request.estimator } : {}), fallbacks });
  });
}
