/**
 * slime remote reward (`--rm-type remote_rm --rm-url http://host:port/slime/reward`, with
 * `--reward-key reward`). slime posts one sample at a time: `{prompt, response, label}`,
 * where `prompt` is the (usually templated) prompt text or a list of messages and `label`
 * carries the rubric (see label.ts). slime stores the whole answer as the sample's reward
 * and picks `reward` out of it with `--reward-key`.
 *
 * A graded sample is answered 200 `{id, reward, status, criteria, usage, gated?}`. A failed
 * one gets the same object with `reward: null` under the HTTP status of its error code, so
 * slime's client retries it with backoff (identical verdicts come from the cache) and, if it
 * keeps failing, stops the run, slime's own convention; with `--on-error fallback=X` it is
 * answered 200 with `reward: X, fallback: true` instead. A full queue answers 503 with
 * Retry-After (slime retries). The deadline stays inside slime's 120 s client timeout.
 */
import type { Context } from 'hono';
import { RubricateError } from '../../errors.js';
import { normalizeMessages } from '../../rubric/normalize.js';
import { messageInputSchema, type Item } from '../../rubric/schema.js';
import { readJsonBody } from '../body.js';
import type { ServerEnv } from '../context.js';
import { httpStatusOf } from '../http-error.js';
import { derivedItemId } from '../input.js';
import { promptMessages, stripEndOfTurn } from './conversation.js';
import { createLabelParser } from './label.js';
import type { ServerAdapter } from './types.js';
import { z } from 'zod';

export const slimeDeadlineCapMs = 110_000;

const messagesSchema = z.array(messageInputSchema).min(1);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const slimeAdapter: ServerAdapter = {
  name: 'slime',
  description: 'slime --rm-type remote_rm (POST {prompt, response, label} → {reward, status, criteria})',
  routes: ['/slime/reward', '/reward'],
  register(app, { service, maxBodyBytes }) {
    const parseLabel = createLabelParser(service.rubrics);
    const handler = async (context: Context<ServerEnv>) => {
      service.assertRoom();
      const body = await readJsonBody(context, maxBodyBytes);
      if (!isRecord(body)) throw new RubricateError('INPUT_INVALID', 'expected a slime reward request {"prompt", "response", "label"}', { field: 'body' });
      if (typeof body.response !== 'string') throw new RubricateError('INPUT_INVALID', 'expected a string', { field: 'response' });
      const label = parseLabel(body.label, 'label');
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
      const { results, fallbacks } = await service.scoreItems([item], { deadlineMs: Math.min(service.deadlineMs, slimeDeadlineCapMs) });
      context.set('fallbacks', fallbacks);
      const result = results[0];
      if (result.reward === null) {
        const error = new RubricateError(result.error?.code ?? 'INTERNAL', result.error?.message ?? 'not graded');
        return context.json(result, httpStatusOf(error) as 500);
      }
      return context.json(result);
    };
    app.post('/slime/reward', handler);
    app.post('/reward', handler);
  },
};
