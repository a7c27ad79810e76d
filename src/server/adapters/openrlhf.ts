/**
 * OpenRLHF remote reward (`--reward.remote_url http://host:port/get_reward`, formerly
 * `--remote_rm_url`). Request: `{query: [...], prompts: [...], labels: [...]}` where each
 * query is the templated prompt followed by the response, and each label carries the
 * sample's rubric (see label.ts). Extra fields (`metas`) are ignored. OpenRLHF ≥ 0.9.1 sends
 * one sample per request; earlier releases send a whole rollout batch in one.
 *
 * Answer: `{rewards, scores, extra_logs}`, every array as long as `query`, every number a
 * JSON float (`1.0`, not `1`: OpenRLHF builds tensors from them, and an all-integer step
 * would become int64, on which `mean()` and `std()` raise). `scores` are the rewards clipped to
 * [0, 1]; `extra_logs.reward_failed` is 1.0 where a fallback stands in.
 *
 * OpenRLHF has no way to mask a sample, and its client retries any non-200 answer 5 times,
 * 1 s apart, before the run stops. So:
 *   - a request refused for load waits for room (up to the deadline); past the waiting line
 *     (`--max-waiting`) or the deadline it gets 503 + Retry-After, never a reward;
 *   - a batch larger than `--max-queue` is admitted in parts, never refused;
 *   - a sample whose grading failed (judge down, unreadable replies, deadline) gets the
 *     fallback of `--on-error fallback=X`, flagged and logged, only when the user asked for
 *     one; without it the request answers the failure's status (502, 504) so OpenRLHF retries
 *     (verdicts already obtained come from the cache) and then stops, loudly;
 *   - a missing or unreadable label is a 400 naming the field (`labels[3]`), or, with a
 *     fallback configured, a flagged and logged fallback.
 * The deadline stays well inside OpenRLHF's 180 s client timeout.
 */
import { RubricateError, toRubricateError } from '../../errors.js';
import type { Item } from '../../rubric/schema.js';
import { readJsonBody } from '../body.js';
import { floatJson } from '../float-json.js';
import { derivedItemId } from '../input.js';
import { publicMessage } from '../public-errors.js';
import { clip } from '../../statistics/descriptive.js';
import { applyFallback, failedResult, fallbackValue, metFraction, type RewardResult } from '../rewards.js';
import { promptMessages, splitQuery } from './conversation.js';
import { createLabelParser } from './label.js';
import type { RouteContext } from '../context.js';
import type { ServerAdapter } from './types.js';
import { isRecord } from '../../util/is-record.js';

/** OpenRLHF's client gives up after 180 s; answer with room to spare. */
export const openRlhfDeadlineCapMs = 150_000;

interface ParsedSamples {
  queries: unknown[];
  items: Item[];
  /** Each item's index among the request's samples. */
  positions: number[];
  invalid: Array<{ index: number; error: RubricateError }>;
}

/** The request's samples as items; a sample that cannot be one is set aside with its reason. */
function parseSamples(body: unknown, parseLabel: ReturnType<typeof createLabelParser>): ParsedSamples {
  if (!isRecord(body) || !Array.isArray(body.query)) {
    throw new RubricateError('INPUT_INVALID', 'expected an OpenRLHF reward request {"query": [...], "prompts": [...], "labels": [...]}', { field: 'query' });
  }
  const queries: unknown[] = body.query;
  const prompts: unknown[] = Array.isArray(body.prompts) ? body.prompts : [];
  const labels: unknown[] = Array.isArray(body.labels) ? body.labels : [];
  const parsed: ParsedSamples = { queries, items: [], positions: [], invalid: [] };
  queries.forEach((query, index) => {
    try {
      if (typeof query !== 'string') throw new RubricateError('INPUT_INVALID', 'expected a string', { field: `query[${index}]` });
      const label = labels[index];
      if (label === undefined || label === null || label === '') {
        throw new RubricateError('INPUT_INVALID', 'no label: each sample needs its rubric in `labels` (OpenRLHF sends "" when --label_key is not set)', { field: `labels[${index}]` });
      }
      const content = parseLabel(label, `labels[${index}]`);
      const prompt = typeof prompts[index] === 'string' ? (prompts[index] as string) : undefined;
      const split = splitQuery(query, prompt);
      const item: Item = { id: '', prompt: content.prompt ?? promptMessages(split.promptText), response: split.response, rubric: content.rubric };
      if (content.reference !== undefined) item.reference = content.reference;
      item.id = derivedItemId(item);
      parsed.items.push(item);
      parsed.positions.push(index);
    } catch (error) {
      parsed.invalid.push({ index, error: toRubricateError(error, 'INPUT_INVALID') });
    }
  });
  return parsed;
}

