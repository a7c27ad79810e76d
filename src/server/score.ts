/**
 * The native reward API:
 *   POST /v1/score        one item            → RewardResult
 *   POST /v1/score/batch  {items: [...]}       → {results, fallbacks}
 *   POST /v1/score/group  {prompt, rubric, responses, advantages?, eps?, shaping?, outcomes?, lengths?, step?}
 *                                              → {id, rewards, raw_rewards?, advantages?, reward_components, zero_variance, shaping?, axes?, results, fallbacks}
 *   POST /v1/score/groups {groups: [...], advantages?: grpo | dr_grpo | gdpo}  (score-groups.ts)
 * Every result carries `reward_components` (reward-components.ts).
 * Every body may carry the trainer's `step` (an integer), which the reward-hacking monitor
 * (`audit.ts`) uses for its trend. Rewards are raw item scores; a failed item has `reward: null` and its reason, unless the
 * server runs with a fallback, which is then flagged per item and counted. Rewards and
 * advantages are JSON floats (`1.0`), and errors carry no internal address (public-errors.ts).
 *
 * A batch is refused as a whole (400 naming the item) when one item is invalid, unless it
 * asks `"on_invalid": "fail_item"`: then each invalid item is a result of its own with
 * `reward: null` and its INPUT_INVALID reason, and the others are graded (the TRL client uses
 * this, so one bad rubric fails only its own row).
 */
