/**
 * `rubricate serve` replicas sharing one Redis: one judge call per distinct request across
 * the fleet (a replica waits for another's answer), a shared cache, and a clear 503 while
 * the store is away. Real processes, a real redis-server, a loopback judge.
 */
import { Redis } from 'ioredis';
import { describe, expect, vi } from 'vitest';
import { redisTest } from '../testing/redis-fixture.js';
import type { RubricateFixtures } from '../testing/vitest-fixtures.js';
import { answer, generatorAndJudge, mentions, type FakeCriterion } from '../generation/fixtures/fake-generator.js';
import { fruitRubric, fruitScore, ruleScript } from './test-support.js';
import { hangGuard } from '../testing/hang-guard.js';

/** Two replicas started with the same flags, each at the address it printed. */
async function startReplicas(startServe: RubricateFixtures['startServe'], args: string[]): Promise<[string, string]> {
  const [first, second] = await Promise.all([startServe(['--log-level', 'warn', ...args]), startServe(['--log-level', 'warn', ...args])]);
  return [first.url, second.url];
}

/** The parts of the /v1/rubrics answers these tests read. */
interface EvolverAnswer {
  rubric: { criteria: Array<{ text: string }> };
  added: Array<{ text: string }>;
  history: Array<{ event: string; text: string }>;
}

const post = (url: string, body: unknown) => fetch(`${url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('serve replicas sharing Redis', () => {
  redisTest('an identical request on a second replica waits for the first one\'s call; the cache is shared; a lost store answers 503 and recovers', async ({ redis, startJudge, startServe }) => {
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const fake = await startJudge(async (request) => {
      // The first call is held until the second replica has received the same request.
      if (request.index === 0) await held;
      return ruleScript(request);
    });
    const args = ['--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--store', redis.url];
    const [first, second] = await startReplicas(startServe, args);
    const item = { prompt: 'Name some fruit.', response: 'apples', rubric: { criteria: [fruitRubric.criteria[0]] } };

    const onFirst = post(first, item);
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1), { timeout: hangGuard(20_000), interval: 10 });
    const onSecond = post(second, item);
    // The second replica found the call claimed and polls for its reply (observed in Redis' command counts). Let the judge answer.
    const observer = new Redis(redis.url);
    await vi.waitFor(async () => expect(await observer.info('commandstats')).toMatch(/cmdstat_exists:calls=[1-9]/), { timeout: hangGuard(20_000), interval: 20 });
    observer.disconnect();
    release!();
    const [a, b] = await Promise.all([onFirst, onSecond]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(await a.json()).toMatchObject({ reward: 1 });
    expect(await b.json()).toMatchObject({ reward: 1 });
    expect(fake.requests).toHaveLength(1);

    // Graded on one replica, cached for the other.
    const pears = { prompt: 'Name some fruit.', response: 'apples and pears', rubric: fruitRubric };
    expect(await (await post(second, pears)).json()).toMatchObject({ reward: fruitScore('apples and pears') });
    const callsSoFar = fake.requests.length;
    expect(await (await post(first, pears)).json()).toMatchObject({ reward: fruitScore('apples and pears') });
    expect(fake.requests).toHaveLength(callsSoFar);

    expect(await (await fetch(`${first}/healthz`)).json()).toMatchObject({ status: 'ok', store: 'ok' });
    await redis.stop();
    await vi.waitFor(async () => expect((await fetch(`${first}/healthz`)).status).toBe(503), { timeout: hangGuard(20_000), interval: 50 });
    const health = await (await fetch(`${first}/healthz`)).json();
    expect(health).toMatchObject({ status: 'degraded', store: 'unavailable' });
    const refused = await post(first, { ...item, response: 'pears' });
    expect(refused.status).toBe(503);
    expect(JSON.stringify(await refused.json())).toContain('STORE_UNAVAILABLE');
    await redis.start();
    await vi.waitFor(async () => expect((await fetch(`${first}/healthz`)).status).toBe(200), { timeout: hangGuard(30_000), interval: 100 });
    expect(await (await post(first, { ...item, response: 'pears' })).json()).toMatchObject({ reward: 0 });
  }, hangGuard(90_000));

  redisTest('evolving rubrics are shared: a step on one replica is seen by the other, and steps taken on both at once lose nothing', async ({ redis, startJudge, startServe }) => {
    const proposals: FakeCriterion[][] = [[mentions('sources'), mentions('hello')], [mentions('citation')], [mentions('example')]];
    let next = 0;
    const fake = await startJudge(generatorAndJudge(() => ({ content: answer(proposals[next++] ?? []) })));
    const args = ['--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--store', redis.url, '--evolve-store', redis.url, '--generator', 'openai:writer', '--generator-base-url', fake.baseUrl];
    const [first, second] = await startReplicas(startServe, args);
    const call = async (url: string, method: string, route: string, body?: unknown) => {
      const response = await fetch(`${url}${route}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: response.status, body: (await response.json()) as EvolverAnswer };
    };
    const prompt = 'Say hello and cite.';
    expect((await call(first, 'PUT', '/v1/rubrics/q/persistent', { prompt, rubric: [{ text: 'The response is polite.', points: 2 }] })).status).toBe(200);
    const seen = await call(second, 'GET', '/v1/rubrics/q');
    expect(seen.status).toBe(200);
    expect(seen.body.rubric.criteria.map((criterion) => criterion.text)).toEqual(['The response is polite.']);

    // A training step on the second replica: both proposals added, "hello" (met by every rollout) retired.
    const step = await call(second, 'POST', '/v1/rubrics/q/step', { prompt, rollouts: ['hello with sources', 'hello plain'] });
    expect(step.status, JSON.stringify(step.body)).toBe(200);
    expect(step.body.added.map((criterion) => criterion.text)).toEqual(['The response mentions "sources".', 'The response mentions "hello".']);
    const history = await call(first, 'GET', '/v1/rubrics/q/history');
    expect(history.body.history.map((event) => `${event.event}: ${event.text}`)).toEqual([
      'persistent: The response is polite.',
      'added: The response mentions "sources".',
      'added: The response mentions "hello".',
      'deactivated: The response mentions "hello".',
    ]);
    expect((await call(first, 'GET', '/v1/rubrics/q')).body.rubric.criteria.map((criterion) => criterion.text)).toEqual(['The response is polite.', 'The response mentions "sources".']);

    // Proposals on both replicas at once for the same prompt: each replica's criterion lands.
    const [onFirst, onSecond] = await Promise.all([
      call(first, 'POST', '/v1/rubrics/q/propose', { prompt, rollouts: ['a', 'b'] }),
      call(second, 'POST', '/v1/rubrics/q/propose', { prompt, rollouts: ['c', 'd'] }),
    ]);
    expect(onFirst.status).toBe(200);
    expect(onSecond.status).toBe(200);
    const texts = (await call(second, 'GET', '/v1/rubrics/q')).body.rubric.criteria.map((criterion) => criterion.text);
    expect(texts).toEqual(expect.arrayContaining(['The response mentions "citation".', 'The response mentions "example".', 'The response mentions "sources".']));
    expect(texts).toHaveLength(4);
  }, hangGuard(90_000));
});
