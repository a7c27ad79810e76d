import { describe, expect } from 'vitest';
import { binaryVerdict } from '../testing/fake-judge.js';
import { SqliteReplyStore } from '../store/index.js';
import type { ReplyStore } from '../store/types.js';
import { parseScoreItem } from './input.js';
import { criterionMet, fruitRubric, fruitScore, startTestServer, type TestServer } from './test-support.js';
import { test } from '../testing/vitest-fixtures.js';
import { sealAlignment } from '../spec/alignment.js';

const prompt = 'Name some fruit.';

describe('POST /v1/score', () => {
  test('answers the raw weighted_mean score of a canonical item, with its verdicts and usage', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/v1/score', { id: 'a', prompt, response: 'Rotten apples.', rubric: fruitRubric });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ id: 'a', status: 'ok', reward: fruitScore('Rotten apples.') });
    expect(body.reward).toBe(0.25);
    expect(body.criteria.map((criterion: { id: string; met: boolean }) => [criterion.id, criterion.met])).toEqual([
      ['apples', true],
      ['pears', false],
      ['rotten', true],
    ]);
    expect(body.usage).toMatchObject({ calls: 3, cache_hits: 0 });
    expect(body.fallback).toBeUndefined();
    expect(server.fake.requests).toHaveLength(3);
  });

  test('a conditional rubric: a criterion whose condition fails is not applicable, out of the reward, and not asked', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const rubric = {
      criteria: [
        { id: 'apples', text: 'mentions apples', points: 3 },
        { id: 'pears', text: 'mentions pears', points: 1, when: { criterion: 'apples', verdict: true } },
        { id: 'rotten', text: 'mentions rotten', points: -2, when: { criterion: 'apples', verdict: false } },
      ],
    };
    const body = await (await server.post('/v1/score', { id: 'c', prompt, response: 'Rotten pears.', rubric })).json();
    // apples unmet: pears (mentioned, but not applicable) is left out; rotten applies and is met: −2 ÷ 3.
    expect(body).toMatchObject({ status: 'ok', reward: -2 / 3 });
    expect(body.criteria.map((criterion: { id: string; status: string; skip_reason?: string }) => [criterion.id, criterion.status, criterion.skip_reason ?? null])).toEqual([
      ['apples', 'ok', null],
      ['pears', 'skipped', 'not_applicable'],
      ['rotten', 'ok', null],
    ]);
    expect(server.fake.requests.map((request) => request.criteria[0].id)).toEqual(['apples', 'rotten']);
  });

  test('derives a stable id from the content when none is given, and takes the rubric as a JSON string', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const first = await (await server.post('/v1/score', { prompt, response: 'apples and pears', rubric: fruitRubric })).json();
    const second = await (await server.post('/v1/score', { prompt, response: 'apples and pears', rubric: JSON.stringify(fruitRubric) })).json();
    const other = await (await server.post('/v1/score', { prompt, response: 'only pears', rubric: fruitRubric })).json();
    expect(first.id).toMatch(/^item_[0-9a-f]{16}$/);
    expect(second.id).toBe(first.id);
    expect(other.id).not.toBe(first.id);
    expect([first.reward, second.reward, other.reward]).toEqual([1, 1, 0.25]);
  });

  test('an alignment in the grading plan reaches every call: the judge is shown the reworded criterion', async ({ closeAfter }) => {
    const alignment = sealAlignment({ examples: { criteria: {}, tags: {} }, rewordings: { pears: { text: 'mentions bananas', original: 'mentions pears' } }, calibrator: null });
    const server = closeAfter(await startTestServer({ service: { grading: { plan: { alignment } } } }));
    const body = await (await server.post('/v1/score', { id: 'b', prompt, response: 'apples and bananas', rubric: fruitRubric })).json();
    // Judged as reworded: "bananas" is met where "pears" would not be; the rubric's own text stays.
    expect(body.criteria.map((criterion: { id: string; met: boolean }) => [criterion.id, criterion.met])).toEqual([
      ['apples', true],
      ['pears', true],
      ['rotten', false],
    ]);
    expect(server.fake.requests.map((request) => request.criteria[0].text)).toContain('mentions bananas');
  });

  test('rejects an invalid item with 400 naming the field', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/v1/score', { prompt, response: 'x', rubric: { criteria: [{ text: 'ok', points: 'three' }] } });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toBe('INPUT_INVALID');
    expect(body.error.message).toMatch(/rubric\.criteria\[0\]\.points/);
    expect(Object.keys(body)).toEqual(['error']);
    expect(server.fake.requests).toHaveLength(0);
  });

  test('a failed item has reward null, status error and the reason, never a zero', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: () => ({ content: 'I cannot decide.' }) }));
    const response = await server.post('/v1/score', { id: 'f', prompt, response: 'apples', rubric: fruitRubric });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ id: 'f', reward: null, status: 'error' });
    expect(body.error.code).toBe('JUDGE_UNPARSEABLE');
    expect(body.criteria.every((criterion: { met: boolean | null }) => criterion.met === null)).toBe(true);
    expect(body.fallback).toBeUndefined();
  });

  test('with a fallback policy, a failed item gets the fallback flagged, and the count is reported', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({
      script: (request) => (request.response?.includes('broken') ? { content: 'no json here' } : { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) }),
      service: { onError: { kind: 'fallback', value: -1 } },
    }));
    const single = await (await server.post('/v1/score', { prompt, response: 'broken apples', rubric: fruitRubric })).json();
    expect(single).toMatchObject({ reward: -1, fallback: true, status: 'error' });
    expect(single.error.code).toBe('JUDGE_UNPARSEABLE');
    const batch = await (
      await server.post('/v1/score/batch', {
        items: [
          { prompt, response: 'apples', rubric: fruitRubric },
          { prompt, response: 'broken pears', rubric: fruitRubric },
        ],
      })
    ).json();
    expect(batch.fallbacks).toBe(1);
    expect(batch.results.map((result: { reward: number; fallback?: boolean }) => [result.reward, result.fallback ?? false])).toEqual([
      [0.75, false],
      [-1, true],
    ]);
    expect(server.service.metrics.fallbacks.value()).toBe(2);
  });

  test('an unscorable rubric (no positive points) has no reward, with a reason', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const body = await (await server.post('/v1/score', { prompt, response: 'rotten', rubric: { criteria: [{ text: 'mentions rotten', points: -2 }] } })).json();
    expect(body).toMatchObject({ reward: null, status: 'error' });
    expect(body.error.message).toMatch(/no positive points/);
  });

  test('a failed hard rule gates the item to 0 and says so', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const rubric = { gate: 'hard_rules', criteria: [{ text: 'mentions kiwis', kind: 'hard_rule' }, ...fruitRubric.criteria] };
    const body = await (await server.post('/v1/score', { prompt, response: 'apples and pears', rubric })).json();
    expect(body).toMatchObject({ reward: 0, status: 'ok', gated: true });
    expect(server.fake.requests).toHaveLength(1);
  });
});

