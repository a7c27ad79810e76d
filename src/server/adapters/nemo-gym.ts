/**
 * NeMo Gym resources server (`POST /verify`): rubricate stands in for a resources server whose
 * `/verify` grades the rollout against a rubric. The agent server (e.g. NeMo Gym's
 * simple_agent) posts the dataset row with the rollout:
 *   {responses_create_params: {input, instructions?, ...}, response: {output: [...]}, rubric, ...row}
 * and expects the same object back with `reward` (a float). Facts of the protocol, with their
 * source commit, are in fixtures/nemo-gym-verify.json.
 *
 * Where things come from: the rubric is the row's `rubric` (an object or a JSON string) or
 * `rubric_id` (of `serve --rubrics FILE`); `reference`, if a string, is shown to the judge. The
 * prompt is `instructions` (system) plus `input` (a string, or Responses messages whose content is
 * a string or input_text parts); the graded response is the text of the assistant `message`
 * items of `response.output` (reasoning and tool calls are not the answer).
 *
 * Failures: the agent calls `raise_for_status` on the answer, so a sample that could not be graded
 * is answered with its error status (502, 504) and `reward: null`: the rollout fails, loudly.
 * NeMo Gym's own convention for a failed judge, 200 with reward 0.0 and
 * `_ng_failure_class: "judge_failed"`, is kept out of metrics by its rollout collection but read as
 * a real 0.0 by NeMo-RL, so it is answered only with `--on-error fallback=X` (reward X, flagged
 * with `_ng_failure_class`, `fallback: true`, logged). A row without a readable rubric is a 400
 * naming the field (or, with a fallback, the flagged fallback). Requests wait for room like the
 * other trainer routes; NeMo Gym's client has no timeout, so the deadline is `--deadline`.
 */
import type { Context } from 'hono';
import { RubricateError, toRubricateError } from '../../errors.js';
import { normalizeRubric } from '../../rubric/normalize.js';
import type { Item, Message, Rubric } from '../../rubric/schema.js';
import { isRecord } from '../../util/is-record.js';
import { readJsonBody } from '../body.js';
import type { ServerEnv } from '../context.js';
import { floatJson } from '../float-json.js';
import { httpStatusOf } from '../http-error.js';
import { derivedItemId, parseRubricValue } from '../input.js';
import { publicError } from '../public-errors.js';
import { failedResult, fallbackValue, type RewardResult } from '../rewards.js';
import type { ServerAdapter } from './types.js';

/** Text of Responses content: a string, or parts with `text` (input_text, output_text, text). */
function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is Record<string, unknown> => isRecord(part) && typeof part.text === 'string' && part.type !== 'reasoning_text')
    .map((part) => part.text as string)
    .join('');
}

function promptOf(params: unknown): Message[] {
  if (!isRecord(params)) throw new RubricateError('INPUT_INVALID', 'expected the rollout\'s Responses create params {"input": ...}', { field: 'responses_create_params' });
  const messages: Message[] = [];
  if (typeof params.instructions === 'string' && params.instructions !== '') messages.push({ role: 'system', content: params.instructions });
  if (typeof params.input === 'string') messages.push({ role: 'user', content: params.input });
  else if (Array.isArray(params.input)) {
    for (const entry of params.input) {
      // Messages only: earlier tool calls and their outputs are context the rubric does not grade.
      if (isRecord(entry) && typeof entry.role === 'string' && (entry.type === undefined || entry.type === 'message')) messages.push({ role: entry.role === 'developer' ? 'system' : entry.role, content: partsText(entry.content) });
    }
  }
  if (messages.length === 0) throw new RubricateError('INPUT_INVALID', 'no prompt: expected a string or a list of messages', { field: 'responses_create_params.input' });
  return messages;
}

/**
 * The assistant's answer: the text of the `message` items of the Responses output. A rollout
 * without one (only reasoning or tool calls: the model ran out of tokens thinking) has no answer
 * to grade: a 400 naming the field, never the reward of an empty response.
 */
