/**
 * slime remote reward (`--rm-type remote_rm --rm-url http://host:port/slime/reward`, with
 * `--reward-key reward`). slime posts one sample at a time: `{prompt, response, label}`,
 * where `prompt` is the (usually templated) prompt text or a list of messages and `label`
 * carries the rubric (see label.ts). slime stores the whole answer as the sample's reward
 * and picks `reward` out of it with `--reward-key`.
 *
 * A graded sample is answered 200 `{id, reward, status, criteria, usage, gated?}`, `reward`
 * a JSON float. A failed one gets the same object with `reward: null` under the HTTP status
 * of its error code, so slime's client retries it with backoff (identical verdicts come from
 * the cache) and, if it keeps failing, stops the run, slime's own convention; with
 * `--on-error fallback=X` it is answered 200 with `reward: X, fallback: true` instead (logged).
 * A missing or unreadable label is a 400 naming the field unless a fallback is configured.
 * A full queue makes the request wait for room; past the waiting line (`--max-waiting`) or
 * the deadline it is answered 503 with Retry-After (slime retries with backoff), never with a
 * reward. The deadline stays inside slime's 120 s client timeout.
 */
import type { Context } from 'hono';
import { RubricateError, toRubricateError } from '../../errors.js';
import { normalizeMessages } from '../../rubric/normalize.js';
import { messageInputSchema, type Item } from '../../rubric/schema.js';
import { readJsonBody } from '../body.js';
import type { ServerEnv } from '../context.js';
import { httpStatusOf } from '../http-error.js';
import { floatJson } from '../float-json.js';
import { derivedItemId } from '../input.js';
import { publicResult } from '../public-errors.js';
import { failedResult, fallbackValue } from '../rewards.js';
import { promptMessages, stripEndOfTurn } from './conversation.js';
import { createLabelParser } from './label.js';
import type { ServerAdapter } from './types.js';
import { z } from 'zod';
import { isRecord } from '../../util/is-record.js';

export const slimeDeadlineCapMs = 110_000;

const messagesSchema = z.array(messageInputSchema).min(1);

export const slimeAdapter: ServerAdapter = {
  name: 'slime',
  description: 'slime --rm-type remote_rm (POST {prompt, response, label} → {reward, status, criteria})',
  routes: ['/slime/reward', '/reward'],
  waitsForRoom: true,
  register(app, { service, maxBodyBytes, logger }) {
    const parseLabel = createLabelParser(service.rubrics);
    const handler = async (context: Context<ServerEnv>) => {
      const body = await readJsonBody(context, maxBodyBytes);
      if (!isRecord(body)) throw new RubricateError('INPUT_INVALID', 'expected a slime reward request {"prompt", "response", "label"}', { field: 'body' });
      if (typeof body.response !== 'string') throw new RubricateError('INPUT_INVALID', 'expected a string', { field: 'response' });
      let label;
      try {
        if (body.label === undefined || body.label === null || body.label === '') throw new RubricateError('INPUT_INVALID', 'no label: the sample needs its rubric in `label` (--label-key)', { field: 'label' });
        label = parseLabel(body.label, 'label');
      } catch (error) {
        const fallback = fallbackValue(service.errorPolicy);
        if (fallback === undefined) throw error;
        const failure = toRubricateError(error, 'INPUT_INVALID');
        logger?.warn({ adapter: 'slime', error: failure.toJSON(), fallback }, 'invalid sample: fallback reward');
        service.metrics.fallbacks.inc();
        context.set('fallbacks', 1);
        return floatJson(context, publicResult({ ...failedResult('sample', failure), reward: fallback, fallback: true }));
      }
      let prompt = label.prompt;
      if (!prompt) {
        if (typeof body.prompt === 'string') prompt = promptMessages(body.prompt);
        else {
          const messages = messagesSchema.safeParse(body.prompt);
          if (!messages.success) throw new RubricateError('INPUT_INVALID', 'expected the prompt text or a list of {role, content} messages', { field: 'prompt' });
          prompt = normalizeMessages(messages.data);
        }
      }
      const item: Item = { id: '', prompt, response: stripEndOfTurn(body.response), rubric: label.rubric };
      if (label.reference !== undefined) item.reference = label.reference;
      item.id = derivedItemId(item);
      context.set('items', 1);
      const { results, fallbacks } = await service.scoreItems([item], { waitForRoom: true, deadlineMs: Math.min(service.deadlineMs, slimeDeadlineCapMs) });
      context.set('fallbacks', fallbacks);
      const result = results[0];
      if (result.fallback) logger?.warn({ adapter: 'slime', item: item.id, error: result.error, fallback: result.reward }, 'grading failed: fallback reward');
      if (result.reward === null) {
        const error = new RubricateError(result.error?.code ?? 'INTERNAL', result.error?.message ?? 'not graded');
        return floatJson(context, publicResult(result), httpStatusOf(error));
      }
      return floatJson(context, publicResult(result));
    };
    app.post('/slime/reward', handler);
    app.post('/reward', handler);
  },
};
