import { describe, expect, vi } from 'vitest';
import { GradingEngine } from '../engine/engine.js';
import { RubricateError } from '../errors.js';
import { createPerCriterionStrategy } from '../grading/strategies.js';
import { normalizeItem } from '../rubric/normalize.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { test, type RubricateFixtures } from '../testing/vitest-fixtures.js';
import { createOpenAICompatibleJudge } from './openai/openai-judge.js';
import { createJudgePool, type JudgePoolEvent } from './pool.js';
import type { Judge, JudgeRequest } from './types.js';

const request: JudgeRequest = { messages: [{ role: 'user', content: 'hello' }], temperature: 0, maxTokens: 16 };
/** Every endpoint of a pool serves the same model. */
const sameModel = { model: 'm' };

/** An endpoint whose port was open a moment ago and now refuses connections. */
async function deadEndpoint({ startJudge, connectJudge }: Pick<RubricateFixtures, 'startJudge' | 'connectJudge'>): Promise<Judge> {
  const fake = await startJudge(() => ({ content: 'unused' }));
  await fake.close();
  return connectJudge(fake, sameModel);
}

const signal = () => new AbortController().signal;

describe('createJudgePool', () => {
  test('sends each call to the endpoint with the fewest calls outstanding', async ({ scriptedJudge }) => {
    // The first call, wherever it goes, is held until the test lets it go; every other one is answered at once.
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let calls = 0;
    const answer = (text: string) => async () => {
      if (calls++ === 0) await firstHeld;
      return { content: text };
    };
    const slow = await scriptedJudge(answer('slow'), sameModel);
    const fast = await scriptedJudge(answer('fast'), sameModel);
    const pool = createJudgePool([slow.judge, fast.judge]);
    // The first call occupies one endpoint; while it is outstanding, the next calls go to the idle one.
    const first = pool.complete(request, { signal: signal() });
    await vi.waitFor(() => expect(slow.fake.requests.length + fast.fake.requests.length).toBe(1));
    const busyEndpoint = pool.status().find((entry) => entry.outstanding === 1)!.endpoint;
    const following: string[] = [];
    for (let index = 0; index < 4; index += 1) following.push((await pool.complete(request, { signal: signal() })).text);
    releaseFirst();
    await first;
    const idleText = busyEndpoint === slow.fake.baseUrl ? 'fast' : 'slow';
    expect(following).toEqual([idleText, idleText, idleText, idleText]);
  });

  test('spreads concurrent calls evenly over equally fast endpoints', async ({ scriptedJudge }) => {
    const endpoints = await Promise.all([0, 1, 2].map(() => scriptedJudge(() => ({ content: 'ok', delayMs: 40 }), sameModel)));
    const pool = createJudgePool(endpoints.map((endpoint) => endpoint.judge));
    await Promise.all(Array.from({ length: 12 }, () => pool.complete(request, { signal: signal() })));
    expect(endpoints.map((endpoint) => endpoint.fake.requests.length)).toEqual([4, 4, 4]);
    expect(pool.status().every((entry) => entry.outstanding === 0)).toBe(true);
  });

  test('ejects an unreachable endpoint, fails the call over, and tries it again after the cool-down', async ({ startJudge, connectJudge, scriptedJudge }) => {
    let clock = 1_000;
    const events: JudgePoolEvent[] = [];
    const dead = await deadEndpoint({ startJudge, connectJudge });
    const live = await scriptedJudge(() => ({ content: 'ok' }), sameModel);
    const pool = createJudgePool([dead, live.judge], { cooldownMs: 5_000, now: () => clock, onEvent: (event) => events.push(event) });

    for (let index = 0; index < 4; index += 1) expect((await pool.complete(request, { signal: signal() })).text).toBe('ok');
    const deadStatus = pool.status()[0];
    expect(deadStatus).toMatchObject({ healthy: false, consecutiveFailures: 1, calls: 1, failures: 1, cooldownRemainingMs: 5_000 });
    expect(live.fake.requests).toHaveLength(4);
    expect(events.filter((event) => event.type === 'ejected')).toHaveLength(1);
    expect(events.find((event) => event.type === 'failover')).toMatchObject({ code: 'JUDGE_CONNECTION' });

    // Cool-down over: the endpoint is tried again, fails again, and its next cool-down doubles.
    clock += 5_001;
    expect((await pool.complete(request, { signal: signal() })).text).toBe('ok');
    await pool.complete(request, { signal: signal() });
    expect(pool.status()[0]).toMatchObject({ healthy: false, consecutiveFailures: 2, calls: 2, cooldownRemainingMs: 10_000 });
  });

  test('an endpoint that comes back is restored by one success', async ({ scriptedJudge }) => {
    let clock = 0;
    let failing = true;
    const flaky: Judge = {
      provenance: { id: 'openai:m', model: 'm', baseUrl: 'http://flaky/v1' },
      capabilities: { images: false },
      async complete() {
        if (failing) throw new RubricateError('JUDGE_CONNECTION', 'connection refused');
        return { text: 'flaky', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } };
      },
    };
    const live = await scriptedJudge(() => ({ content: 'live', delayMs: 30 }), sameModel);
    const events: JudgePoolEvent[] = [];
    const pool = createJudgePool([flaky, live.judge], { cooldownMs: 100, now: () => clock, onEvent: (event) => events.push(event) });
    await pool.complete(request, { signal: signal() });
    expect(pool.status()[0].healthy).toBe(false);
    failing = false;
    clock += 100;
    const texts = await Promise.all([0, 1].map(() => pool.complete(request, { signal: signal() })));
    expect(texts.map((reply) => reply.text).sort()).toEqual(['flaky', 'live']);
    expect(pool.status()[0]).toMatchObject({ healthy: true, consecutiveFailures: 0 });
    expect(events.map((event) => event.type)).toContain('restored');
  });

  test('with every endpoint down, throws a retryable connection error saying when the first comes back', async ({ startJudge, connectJudge }) => {
    let clock = 0;
    const pool = createJudgePool([await deadEndpoint({ startJudge, connectJudge }), await deadEndpoint({ startJudge, connectJudge })], { cooldownMs: 2_000, now: () => clock });
    const first = await pool.complete(request, { signal: signal() }).catch((error: unknown) => error);
    expect(RubricateError.isInstance(first) && first.code).toBe('JUDGE_CONNECTION');
    expect((first as RubricateError).retryable).toBe(true);
    expect(pool.status().map((entry) => entry.calls)).toEqual([1, 1]);
    clock += 500;
    const second = (await pool.complete(request, { signal: signal() }).catch((error: unknown) => error)) as RubricateError;
    expect(second.code).toBe('JUDGE_CONNECTION');
    expect(second.details.retryAfterMs).toBe(1_500);
    expect(second.message).toMatch(/all 2 judge endpoints are unreachable/);
    // No new connection attempts while both cool down.
    expect(pool.status().map((entry) => entry.calls)).toEqual([1, 1]);
  });

  test('does not fail over or eject on errors that are not about reaching the endpoint', async ({ scriptedJudge }) => {
    const rejecting = await scriptedJudge(() => ({ status: 400, body: { error: { message: 'bad request' } } }), sameModel);
    const other = await scriptedJudge(() => ({ content: 'ok' }), sameModel);
    const pool = createJudgePool([rejecting.judge, other.judge]);
    const outcomes = await Promise.all([0, 1].map(() => pool.complete(request, { signal: signal() }).then((reply) => reply.text, (error: RubricateError) => error.code)));
    expect(outcomes.sort()).toEqual(['JUDGE_REQUEST_REJECTED', 'ok']);
    expect(pool.status().every((entry) => entry.healthy)).toBe(true);
    expect(rejecting.fake.requests).toHaveLength(1);
  });

  test('refuses judges of different models and reports the pooled provenance', async ({ closeAfter }) => {
    const a = closeAfter(createOpenAICompatibleJudge({ model: 'a', baseUrl: 'http://127.0.0.1:9/v1' }));
    const b = closeAfter(createOpenAICompatibleJudge({ model: 'b', baseUrl: 'http://127.0.0.1:10/v1' }));
    expect(() => createJudgePool([a, b])).toThrowError(/same model/);
    expect(() => createJudgePool([])).toThrowError(/at least one judge/);
    const c = closeAfter(createOpenAICompatibleJudge({ model: 'a', baseUrl: 'http://127.0.0.1:11/v1' }));
    expect(createJudgePool([a, c]).provenance).toEqual({ id: 'openai:a', model: 'a', baseUrl: 'http://127.0.0.1:9/v1,http://127.0.0.1:11/v1', settings: { profile: 'generic' } });
  });

  test('grades through the engine with one replica down, every criterion ok', async ({ startJudge, connectJudge, scriptedJudge }) => {
    const live = await scriptedJudge(() => ({ content: binaryVerdict(true) }), sameModel);
    const pool = createJudgePool([await deadEndpoint({ startJudge, connectJudge }), live.judge, await deadEndpoint({ startJudge, connectJudge })]);
    const engine = new GradingEngine({ judge: pool, strategy: createPerCriterionStrategy({ sampling: { temperature: 0, maxTokens: 64 } }), calls: { retryBaseDelayMs: 5 } });
    const item = normalizeItem({ id: 'a', prompt: 'q', response: 'r', rubric: { criteria: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] } });
    const graded = await engine.gradeItem(item);
    expect(graded.status).toBe('ok');
    expect(graded.usage.retries).toBe(0);
    expect(live.fake.requests).toHaveLength(3);
  });
});