describe('POST /v1/score/batch', () => {

  test('writes rewards as JSON floats, so Python reads 1.0 and 0.0, not ints', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const text = await (await server.post('/v1/score/batch', { items: [{ prompt, response: 'apples and pears', rubric: fruitRubric }, { prompt, response: 'nothing', rubric: fruitRubric }] })).text();
    expect(text).toMatch(/"reward":1\.0,/);
    expect(text).toMatch(/"reward":0\.0,/);
    expect(text).toMatch(/"points":3,/);
  });

  test('with on_invalid "fail_item", an invalid item is its own failed result and the others are graded', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const items = [
      { id: 'good', prompt, response: 'apples', rubric: fruitRubric },
      { id: 'bad', prompt, response: 'apples', rubric: { criteria: [{ text: 'x', points: 'many' }] } },
      { prompt, response: 'pears', rubric: 'not json' },
    ];
    const rejected = await server.post('/v1/score/batch', { items });
    expect(rejected.status).toBe(400);
    expect((await rejected.json()).error.message).toMatch(/items\[1\]\.rubric\.criteria\[0\]\.points/);
    const body = await (await server.post('/v1/score/batch', { items, on_invalid: 'fail_item' })).json();
    expect(body.results.map((result: { id: string; reward: number | null }) => [result.id, result.reward])).toEqual([
      ['good', 0.75],
      ['bad', null],
      ['items[2]', null],
    ]);
    expect(body.results[1].error).toMatchObject({ code: 'INPUT_INVALID', details: { field: 'items[1].rubric.criteria[0].points' } });
    expect(body.fallbacks).toBe(0);
    expect((await server.post('/v1/score/batch', { items, on_invalid: 'maybe' })).status).toBe(400);
  });
  test('answers one result per item, in order', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: (request) => ({ content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')), delayMs: request.response === 'pears' ? 60 : 0 }) }));
    const responses = ['pears', 'apples and pears', 'rotten', 'nothing'];
    const body = await (await server.post('/v1/score/batch', { items: responses.map((response, index) => ({ id: `i${index}`, prompt, response, rubric: fruitRubric })) })).json();
    expect(body.results.map((result: { id: string }) => result.id)).toEqual(['i0', 'i1', 'i2', 'i3']);
    expect(body.results.map((result: { reward: number }) => result.reward)).toEqual(responses.map(fruitScore));
    expect(body.fallbacks).toBe(0);
  });

  test('rejects the whole batch when one item is invalid, naming it', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/v1/score/batch', { items: [{ prompt, response: 'a', rubric: fruitRubric }, { prompt, response: 7, rubric: fruitRubric }] });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/items\[1\]\.response/);
    expect(server.fake.requests).toHaveLength(0);
  });

  test('rejects a body without an items list', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/v1/score/batch', [{ prompt }]);
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe('INPUT_INVALID');
  });
});