/** Invalid samples: the request's 400 without a fallback, else failed results the fallback replaces. */
function placeInvalid(samples: ParsedSamples, results: RewardResult[], fallback: number | undefined, logger: RouteContext['logger']): void {
  const { invalid, queries } = samples;
  if (invalid.length === 0) return;
  if (fallback === undefined) {
    const first = invalid[0].error;
    const others = invalid.length > 1 ? ` (and ${invalid.length - 1} more of ${queries.length} samples)` : '';
    throw new RubricateError(first.code, `${first.message}${others}`, { field: first.details.field });
  }
  for (const { index, error } of invalid) {
    logger?.warn({ adapter: 'openrlhf', sample: index, error: error.toJSON(), fallback }, 'invalid sample: fallback reward');
    results[index] = failedResult(`sample_${index}`, error);
  }
}

/** OpenRLHF's answer: every array as long as `query`, made-up verdicts labelled in its own logs. */
function openRlhfAnswer(results: RewardResult[]): Record<string, unknown> {
  const rewards = results.map((result) => result.reward as number);
  // Made-up verdicts (a scripted judge) say so in the trainer's own logs, as one more per-sample series.
  const scripted = results.some((result) => result.scripted);
  return {
    rewards,
    scores: rewards.map((reward) => clip(reward, 0, 1)),
    // Beside OpenRLHF's fields (it reads only those): one object per sample, null where not scored.
    reward_components: results.map((result) => result.reward_components ?? {}),
    extra_logs: {
      reward_failed: results.map((result) => (result.fallback ? 1 : 0)),
      criteria_met_fraction: results.map((result) => (result.fallback ? 0 : metFraction(result))),
      ...(scripted ? { scripted: results.map((result) => (result.scripted ? 1 : 0)) } : {}),
    },
    ...(scripted ? { scripted: true } : {}),
  };
}

export const openRlhfAdapter: ServerAdapter = {
  name: 'openrlhf',
  description: 'OpenRLHF --reward.remote_url (POST {query, prompts, labels} → {rewards, scores, extra_logs})',
  routes: ['/get_reward'],
  waitsForRoom: true,
  register(app, { service, maxBodyBytes, logger }) {
    const parseLabel = createLabelParser(service.rubrics);
    app.post('/get_reward', async (context) => {
      const samples = parseSamples(await readJsonBody(context, maxBodyBytes), parseLabel);
      const fallback = fallbackValue(service.errorPolicy);
      context.set('items', samples.queries.length);
      const results = new Array<RewardResult>(samples.queries.length);
      placeInvalid(samples, results, fallback, logger);
      if (samples.items.length > 0) {
        // Refusals for load (OVERLOADED) propagate: 503 + Retry-After, which OpenRLHF retries.
        const scored = await service.scoreItems(samples.items, { waitForRoom: true, deadlineMs: Math.min(service.deadlineMs, openRlhfDeadlineCapMs), fallback: null });
        scored.results.forEach((result, position) => {
          results[samples.positions[position]] = result;
        });
      }
      const failed = results.findIndex((result) => result.reward === null);
      if (failed !== -1 && fallback === undefined) {
        // No fallback asked for: the failure is the answer, and OpenRLHF retries it.
        const error = results[failed].error;
        const count = results.filter((result) => result.reward === null).length;
        throw new RubricateError(error?.code ?? 'INTERNAL', `sample ${failed} was not graded${count > 1 ? ` (${count} of ${results.length} samples failed)` : ''}: ${publicMessage(error?.message ?? 'unknown failure')}`);
      }
      const fallbacks = applyFallback(results, fallback);
      if (fallbacks > 0) {
        service.metrics.fallbacks.inc({}, fallbacks);
        results.forEach((result, index) => {
          if (result.fallback && result.error?.code !== 'INPUT_INVALID') logger?.warn({ adapter: 'openrlhf', sample: index, error: result.error, fallback }, 'grading failed: fallback reward');
        });
      }
      context.set('fallbacks', fallbacks);
      return floatJson(context, openRlhfAnswer(results));
    });
  },
};
