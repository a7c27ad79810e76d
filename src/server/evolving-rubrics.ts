/**
 * Evolving rubrics for RL (RLER / OnlineRubrics) over HTTP: per prompt, the rubric grows
 * from the differences between the policy's current rollouts and sheds criteria that no
 * longer tell rollouts apart. State (active set and history) lives in the evolver's store:
 * a SQLite file for one replica, Redis (`--evolve-store redis://…`) for several, so every
 * replica sees the same rubrics.
 *
 *   PUT  /v1/rubrics/:id/persistent  {prompt, rubric}                     fixed criteria
 *   POST /v1/rubrics/:id/step        {prompt, rollouts, reference_rollouts?, advantages?, eps?}
 *                                    propose → grade every rollout with the active rubric → observe
 *   POST /v1/rubrics/:id/propose     {prompt, rollouts, reference_rollouts?}
 *   POST /v1/rubrics/:id/observe     {results: [{criteria: [{id, met}]}]}
 *   GET  /v1/rubrics/:id             the active rubric
 *   GET  /v1/rubrics/:id/history     additions and deactivations, with steps
 */
import { floatJson } from './float-json.js';
import { publicResult } from './public-errors.js';
import type { Context } from 'hono';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import type { RubricEvolver } from '../generation/evolver.js';
import { normalizeItem } from '../rubric/normalize.js';
import { z } from 'zod';
import type { Message } from '../rubric/schema.js';
import { advantageEstimators, defaultAdvantageEpsilon, groupAdvantages, type AdvantageEstimator } from './advantages.js';
import { readJsonBody } from './body.js';
import type { RouteContext, ServerApp } from './context.js';
import { isRecord } from '../util/is-record.js';

export const evolvingRubricRoutes = ['/v1/rubrics/:id', '/v1/rubrics/:id/persistent', '/v1/rubrics/:id/step', '/v1/rubrics/:id/propose', '/v1/rubrics/:id/observe', '/v1/rubrics/:id/history'];

/** Verdicts fed back to the evolver: typed strictly, so `{"id": {"$ne": 1}, "met": "yes"}` is a 400, not a verdict. */
const observedResultsSchema = z.array(
  z.looseObject({
    criteria: z.array(
      z.looseObject({
        id: z.string().min(1),
        met: z.boolean().nullable(),
        value: z.number().refine((value) => Number.isFinite(value) && value >= 0 && value <= 1, { message: 'value must be between 0 and 1' }).nullable().optional(),
        status: z.enum(['ok', 'error', 'skipped']).optional(),
      }),
    ),
  }),
);

function promptOf(body: Record<string, unknown>): string | Message[] {
  const prompt = body.prompt;
  if (typeof prompt === 'string' && prompt !== '') return prompt;
  if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((message) => isRecord(message) && typeof message.role === 'string' && typeof message.content === 'string')) {
    return prompt as Message[];
  }
  throw new RubricateError('INPUT_INVALID', 'prompt must be a string or a list of {role, content} messages', { field: 'prompt' });
}

function stringList(value: unknown, field: string, minimum: number): string[] {
  if (!Array.isArray(value) || value.length < minimum || !value.every((entry) => typeof entry === 'string')) {
    throw new RubricateError('INPUT_INVALID', `${field} must be a list of at least ${minimum} strings`, { field });
  }
  return value as string[];
}

async function objectBody(context: Context, maxBodyBytes: number): Promise<Record<string, unknown>> {
  const body = await readJsonBody(context, maxBodyBytes);
  if (!isRecord(body)) throw new RubricateError('INPUT_INVALID', 'expected a JSON object', { field: 'body' });
  return body;
}

function estimatorOf(body: Record<string, unknown>): { estimator?: AdvantageEstimator; epsilon: number } {
  const epsilon = body.eps === undefined ? defaultAdvantageEpsilon : body.eps;
  if (typeof epsilon !== 'number' || !Number.isFinite(epsilon) || epsilon < 0) throw new RubricateError('INPUT_INVALID', 'eps must be a finite number ≥ 0', { field: 'eps' });
  if (body.advantages === undefined || body.advantages === null || body.advantages === false) return { epsilon };
  if (!advantageEstimators.includes(body.advantages as AdvantageEstimator)) {
    throw new RubricateError('INPUT_INVALID', `advantages must be one of ${advantageEstimators.join(', ')}`, { field: 'advantages' });
  }
  return { estimator: body.advantages as AdvantageEstimator, epsilon };
}