describe('POST /v1/score/group', () => {
  const responses = ['apples and pears', 'apples', 'broken pears', 'nothing at all'];
  const failOnBroken = { script: (request: { response?: string; criteria: Array<{ text: string }> }) => (request.response?.includes('broken') ? { status: 400 } : { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) }) };

  test('answers raw rewards and GRPO advantages over the members that did not fail', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer(failOnBroken));
    const body = await (await server.post('/v1/score/group', { id: 'g1', prompt, rubric: fruitRubric, responses, advantages: 'grpo', eps: 0 })).json();
    expect(body.id).toBe('g1');
    // Rewards 1, 0.75, failed, 0: mean 7/12, sample std √(((5/12)² + (2/12)² + (7/12)²) ÷ 2) = √39 ÷ 12 = 0.52041…
    expect(body.rewards).toEqual([1, 0.75, null, 0]);
    const mean = 1.75 / 3;
    const std = Math.sqrt(((1 - mean) ** 2 + (0.75 - mean) ** 2 + (0 - mean) ** 2) / 2);
    expect(std).toBeCloseTo(Math.sqrt(39) / 12, 12);
    expect(std).toBeCloseTo(0.520416500, 8);
    expect(body.advantages[0]).toBeCloseTo((1 - mean) / std, 10);
    expect(body.advantages[1]).toBeCloseTo((0.75 - mean) / std, 10);
    expect(body.advantages[2]).toBeNull();
    expect(body.advantages[3]).toBeCloseTo(-mean / std, 10);
    expect(body.results[2]).toMatchObject({ id: 'g1/2', status: 'error', reward: null });
    expect(body.results[2].error.code).toBe('JUDGE_REQUEST_REJECTED');
  });

  test('Dr.GRPO advantages, and no advantages unless asked', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer(failOnBroken));
    const drGrpo = await (await server.post('/v1/score/group', { prompt, rubric: fruitRubric, responses, advantages: 'dr_grpo' })).json();
    const mean = 1.75 / 3;
    expect(drGrpo.advantages.map((value: number | null) => (value === null ? null : Number(value.toFixed(12))))).toEqual([1 - mean, 0.75 - mean, null, -mean].map((value) => (value === null ? null : Number(value.toFixed(12)))));
    expect(drGrpo.id).toMatch(/^group_[0-9a-f]{16}$/);
    const plain = await (await server.post('/v1/score/group', { prompt, rubric: fruitRubric, responses: ['apples'] })).json();
    expect(plain.advantages).toBeUndefined();
    expect(plain.rewards).toEqual([0.75]);
  });

  test('with a fallback, failed members carry the flagged fallback reward but stay out of the statistics', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ ...failOnBroken, service: { onError: { kind: 'fallback', value: 0 } } }));
    const body = await (await server.post('/v1/score/group', { prompt, rubric: fruitRubric, responses, advantages: 'dr_grpo' })).json();
    const mean = 1.75 / 3;
    expect(body.rewards).toEqual([1, 0.75, 0, 0]);
    expect(body.fallbacks).toBe(1);
    expect(body.results[2].fallback).toBe(true);
    expect(body.advantages[2]).toBe(0);
    expect(body.advantages[3]).toBeCloseTo(-mean, 12);
  });

  test('validates the estimator and eps', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const wrongEstimator = await server.post('/v1/score/group', { prompt, rubric: fruitRubric, responses: ['a'], advantages: 'ppo' });
    expect(wrongEstimator.status).toBe(400);
    expect((await wrongEstimator.json()).error.message).toMatch(/advantages/);
    const wrongEps = await server.post('/v1/score/group', { prompt, rubric: fruitRubric, responses: ['a'], advantages: 'grpo', eps: -1 });
    expect(wrongEps.status).toBe(400);
    const noResponses = await server.post('/v1/score/group', { prompt, rubric: fruitRubric, responses: [] });
    expect((await noResponses.json()).error.message).toMatch(/responses/);
  });
});

