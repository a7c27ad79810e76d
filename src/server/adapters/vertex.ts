/**
 * Vertex AI reinforcement tuning, Cloud Run reward scorer (`cloudRunRewardScorer.cloudRunUri`
 * = `https://SERVICE/vertex/reward`). Vertex posts, per sampled response:
 *   {example: {contents: [...], systemInstruction?, references?: {name: text}},
 *    response: {role?, parts: [{text}]}, metadata: {step, tuning_job_id}}
 * and expects `{reward ∈ [−1, 1], user_requested_aux_info: string}`.
 *
 * Where the rubric comes from: the training example's `references` map, which holds strings
 * only; `references.rubric` is the rubric as a JSON string (or `references.rubric_id` names a
 * rubric of `serve --rubrics FILE`); `references.reference`, if present, is the reference
 * answer shown to the judge. The prompt is `systemInstruction` plus `contents` (role `model`
 * read as `assistant`); the response is its text parts joined, thought parts left out.
 *
 * Reward mapping: the item score s (of `--scoring`) is clipped to [0, 1] and mapped linearly,
 * reward = 2·s − 1, so "no criterion met" is −1 and "every criterion met" is +1. The aux info
 * is a JSON string with the raw score, status and per-criterion verdicts.
 * A failed sample is answered with the HTTP status of its error and `reward: null`; with
 * `--on-error fallback=X` it is answered 200 with reward X clipped to [−1, 1] (X is on the
 * Vertex scale here; 0 is neutral) and `fallback: true` in the aux info (and logged). An
 * example without a readable rubric is a 400 naming the field, or, with a fallback, the
 * flagged fallback. Rewards (and the score in the aux info) are JSON floats. Requests wait
 * for room in a full queue; past the waiting line or the deadline they get 503 + Retry-After,
 * never a reward. Error messages in answers and aux info carry no judge address.
 */
import { RubricateError, toRubricateError } from '../../errors.js';
import { normalizeRubric } from '../../rubric/normalize.js';
import type { Item, Message, Rubric } from '../../rubric/schema.js';
import { safeParseJson } from '../../util/json.js';
import { readJsonBody } from '../body.js';
import { floatJson, stringifyWithFloatRewards } from '../float-json.js';
import { publicError } from '../public-errors.js';
import { httpStatusOf } from '../http-error.js';
import { derivedItemId } from '../input.js';
import { clip } from '../../statistics/descriptive.js';
import { failedResult, fallbackValue, type RewardResult } from '../rewards.js';
import type { ServerAdapter } from './types.js';
import { isRecord } from '../../util/is-record.js';

/** Vertex waits 5 minutes for a reward. */
export const vertexDeadlineCapMs = 270_000;

/** Text of a Gemini `Content` ({role, parts: [{text}]}); thought parts are the model's scratchpad, not its answer. */
export function contentText(content: unknown): string {
  if (!isRecord(content) || !Array.isArray(content.parts)) return '';
  let text = '';
  for (const part of content.parts) {
    if (isRecord(part) && typeof part.text === 'string' && part.thought !== true) text += part.text;
  }
  return text;
}

/** Maps an item score to Vertex's reward range: clip to [0, 1], then 2·s − 1. */
export function vertexReward(score: number): number {
  return 2 * clip(score, 0, 1) - 1;
}

function exampleMessages(example: Record<string, unknown>): Message[] {
  const messages: Message[] = [];
  const system = example.systemInstruction ?? example.system_instruction;
  const systemText = contentText(system);
  if (systemText !== '') messages.push({ role: 'system', content: systemText });
  const contents = Array.isArray(example.contents) ? example.contents : [];
  for (const content of contents) {
    const role = isRecord(content) && typeof content.role === 'string' ? content.role : 'user';
    messages.push({ role: role === 'model' ? 'assistant' : role, content: contentText(content) });
  }
  if (messages.length === 0) throw new RubricateError('INPUT_INVALID', 'the example has no contents (the prompt)', { field: 'example.contents' });
  return messages;
}

