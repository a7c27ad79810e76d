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
import { CarrEvaluator, carrRequestSchema, type CarrAnswer, type CarrRequest } from '../carr.js';
import { floatJson } from '../float-json.js';
import type { RewardService } from '../reward-service.js';
import { slimeDeadlineCapMs } from './slime.js';
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
    const { store, calls, judges = [] } = service.grading;
    // `serve` hands its judge over as a list (juries); CaRR's released server asks one judge.
    if (!service.grading.judge && judges.length > 1) throw new RubricateError('CONFIG_INVALID', `CaRR asks one judge; serve runs ${judges.length} (a jury): start a server with one --judge for /carr/evaluate`);
    const judge = service.grading.judge ?? judges[0];
    if (!judge) throw new RubricateError('JUDGE_UNAVAILABLE', 'CaRR needs a judge: start serve with --judge');
    evaluator ??= new CarrEvaluator({ judge, ...(store ? { store } : {}), ...(calls ? { calls } : {}), onEvent: service.judgeWorkListener });
    return evaluator;
  };
}

/**
 * One trajectory through the admission queue like any trainer sample: one place, held for room
 * until the deadline (inside slime's client timeout), counted in /metrics.
 */
function evaluateAdmitted(service: RewardService, evaluator: () => CarrEvaluator, request: CarrRequest): Promise<CarrAnswer> {
  return service.runAdmitted(1, () => evaluator().evaluate(request), { waitForRoom: true, deadlineMs: Math.min(service.deadlineMs, slimeDeadlineCapMs) });
}

export const carrAdapter: ServerAdapter = {
  name: 'carr',
  description: "CaRR's reward server (POST {history, label, task_unfinished, remote_env_info} → {reward, outcome_reward, rubric_reward, rubric_scores})",
  routes: ['/carr/evaluate', '/carr/evaluate/group'],
  waitsForRoom: true,
  register(app, { service, maxBodyBytes }) {
    const evaluator = evaluatorOf(service);
    app.post('/carr/evaluate', async (context) => {
      const request = parsed(carrRequestSchema, await readJsonBody(context, maxBodyBytes));
      evaluator(); // no judge: refused before admission
      context.set('items', 1);
      return floatJson(context, await evaluateAdmitted(service, evaluator, request));
    });
    app.post('/carr/evaluate/group', async (context) => {
      const { requests, group } = parsed(groupRequestSchema, await readJsonBody(context, maxBodyBytes));
      evaluator(); // no judge: refused before admission
      context.set('items', requests.length);
      const results = await Promise.all(requests.map((request) => evaluateAdmitted(service, evaluator, request)));
      const rewards = carrGroupRewards(results.map((result) => ({ outcome: result.outcome_reward, rubric: result.rubric_reward })), group);
      return floatJson(context, { rewards, results });
    });
  },
};
