/**
 * CaRR's reward server (THUDM's `deepsearch_rm_with_rubrics`), same body, same answer:
 *
 *   POST /carr/evaluate        {history, label, task_unfinished, remote_env_info: {search_forbidden_strs,
 *                              rubrics, rubric_reward_ratio}} → {reward, outcome_reward, rubric_reward, rubric_scores}
 *   POST /carr/evaluate/group  {requests: [that body, …], group: {ratio, normalize, only, follow}}
 *                              → {rewards, results}: C-GRPO's group rewards beside each request's answer
 *
 * slime's own `remote_rm` (the CaRR fork's `reward_model_info: {function: "remote_rm", kwargs:
 * {remote_url, input_keys}}`) posts the first unchanged. A failed judge is the error's HTTP status
 * (slime retries, then stops), never a 0; a group with a failed member has no rewards at all.
 */
import { z } from 'zod';
import { RubricateError } from '../../errors.js';
import { zodIssueError } from '../../util/zod-issue.js';
import { carrGroupRewards } from '../../scoring/carr.js';
import { readJsonBody } from '../body.js';
import { CarrEvaluator, carrRequestSchema } from '../carr.js';
import { floatJson } from '../float-json.js';
import type { RewardService } from '../reward-service.js';
import type { ServerAdapter } from './types.js';

const groupRequestSchema = z.strictObject({
  requests: z.array(carrRequestSchema).min(1).max(1024),
  group: z.strictObject({
    ratio: z.number().min(0).max(1).default(0.3),
    normalize: z.enum(['none', 'group-max']).default('none'),
    only: z.enum(['all', 'correct', 'incorrect']).default('all'),
    follow: z.enum(['release', 'paper']).default('release'),
  }),
});

function parsed<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw zodIssueError(result.error, { unknownKeys: 'list', omitEmptyField: true });
}

function evaluatorOf(service: RewardService): () => CarrEvaluator {
  let evaluator: CarrEvaluator | undefined;
  return () => {
    const { judge, store, calls } = service.grading;
    if (!judge) throw new RubricateError('JUDGE_UNAVAILABLE', 'CaRR needs a judge: start serve with --judge');
    evaluator ??= new CarrEvaluator({ judge, ...(store ? { store } : {}), ...(calls ? { calls } : {}) });
    return evaluator;
  };
}

export const carrAdapter: ServerAdapter = {
  name: 'carr',
  description: "CaRR's reward server (POST {history, label, task_unfinished, remote_env_info} → {reward, outcome_reward, rubric_reward, rubric_scores})",
  routes: ['/carr/evaluate', '/carr/evaluate/group'],
  waitsForRoom: false,
  register(app, { service, maxBodyBytes }) {
    const evaluator = evaluatorOf(service);
    app.post('/carr/evaluate', async (context) => {
      service.assertRoom();
      const request = parsed(carrRequestSchema, await readJsonBody(context, maxBodyBytes));
      context.set('items', 1);
      return floatJson(context, await evaluator().evaluate(request));
    });
    app.post('/carr/evaluate/group', async (context) => {
      service.assertRoom();
      const { requests, group } = parsed(groupRequestSchema, await readJsonBody(context, maxBodyBytes));
      context.set('items', requests.length);
      const results = await Promise.all(requests.map((request) => evaluator().evaluate(request)));
      const rewards = carrGroupRewards(results.map((result) => ({ outcome: result.outcome_reward, rubric: result.rubric_reward })), group);
      return floatJson(context, { rewards, results });
    });
  },
};
