/**
 * OpenRLHF remote reward (`--reward.remote_url http://host:port/get_reward`, formerly
 * `--remote_rm_url`). Request: `{query: [...], prompts: [...], labels: [...]}` where each
 * query is the templated prompt followed by the response, and each label carries the
 * sample's rubric (see label.ts). Extra fields (`metas`) are ignored.
 *
 * Answer: `{rewards, scores, extra_logs}`, every array as long as `query`, always HTTP 200
 * with numbers. OpenRLHF has no way to mask a sample, so a failed sample gets the fallback
 * (`--on-error fallback=X`, 0 by default for this adapter) and `extra_logs.reward_failed`
 * marks it with 1. `scores` are the rewards clipped to [0, 1] (OpenRLHF filters on them).
 * The request waits for room in the admission queue rather than being refused, and is
 * answered within a deadline well inside OpenRLHF's 180 s client timeout.
 * Only requests that are not an OpenRLHF body at all (no `query` list) get a 400.
 */
import { RubricateError, toRubricateError } from '../../errors.js';
import type { Item } from '../../rubric/schema.js';
import { readJsonBody } from '../body.js';
import { derivedItemId } from '../input.js';
import { applyFallback, clip, failedResult, fallbackValue, metFraction, type RewardResult } from '../rewards.js';
import { promptMessages, splitQuery } from './conversation.js';
import { createLabelParser } from './label.js';
import type { ServerAdapter } from './types.js';

/** OpenRLHF's client gives up after 180 s; answer with room to spare. */
export const openRlhfDeadlineCapMs = 150_000;
export const openRlhfDefaultFallback = 0;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const openRlhfAdapter: ServerAdapter = {
  name: 'openrlhf',
  description: 'OpenRLHF --reward.remote_url (POST {query, prompts, labels} → {rewards, scores, extra_logs})',
  routes: ['/get_reward'],
  register(app, { service, maxBodyBytes, logger }) {
    const parseLabel = createLabelParser(service.rubrics);
    app.post('/get_reward', async (context) => {
      const body = await readJsonBody(context, maxBodyBytes);
      if (!isRecord(body) || !Array.isArray(body.query)) {
        throw new RubricateError('INPUT_INVALID', 'expected an OpenRLHF reward request {"query": [...], "prompts": [...], "labels": [...]}', { field: 'query' });
      }
      const queries: unknown[] = body.query;
      const prompts: unknown[] = Array.isArray(body.prompts) ? body.prompts : [];
      const labels: unknown[] = Array.isArray(body.labels) ? body.labels : [];
      context.set('items', queries.length);

      const results = new Array<RewardResult>(queries.length);
      const items: Item[] = [];
      const positions: number[] = [];
      queries.forEach((query, index) => {
        try {
          if (typeof query !== 'string') throw new RubricateError('INPUT_INVALID', 'expected a string', { field: `query[${index}]` });
          if (labels[index] === undefined || labels[index] === null) {
            throw new RubricateError('INPUT_INVALID', 'no label: each sample needs its rubric in `labels`', { field: `labels[${index}]` });
          }
          const label = parseLabel(labels[index], `labels[${index}]`);
          const prompt = typeof prompts[index] === 'string' ? (prompts[index] as string) : undefined;
          const split = splitQuery(query, prompt);
          const item: Item = { id: '', prompt: label.prompt ?? promptMessages(split.promptText), response: split.response, rubric: label.rubric };
          if (label.reference !== undefined) item.reference = label.reference;
          item.id = derivedItemId(item);
          items.push(item);
          positions.push(index);
        } catch (error) {
          const failure = toRubricateError(error, 'INPUT_INVALID');
          logger?.warn({ adapter: 'openrlhf', sample: index, error: failure.toJSON() }, 'sample not graded');
          results[index] = failedResult(`sample_${index}`, failure);
        }
      });

      if (items.length > 0) {
        try {
          const scored = await service.scoreItems(items, {
            waitForRoom: true,
            deadlineMs: Math.min(service.deadlineMs, openRlhfDeadlineCapMs),
            fallback: null,
          });
          scored.results.forEach((result, position) => {
            results[positions[position]] = result;
          });
        } catch (error) {
          const failure = toRubricateError(error);
          logger?.warn({ adapter: 'openrlhf', samples: items.length, error: failure.toJSON() }, 'request not graded');
          positions.forEach((position, itemIndex) => {
            results[position] = failedResult(items[itemIndex].id, failure);
          });
        }
      }

      const fallbacks = applyFallback(results, fallbackValue(service.errorPolicy) ?? openRlhfDefaultFallback);
      if (fallbacks > 0) service.metrics.fallbacks.inc({}, fallbacks);
      context.set('fallbacks', fallbacks);
      const rewards = results.map((result) => result.reward as number);
      return context.json({
        rewards,
        scores: rewards.map((reward) => clip(reward, 0, 1)),
        extra_logs: {
          reward_failed: results.map((result) => (result.fallback ? 1 : 0)),
          criteria_met_fraction: results.map((result) => (result.fallback ? 0 : metFraction(result))),
        },
      });
    });
  },
};
