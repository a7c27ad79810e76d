import { afterEach, describe, expect, it } from 'vitest';
import { GradingEngine } from '../engine/engine.js';
import { RubricateError } from '../errors.js';
import { createPerCriterionStrategy } from '../grading/strategies.js';
import { normalizeItem } from '../rubric/normalize.js';
import { binaryVerdict, startFakeJudge, type FakeJudge, type FakeJudgeScript } from '../testing/fake-judge.js';
import { createOpenAICompatibleJudge } from './openai/openai-judge.js';
import { createJudgePool, type JudgePoolEvent } from './pool.js';
import type { Judge, JudgeRequest } from './types.js';

const request: JudgeRequest = { messages: [{ role: 'user', content: 'hello' }], temperature: 0, maxTokens: 16 };
const fakes: FakeJudge[] = [];
const judges: Array<Judge & { close(): Promise<void> }> = [];

afterEach(async () => {
  for (const judge of judges.splice(0)) await judge.close();
  for (const fake of fakes.splice(0)) await fake.close();
});

async function liveEndpoint(script: FakeJudgeScript): Promise<{ fake: FakeJudge; judge: Judge }> {
  const fake = await startFakeJudge(script);
  fakes.push(fake);
  const judge = createOpenAICompatibleJudge({ model: 'm', baseUrl: fake.baseUrl, id: 'openai:m' });
  judges.push(judge);
  return { fake, judge };
}

/** An endpoint whose port was open a moment ago and now refuses connections. */
async function deadEndpoint(): Promise<Judge> {
  const fake = await startFakeJudge(() => ({ content: 'unused' }));
  const baseUrl = fake.baseUrl;
  await fake.close();
  const judge = createOpenAICompatibleJudge({ model: 'm', baseUrl, id: 'openai:m' });
  judges.push(judge);
  return judge;
}

const signal = () => new AbortController().signal;

describe('createJudgePool', () => {
  it('sends each call to the endpoint with the fewest calls outstanding', async () => {
    const slow = await liveEndpoint(() => ({ content: 'slow', delayMs: 300 }));
    const fast = await liveEndpoint(() => ({ content: 'fast', delayMs: 10 }));
    const pool = createJudgePool([slow.judge, fast.judge]);
    // The first call occupies one endpoint; while it is outstanding, the next calls go to the idle one.
    const first = pool.complete(request, { signal: signal() });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const busyEndpoint = pool.status().find((entry) => entry.outstanding === 1)!.endpoint;
    const following: string[] = [];
    for (let index = 0; index < 4; index += 1) following.push((await pool.complete(request, { signal: signal() })).text);
    await first;
    const idleText = busyEndpoint === slow.fake.baseUrl ? 'fast' : 'slow';
    expect(following).toEqual([idleText, idleText, idleText, idleText]);
  });

  it('spreads concurrent calls evenly over equally fast endpoints', async () => {
    const endpoints = await Promise.all([0, 1, 2].map(() => liveEndpoint(() => ({ content: 'ok', delayMs: 40 }))));
    const pool = createJudgePool(endpoints.map((endpoint) => endpoint.judge));
    await Promise.all(Array.from({ length: 12 }, () => pool.complete(request, { signal: signal() })));
    expect(endpoints.map((endpoint) => endpoint.fake.requests.length)).toEqual([4, 4, 4]);
    expect(pool.status().every((entry) => entry.outstanding === 0)).toBe(true);
  });

  it('ejects an unreachable endpoint, fails the call over, and tries it again after the cool-down', async () => {
    let clock = 1_000;
    const events: JudgePoolEvent[] = [];
    const dead = await deadEndpoint();
    const live = await liveEndpoint(() => ({ content: 'ok' }));
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

  it('an endpoint that comes back is restored by one success', async () => {
    let clock = 0;
    let failing = true;
    const flaky: Judge = {
      provenance: { id: 'openai:m', model: 'm', baseUrl: 'http://flaky/v1' },
      async complete() {
        if (failing) throw new RubricateError('JUDGE_CONNECTION', 'connection refused');
        return { text: 'flaky', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 } };
      },
    };
    const live = await liveEndpoint(() => ({ content: 'live', delayMs: 30 }));
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

  it('with every endpoint down, throws a retryable connection error saying when the first comes back', async () => {
    let clock = 0;
    const pool = createJudgePool([await deadEndpoint(), await deadEndpoint()], { cooldownMs: 2_000, now: () => clock });
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

  it('does not fail over or eject on errors that are not about reaching the endpoint', async () => {
    const rejecting = await liveEndpoint(() => ({ status: 400, body: { error: { message: 'bad request' } } }));
    const other = await liveEndpoint(() => ({ content: 'ok' }));
    const pool = createJudgePool([rejecting.judge, other.judge]);
    const outcomes = await Promise.all([0, 1].map(() => pool.complete(request, { signal: signal() }).then((reply) => reply.text, (error: RubricateError) => error.code)));
    expect(outcomes.sort()).toEqual(['JUDGE_REQUEST_REJECTED', 'ok']);
    expect(pool.status().every((entry) => entry.healthy)).toBe(true);
    expect(rejecting.fake.requests).toHaveLength(1);
  });

  it('refuses judges of different models and reports the pooled provenance', async () => {
    const a = createOpenAICompatibleJudge({ model: 'a', baseUrl: 'http://127.0.0.1:9/v1' });
    const b = createOpenAICompatibleJudge({ model: 'b', baseUrl: 'http://127.0.0.1:10/v1' });
    judges.push(a, b);
    expect(() => createJudgePool([a, b])).toThrowError(/same model/);
    expect(() => createJudgePool([])).toThrowError(/at least one judge/);
    const c = createOpenAICompatibleJudge({ model: 'a', baseUrl: 'http://127.0.0.1:11/v1' });
    judges.push(c);
    expect(createJudgePool([a, c]).provenance).toEqual({ id: 'openai:a', model: 'a', baseUrl: 'http://127.0.0.1:9/v1,http://127.0.0.1:11/v1', settings: { profile: 'generic' } });
  });

  it('grades through the engine with one replica down, every criterion ok', async () => {
    const live = await liveEndpoint(() => ({ content: binaryVerdict(true) }));
    const pool = createJudgePool([await deadEndpoint(), live.judge, await deadEndpoint()]);
    const engine = new GradingEngine({ judge: pool, strategy: createPerCriterionStrategy({ sampling: { temperature: 0, maxTokens: 64 } }), retryBaseDelayMs: 5 });
    const item = normalizeItem({ id: 'a', prompt: 'q', response: 'r', rubric: { criteria: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] } });
    const graded = await engine.gradeItem(item);
    expect(graded.status).toBe('ok');
    expect(graded.usage.retries).toBe(0);
    expect(live.fake.requests).toHaveLength(3);
  });
});