import { RubricateError, toRubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { advantageEstimators, defaultAdvantageEpsilon, type AdvantageEstimator } from './advantages.js';
import { groupAnswer, parseGroupRequest } from './group-rewards.js';
import { readJsonBody } from './body.js';
import type { RouteContext, ServerApp } from './context.js';
import { floatJson } from './float-json.js';
import { groupItems, parseGroupInput, parseScoreItem } from './input.js';
import { publicResult } from './public-errors.js';
import { registerScoreGroupsRoute } from './score-groups.js';
import { applyFallback, failedResult, fallbackValue, type RewardResult } from './rewards.js';
import type { Item } from '../rubric/schema.js';
import { isRecord } from '../util/is-record.js';
import { z } from 'zod';

export const scoreRoutes = ['/v1/score', '/v1/score/batch', '/v1/score/group', '/v1/score/groups'] as const;

const stepSchema = z.number().int().nonnegative().optional();

/** The training step a request gives (for the reward-hacking monitor); a wrong one is a 400. */
function stepOf(body: unknown): number | undefined {
  const parsed = stepSchema.safeParse(isRecord(body) ? body.step : undefined);
  if (!parsed.success) throw zodIssueError(parsed.error, { suffix: ' (the training step, an integer ≥ 0)', field: 'step' });
  return parsed.data;
}

export function registerScoreRoutes(app: ServerApp, routeContext: RouteContext): void {
  registerScoreGroupsRoute(app, routeContext);
  registerScoreRoute(app, routeContext);
  registerScoreBatchRoute(app, routeContext);
  registerScoreGroupRoute(app, routeContext);
}

function registerScoreRoute(app: ServerApp, { service, maxBodyBytes }: RouteContext): void {
  app.post('/v1/score', async (context) => {
    service.assertRoom();
    const body = await readJsonBody(context, maxBodyBytes);
    const item = parseScoreItem(body, { rubrics: service.rubrics, rubricCache: service.rubricCache });
    const step = stepOf(body);
    context.set('items', 1);
    const { results, fallbacks } = await service.scoreItems([item], step !== undefined ? { step } : {});
    const result = results[0];
    context.set('fallbacks', fallbacks);
    // One item past its deadline is the request past its deadline: 504, unless a fallback was asked for.
    if (result.error?.code === 'DEADLINE_EXCEEDED' && !result.fallback) throw new RubricateError('DEADLINE_EXCEEDED', result.error.message);
    return floatJson(context, publicResult(result));
  });
}

function registerScoreBatchRoute(app: ServerApp, { service, maxBodyBytes }: RouteContext): void {
  app.post('/v1/score/batch', async (context) => {
    service.assertRoom();
    const body = await readJsonBody(context, maxBodyBytes);
    if (!isRecord(body) || !Array.isArray(body.items)) throw new RubricateError('INPUT_INVALID', 'expected {"items": [...]}', { field: 'items' });
    if (body.on_invalid !== undefined && body.on_invalid !== 'reject' && body.on_invalid !== 'fail_item') {
      throw new RubricateError('INPUT_INVALID', 'on_invalid must be "reject" (the default) or "fail_item"', { field: 'on_invalid' });
    }
    if (body.items.length === 0) return floatJson(context, { results: [], fallbacks: 0 });
    const failItem = body.on_invalid === 'fail_item';
    const results = new Array<RewardResult>(body.items.length);
    const items: Item[] = [];
    const positions: number[] = [];
    body.items.forEach((input, index) => {
      const field = `items[${index}]`;
      try {
        items.push(parseScoreItem(input, { rubrics: service.rubrics, rubricCache: service.rubricCache, field }));
        positions.push(index);
      } catch (error) {
        if (!failItem) throw error;
        const id = isRecord(input) && typeof input.id === 'string' && input.id !== '' ? input.id : field;
        results[index] = failedResult(id, toRubricateError(error, 'INPUT_INVALID'));
      }
    });
    context.set('items', body.items.length);
    let fallbacks = 0;
    const step = stepOf(body);
    if (items.length > 0) {
      const scored = await service.scoreItems(items, step !== undefined ? { step } : {});
      scored.results.forEach((result, position) => {
        results[positions[position]] = result;
      });
      fallbacks += scored.fallbacks;
    }
    if (items.length < results.length) {
      // Invalid items get the fallback too when the server runs with one (flagged, counted).
      const invalidResults = results.filter((result) => result.error?.code === 'INPUT_INVALID' && result.reward === null);
      const replaced = applyFallback(invalidResults, fallbackValue(service.errorPolicy));
      if (replaced > 0) service.metrics.fallbacks.inc({}, replaced);
      fallbacks += replaced;
    }
    context.set('fallbacks', fallbacks);
    return floatJson(context, { results: results.map(publicResult), fallbacks });
  });
}

function registerScoreGroupRoute(app: ServerApp, { service, maxBodyBytes }: RouteContext): void {
  app.post('/v1/score/group', async (context) => {
    service.assertRoom();
    const body = await readJsonBody(context, maxBodyBytes);
    if (!isRecord(body)) throw new RubricateError('INPUT_INVALID', 'expected a JSON object {prompt, rubric, responses}', { field: 'body' });
    let estimator: AdvantageEstimator | undefined;
    if (body.advantages !== undefined && body.advantages !== null && body.advantages !== false) {
      if (!advantageEstimators.includes(body.advantages as AdvantageEstimator)) {
        throw new RubricateError('INPUT_INVALID', `advantages must be one of ${advantageEstimators.join(', ')}`, { field: 'advantages' });
      }
      estimator = body.advantages as AdvantageEstimator;
    }
    const epsilon = body.eps === undefined ? defaultAdvantageEpsilon : body.eps;
    if (typeof epsilon !== 'number' || !Number.isFinite(epsilon) || epsilon < 0) throw new RubricateError('INPUT_INVALID', 'eps must be a finite number ≥ 0', { field: 'eps' });
    const group = parseGroupInput(body, { rubrics: service.rubrics, rubricCache: service.rubricCache });
    const request = parseGroupRequest(body, group.responses.length);
    const items = groupItems(group);
    context.set('items', items.length);
    // Listwise and tournament modes grade the group in one piece; the per-item modes item by item.
    const { results, fallbacks } = await service.scoreGroup(items, { groupId: group.id, ...(request.step !== undefined ? { step: request.step } : {}) });
    context.set('fallbacks', fallbacks);
    const answer = groupAnswer({ id: group.id, responses: group.responses, results, request, ...(estimator ? { estimator } : {}), epsilon, scoring: service.grader.scoring });
    answer.results = results.map(publicResult);
    answer.fallbacks = fallbacks;
    return floatJson(context, answer);
  });
}