export function registerEvolvingRubricRoutes(app: ServerApp, { service, maxBodyBytes }: RouteContext, evolver: RubricEvolver): void {
  const activeOrNotFound = async (id: string) => {
    const rubric = await evolver.activeRubric(id);
    if (!rubric) throw new RubricateError('NOT_FOUND', `no rubric for prompt "${id}" yet: PUT /v1/rubrics/${id}/persistent or POST /v1/rubrics/${id}/step first`);
    return rubric;
  };

  app.get('/v1/rubrics/:id', async (context) => context.json({ id: context.req.param('id'), rubric: await activeOrNotFound(context.req.param('id')) }));

  app.get('/v1/rubrics/:id/history', async (context) => {
    const id = context.req.param('id');
    // A prompt whose every criterion was retired has no active rubric but still has a history.
    const history = await evolver.history(id);
    if (history.length === 0) await activeOrNotFound(id);
    return context.json({ id, history, criteria: await evolver.criteria(id) });
  });

  app.put('/v1/rubrics/:id/persistent', async (context) => {
    const id = context.req.param('id');
    const body = await objectBody(context, maxBodyBytes);
    const rubric = body.rubric;
    if (!isRecord(rubric) && !Array.isArray(rubric)) throw new RubricateError('INPUT_INVALID', 'rubric must be a rubric object or a list of criteria', { field: 'rubric' });
    const criteria = await evolver.setPersistent(id, promptOf(body), (Array.isArray(rubric) ? rubric : (rubric as { criteria?: unknown }).criteria ?? []) as never);
    return context.json({ id, persistent: criteria, rubric: await evolver.activeRubric(id) });
  });

  app.post('/v1/rubrics/:id/propose', async (context) => {
    const id = context.req.param('id');
    const body = await objectBody(context, maxBodyBytes);
    const referenceRollouts = body.reference_rollouts === undefined ? undefined : stringList(body.reference_rollouts, 'reference_rollouts', 1);
    const proposed = await evolver.propose(id, promptOf(body), stringList(body.rollouts, 'rollouts', 2), referenceRollouts);
    return context.json({ ...proposed, rubric: await evolver.activeRubric(id) });
  });

  app.post('/v1/rubrics/:id/observe', async (context) => {
    const id = context.req.param('id');
    const body = await objectBody(context, maxBodyBytes);
    const checked = observedResultsSchema.safeParse(body.results);
    if (!checked.success) {
      throw zodIssueError(checked.error, { prefix: 'results must be a list of graded rollouts {criteria: [{id, met}]}: ', under: ['results'], indexed: true });
    }
    return context.json(await evolver.observe(id, checked.data));
  });

  // One training step for one prompt: new criteria from this group, grade the group with
  // the active rubric, let the verdicts retire criteria that no longer discriminate.
  app.post('/v1/rubrics/:id/step', async (context) => {
    service.assertRoom();
    const id = context.req.param('id');
    const body = await objectBody(context, maxBodyBytes);
    const prompt = promptOf(body);
    const rollouts = stringList(body.rollouts, 'rollouts', 2);
    const referenceRollouts = body.reference_rollouts === undefined ? undefined : stringList(body.reference_rollouts, 'reference_rollouts', 1);
    const { estimator, epsilon } = estimatorOf(body);
    const proposed = await evolver.propose(id, prompt, rollouts, referenceRollouts);
    const rubric = await activeOrNotFound(id);
    const items = rollouts.map((response, index) => normalizeItem({ id: `${id}#${index + 1}`, prompt, response, rubric }));
    context.set('items', items.length);
    const { results, fallbacks } = await service.scoreItems(items);
    context.set('fallbacks', fallbacks);
    const observed = await evolver.observe(
      id,
      results.filter((result) => result.status === 'ok').map((result) => ({ criteria: result.criteria.map((criterion) => ({ id: criterion.id, met: criterion.met, value: criterion.value, status: criterion.status })) })),
    );
    const rewards = results.map((result) => result.reward);
    const answer: Record<string, unknown> = { id, step: proposed.step, rewards, added: proposed.added, deactivated: observed.deactivated, active: observed.active };
    if (estimator) {
      answer.advantages = groupAdvantages(results.map((result) => (result.fallback ? null : result.reward)), estimator, epsilon);
      answer.estimator = estimator;
    }
    answer.results = results.map(publicResult);
    answer.fallbacks = fallbacks;
    return floatJson(context, answer);
  });
}