describe('item-level dedupe', () => {
  test('grades identical (rubric, prompt, response) requests in flight once', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: (request) => ({ content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')), delayMs: 50 }) }));
    const answers = await Promise.all(
      ['x1', 'x2', 'x3', 'x4'].map(async (id) => (await server.post('/v1/score', { id, prompt, response: 'apples and pears', rubric: fruitRubric })).json()),
    );
    expect(answers.map((answer) => answer.id)).toEqual(['x1', 'x2', 'x3', 'x4']);
    expect(answers.every((answer) => answer.reward === 1)).toBe(true);
    // One item went through the engine; the three others joined it.
    expect(server.service.metrics.items.value({ status: 'ok' })).toBe(1);
    expect(server.service.metrics.deduplicated.value()).toBe(3);
    expect(server.fake.requests).toHaveLength(3);
    expect(answers.map((answer) => answer.usage.calls).sort()).toEqual([0, 0, 0, 3]);
    // A different response is its own item.
    await server.post('/v1/score', { id: 'y', prompt, response: 'pears', rubric: fruitRubric });
    expect(server.service.metrics.items.value({ status: 'ok' })).toBe(2);
  });
});

describe('remembered results', () => {
  /** A real SQLite store that counts its lookups. */
  function countingStore(): { store: ReplyStore; reads: () => number } {
    const sqlite = new SqliteReplyStore(':memory:');
    let reads = 0;
    const store: ReplyStore = {
      get: (key) => {
        reads += 1;
        return sqlite.get(key);
      },
      put: (key, reply) => sqlite.put(key, reply),
      close: () => sqlite.close(),
    };
    return { store, reads: () => reads };
  }

  function counts(target: TestServer) {
    const metrics = target.service.metrics;
    return { cacheHits: metrics.cacheHits.value(), judgeCalls: metrics.judgeCalls.value(), items: metrics.items.value({ status: 'ok' }), rewards: metrics.rewards.value({ outcome: 'ok' }) };
  }

  const item = { prompt, response: 'apples and pears', rubric: fruitRubric };

  test('answers an item graded wholly from the store again without reading it: same reward, usage and metrics', async ({ closeAfter }) => {
    const { store, reads } = countingStore();
    const server = closeAfter(await startTestServer({ service: { grading: { store } } }));
    const paid = await (await server.post('/v1/score', { id: 'paid', ...item })).json();
    expect(paid.usage).toMatchObject({ calls: 3, cache_hits: 0 });
    const beforeStored = counts(server);
    const stored = await (await server.post('/v1/score', { id: 'stored', ...item })).json();
    const storedCounts = counts(server);
    expect(stored.usage).toMatchObject({ calls: 0, cache_hits: 3 });
    const readsBefore = reads();
    const reused = await (await server.post('/v1/score', { id: 'reused', ...item })).json();
    expect(reads()).toBe(readsBefore);
    expect(server.fake.requests).toHaveLength(3);
    expect(reused).toEqual({ ...stored, id: 'reused' });
    expect(reused.reward).toBe(1);
    // The metrics move exactly as they did for the grading read from the store.
    const reusedCounts = counts(server);
    expect({
      cacheHits: reusedCounts.cacheHits - storedCounts.cacheHits,
      judgeCalls: reusedCounts.judgeCalls - storedCounts.judgeCalls,
      items: reusedCounts.items - storedCounts.items,
      rewards: reusedCounts.rewards - storedCounts.rewards,
    }).toEqual({
      cacheHits: storedCounts.cacheHits - beforeStored.cacheHits,
      judgeCalls: 0,
      items: 1,
      rewards: 1,
    });
    // Each answer owns its usage.
    const parsed = parseScoreItem({ id: 'direct', ...item }, { rubricCache: server.service.rubricCache });
    const [first, second] = await Promise.all([server.service.scoreItems([parsed]), server.service.scoreItems([parsed])]);
    expect(first.results[0].usage).toEqual(second.results[0].usage);
    expect(first.results[0].usage).not.toBe(second.results[0].usage);
    // A different response is its own item: graded, not reused.
    const other = await (await server.post('/v1/score', { id: 'other', prompt, response: 'pears', rubric: fruitRubric })).json();
    expect(other.reward).toBe(fruitScore('pears'));
    expect(server.fake.requests).toHaveLength(6);
  });

  test('keeps nothing with rememberedResults 0', async ({ closeAfter }) => {
    const { store, reads } = countingStore();
    const server = closeAfter(await startTestServer({ service: { grading: { store }, rememberedResults: 0 } }));
    await server.post('/v1/score', { id: 'paid', ...item });
    const afterPaid = reads();
    await server.post('/v1/score', { id: 'stored', ...item });
    await server.post('/v1/score', { id: 'again', ...item });
    expect(reads() - afterPaid).toBe(6);
    expect(server.fake.requests).toHaveLength(3);
  });
});
