import { describe, expect } from 'vitest';
import { createRubricEvolver } from '../generation/evolver.js';
import { answer, generatorAndJudge, mentions, type FakeCriterion } from '../generation/fixtures/fake-generator.js';
import { test, type RubricateFixtures } from '../testing/vitest-fixtures.js';
import { createServerApp } from './app.js';
import { startTestServer } from './test-support.js';

/** One loopback server plays both parts: it grades by keyword and proposes what the script hands it next. */
async function setup({ closeAfter, connectJudge }: Pick<RubricateFixtures, 'closeAfter' | 'connectJudge'>, proposals: FakeCriterion[][]) {
  let next = 0;
  const server = closeAfter(await startTestServer({ script: generatorAndJudge(() => ({ content: answer(proposals[next++] ?? []) })) }));
  const generator = connectJudge(server.fake, { model: 'writer' });
  const evolver = closeAfter(createRubricEvolver({ generator, store: ':memory:', topK: 2 }));
  // The app takes the evolver at construction: build one with the test server's service.
  const app = createServerApp({ service: server.service, evolver });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await app.request(path, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return { call };
}

describe('evolving rubrics over HTTP', () => {
  test('a training step proposes criteria, grades the group with them, and retires criteria that do not discriminate', async ({ closeAfter, connectJudge }) => {
    const { call } = await setup({ closeAfter, connectJudge }, [[mentions('sources'), mentions('hello')]]);
    const persistent = await call('PUT', '/v1/rubrics/q1/persistent', { prompt: 'Say hello and cite.', rubric: { criteria: [{ text: 'The response mentions "hello".', points: 2 }] } });
    expect(persistent.status).toBe(200);

    const rollouts = ['hello, with sources', 'hello plain', 'hello again'];
    const step = await call('POST', '/v1/rubrics/q1/step', { prompt: 'Say hello and cite.', rollouts, advantages: 'grpo' });
    expect(step.status).toBe(200);
    // Persistent "hello" (2 points, always met) plus the evolving "sources" (+1, met by the first only).
    expect(step.body.rewards).toEqual([1, 2 / 3, 2 / 3]);
    expect((step.body.advantages as number[])[0]).toBeGreaterThan(0);
    expect(step.body.step).toBe(1);
    // The proposed "hello" repeats the persistent criterion and is skipped; nothing new is retired on its first step.
    const active = await call('GET', '/v1/rubrics/q1');
    expect(((active.body.rubric as { criteria: Array<{ text: string }> }).criteria).map((criterion) => criterion.text)).toEqual(['The response mentions "hello".', 'The response mentions "sources".']);

    const history = await call('GET', '/v1/rubrics/q1/history');
    expect((history.body.history as Array<{ event: string }>).map((event) => event.event)).toContain('added');
  });

  test('answers 404 for an unknown prompt and 400 for a group of fewer than two rollouts', async ({ closeAfter, connectJudge }) => {
    const { call } = await setup({ closeAfter, connectJudge }, []);
    expect((await call('GET', '/v1/rubrics/nope')).status).toBe(404);
    const tooFew = await call('POST', '/v1/rubrics/q1/step', { prompt: 'p', rollouts: ['only one'] });
    expect(tooFew.status).toBe(400);
    expect((tooFew.body.error as { message: string }).message).toMatch(/rollouts must be a list of at least 2/);
  });
});