function exampleRubric(references: Record<string, unknown>, rubrics: ReadonlyMap<string, Rubric> | undefined): Rubric {
  if (typeof references.rubric === 'string') {
    const parsed = safeParseJson(references.rubric);
    if (!parsed.ok) throw new RubricateError('INPUT_INVALID', `rubric is not valid JSON: ${parsed.error}`, { field: 'example.references.rubric' });
    return normalizeRubric(parsed.value, { fieldPrefix: 'example.references.rubric' });
  }
  if (isRecord(references.rubric)) return normalizeRubric(references.rubric, { fieldPrefix: 'example.references.rubric' });
  if (references.rubric_id !== undefined) {
    const found = rubrics?.get(String(references.rubric_id));
    if (!found) throw new RubricateError('INPUT_INVALID', `unknown rubric_id "${String(references.rubric_id)}"`, { field: 'example.references.rubric_id' });
    return found;
  }
  throw new RubricateError('INPUT_INVALID', 'no rubric: put it in the example as references.rubric (a JSON string)', { field: 'example.references.rubric' });
}

function auxInfo(result: RewardResult, score: number | null): string {
  return stringifyWithFloatRewards({
    score,
    status: result.status,
    ...(result.fallback ? { fallback: true } : {}),
    ...(result.gated ? { gated: true } : {}),
    ...(result.scripted ? { scripted: true } : {}),
    criteria: result.criteria.map((criterion) => ({ id: criterion.id, met: criterion.met, points: criterion.points })),
    // On the item-score scale (not Vertex's [−1, 1]); null where a component was not scored.
    reward_components: result.reward_components ?? {},
    ...(result.error ? { error: publicError(result.error) } : {}),
  });
}

export const vertexAdapter: ServerAdapter = {
  name: 'vertex',
  description: 'Vertex AI RL tuning Cloud Run reward (POST {example, response, metadata} → {reward ∈ [−1, 1], user_requested_aux_info})',
  routes: ['/vertex/reward'],
  waitsForRoom: true,
  register(app, { service, maxBodyBytes, logger }) {
    app.post('/vertex/reward', async (context) => {
      const body = await readJsonBody(context, maxBodyBytes);
      if (!isRecord(body) || !isRecord(body.example)) throw new RubricateError('INPUT_INVALID', 'expected {"example": {...}, "response": {"parts": [...]}}', { field: 'example' });
      if (!isRecord(body.response) || !Array.isArray(body.response.parts)) throw new RubricateError('INPUT_INVALID', 'expected {"parts": [{"text": ...}]}', { field: 'response' });
      const example = body.example;
      const references = isRecord(example.references) ? example.references : {};
      const fallback = fallbackValue(service.errorPolicy);
      const answerFallback = (result: RewardResult) => {
        result.fallback = true;
        service.metrics.fallbacks.inc();
        context.set('fallbacks', 1);
        logger?.warn({ adapter: 'vertex', error: result.error, fallback }, 'sample not graded: fallback reward');
        return floatJson(context, { reward: clip(fallback ?? 0, -1, 1), user_requested_aux_info: auxInfo(result, null) });
      };
      let rubric: Rubric;
      try {
        rubric = exampleRubric(references, service.rubrics);
      } catch (error) {
        if (fallback === undefined) throw error;
        return answerFallback(failedResult('example', toRubricateError(error, 'INPUT_INVALID')));
      }
      const item: Item = { id: '', prompt: exampleMessages(example), response: contentText(body.response), rubric };
      if (typeof references.reference === 'string') item.reference = references.reference;
      item.id = derivedItemId(item);
      context.set('items', 1);
      const { results } = await service.scoreItems([item], { waitForRoom: true, deadlineMs: Math.min(service.deadlineMs, vertexDeadlineCapMs), fallback: null });
      const result = results[0];
      if (result.reward !== null) return floatJson(context, { reward: vertexReward(result.reward), user_requested_aux_info: auxInfo(result, result.reward) });
      if (fallback !== undefined) return answerFallback(result);
      const error = publicError(result.error ?? { code: 'INTERNAL', message: 'not graded' });
      return floatJson(context, { error: { code: error.code, message: error.message }, reward: null, user_requested_aux_info: auxInfo(result, null) }, httpStatusOf(new RubricateError(error.code, error.message)));
    });
  },
};