export function responseText(response: unknown): string {
  if (!isRecord(response) || !Array.isArray(response.output)) throw new RubricateError('INPUT_INVALID', 'expected the rollout\'s Responses object {"output": [...]}', { field: 'response.output' });
  const messages = response.output.filter((entry): entry is Record<string, unknown> => isRecord(entry) && entry.type === 'message' && (entry.role === undefined || entry.role === 'assistant'));
  if (messages.length === 0) {
    const kinds = [...new Set(response.output.map((entry) => (isRecord(entry) && typeof entry.type === 'string' ? entry.type : typeof entry)))];
    throw new RubricateError('INPUT_INVALID', `the rollout has no assistant message to grade: response.output holds ${kinds.length > 0 ? kinds.join(', ') : 'nothing'} (no item of type "message")`, { field: 'response.output' });
  }
  return messages
    .map((entry) => partsText(entry.content))
    .filter((text) => text !== '')
    .join('\n\n');
}

function rowRubric(row: Record<string, unknown>, rubrics: ReadonlyMap<string, Rubric> | undefined): Rubric {
  if (row.rubric !== undefined && row.rubric !== null) return normalizeRubric(parseRubricValue(row.rubric), { fieldPrefix: 'rubric' });
  if (row.rubric_id !== undefined && row.rubric_id !== null) {
    const found = rubrics?.get(String(row.rubric_id));
    if (!found) throw new RubricateError('INPUT_INVALID', `unknown rubric_id "${String(row.rubric_id)}"`, { field: 'rubric_id' });
    return found;
  }
  throw new RubricateError('INPUT_INVALID', 'no rubric: put it in the dataset row as `rubric` (an object or a JSON string) or `rubric_id`', { field: 'rubric' });
}

export const nemoGymAdapter: ServerAdapter = {
  name: 'nemo-gym',
  description: 'NeMo Gym resources server (POST /verify {responses_create_params, response, rubric, ...} → the row with reward)',
  routes: ['/verify'],
  waitsForRoom: true,
  register(app, { service, maxBodyBytes, logger }) {
    app.post('/verify', async (context: Context<ServerEnv>) => {
      const body = await readJsonBody(context, maxBodyBytes);
      if (!isRecord(body)) throw new RubricateError('INPUT_INVALID', 'expected a NeMo Gym verify request {"responses_create_params", "response", "rubric", ...}', { field: 'body' });
      const fallback = fallbackValue(service.errorPolicy);
      const answerFallback = (result: RewardResult) => {
        service.metrics.fallbacks.inc();
        context.set('fallbacks', 1);
        logger?.warn({ adapter: 'nemo-gym', error: result.error, fallback }, 'sample not graded: fallback reward');
        const error = publicError(result.error ?? { code: 'INTERNAL', message: 'not graded' });
        return floatJson(context, { ...body, reward: fallback, fallback: true, _ng_failure_class: 'judge_failed', _ng_failure_judge_error: `${error.code}: ${error.message}` });
      };
      let item: Item;
      try {
        item = { id: '', prompt: promptOf(body.responses_create_params), response: responseText(body.response), rubric: rowRubric(body, service.rubrics) };
        if (typeof body.reference === 'string') item.reference = body.reference;
      } catch (error) {
        if (fallback === undefined) throw error;
        return answerFallback(failedResult('row', toRubricateError(error, 'INPUT_INVALID')));
      }
      item.id = derivedItemId(item);
      context.set('items', 1);
      const { results } = await service.scoreItems([item], { waitForRoom: true, fallback: null });
      const result = results[0];
      // NeMo Gym's own name for the named parts of a reward (null where one was not scored).
      if (result.reward !== null) return floatJson(context, { ...body, reward: result.reward, reward_components: result.reward_components ?? {}, ...(result.scripted ? { scripted: true } : {}) });
      if (fallback !== undefined) return answerFallback(result);
      const error = publicError(result.error ?? { code: 'INTERNAL', message: 'not graded' });
      return floatJson(context, { error: { code: error.code, message: error.message }, reward: null, reward_components: result.reward_components ?? {} }, httpStatusOf(new RubricateError(error.code, error.message)));
    });
  },
};
