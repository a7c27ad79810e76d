/**
 * What RL training asks of the service beside rewards for responses:
 *   POST /v1/scaffold       {prompt, rubric | rubric_id, step, total_steps, group_size?, schedule?, seed?}
 *                           → {decay, prompts, ratios, shown, schedule}: RuscaRL's rollout prompts
 *   POST /v1/rubric-reward  {prompt, rubric, reference?, pairs? | responses?, reward?}
 *                           → {id, reward, reward_from, pairs?, ranking?, separation, responses, usage}:
 *                             the reward of a rubric generator
 * Bodies are validated at the edge (a 400 names the field). The rubric reward grades its
 * responses as the service grades any group (one listwise call in that mode), behind the same
 * admission queue and deadline; a response it could not grade is left out and counted.
 */
import { z } from 'zod';
import { addUsage, emptyUsage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { parseRubricRewardInput, rubricQuality, rubricRewardItems } from '../generation/rubric-reward.js';
import { memoizedRubricHash } from '../rubric/hashing.js';
import { normalizeMessages } from '../rubric/normalize.js';
import { messageInputSchema, type Rubric } from '../rubric/schema.js';
import { isRecord } from '../util/is-record.js';
import { readJsonBody } from './body.js';
import type { RouteContext, ServerApp } from './context.js';
import { floatJson } from './float-json.js';
import { publicError } from './public-errors.js';
import type { RewardService } from './reward-service.js';
import { scaffoldGroup, scaffoldScheduleSchema } from './scaffolding.js';

export const rlRoutes = ['/v1/scaffold', '/v1/rubric-reward'] as const;

const scaffoldRequestSchema = z.object({
  prompt: z.union([z.string().min(1), z.array(messageInputSchema).min(1)]),
  rubric: z.unknown().optional(),
  rubric_id: z.union([z.string().min(1), z.number()]).optional(),
  /** The training step, from 1 (verl's `global_steps`). */
  step: z.number().int().min(1),
  total_steps: z.number().int().min(1),
  /** Rollouts per prompt (default 1). */
  group_size: z.number().int().min(1).max(1024).default(1),
  schedule: scaffoldScheduleSchema.default({ start: 0.2, steepness: 125 }),
  seed: z.number().int().default(0),
});

function invalid(error: z.ZodError): RubricateError {
  return zodIssueError(error, { unknownKeys: 'list', omitEmptyField: true });
}

/** A request's rubric: given (object or JSON string), or named by `rubric_id` (`serve --rubrics`). */
function rubricOf(body: { rubric?: unknown; rubric_id?: string | number }, service: RewardService): Rubric {
  if (body.rubric !== undefined) return service.rubricCache.normalize(body.rubric);
  if (body.rubric_id !== undefined) {
    const found = service.rubrics?.get(String(body.rubric_id));
    if (!found) throw new RubricateError('INPUT_INVALID', `unknown rubric_id "${String(body.rubric_id)}"`, { field: 'rubric_id' });
    return found;
  }
  throw new RubricateError('INPUT_INVALID', 'give `rubric` or `rubric_id`', { field: 'rubric' });
}

export function registerRlRoutes(app: ServerApp, { service, maxBodyBytes }: RouteContext): void {
  app.post('/v1/scaffold', async (context) => {
    const body = await readJsonBody(context, maxBodyBytes);
    const parsed = scaffoldRequestSchema.safeParse(body);
    if (!parsed.success) throw invalid(parsed.error);
    const request = parsed.data;
    const rubric = rubricOf(request as { rubric?: unknown; rubric_id?: string | number }, service);
    const { decay, rollouts } = scaffoldGroup({ prompt: normalizeMessages(request.prompt), rubric, step: request.step, totalSteps: request.total_steps, groupSize: request.group_size, schedule: request.schedule, seed: request.seed });
    return context.json({
      step: request.step,
      total_steps: request.total_steps,
      decay,
      prompts: rollouts.map((rollout) => rollout.prompt),
      ratios: rollouts.map((rollout) => rollout.ratio),
      shown: rollouts.map((rollout) => rollout.shown),
      schedule: { rule: 'step_sigmoid', group: 'linear', ...request.schedule },
    });
  });

  app.post('/v1/rubric-reward', async (context) => {
    service.assertRoom();
    const body = await readJsonBody(context, maxBodyBytes);
    const input = parseRubricRewardInput(body);
    const rubric = rubricOf(isRecord(body) ? (body as { rubric?: unknown }) : {}, service);
    const id = input.id !== undefined ? String(input.id) : `rubric_${memoizedRubricHash(rubric).slice(0, 16)}`;
    const { responses, items } = rubricRewardItems(input, rubric, id);
    context.set('items', items.length);
    // Graded as any group: the responses share the prompt, so one listwise call in that mode. Failures are left out, never scored.
    const { results } = await service.scoreGroup(items, { fallback: null, groupId: id });
    const usage = emptyUsage();
    for (const result of results) addUsage(usage, result.usage);
    const quality = rubricQuality(input, new Map(responses.map((response, index) => [response, results[index].reward])));
    const failed = results.find((result) => result.error);
    return floatJson(context, { id, ...quality, ...(quality.reward === null && failed?.error ? { error: publicError(failed.error) } : {}), usage });
  });
}
