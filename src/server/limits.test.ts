/**
 * Bounded work from the size of a request: a group over `--max-group-size`, or a tournament over
 * `--max-tournament-pairs`, is answered 413 (LIMIT_EXCEEDED, naming the bound) before any judge
 * call, and the server goes on answering. The case runs against `rubricate serve` itself.
 */
import { describe, expect } from 'vitest';
import { startServer } from './start.js';
import { fruitRubric, startTestServer, type TestResponse } from './test-support.js';
import { test } from '../testing/vitest-fixtures.js';

const post = (url: string, body: unknown): Promise<TestResponse> => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('bounds on a group request', () => {
  test('serve --mode tournament: one POST of 3,000 short responses is refused with 413, and the server then answers a normal request', async ({ startJudge, startServe }) => {
    const fake = await startJudge(() => ({ content: { explanation: 'compared', winner: 'tie' } }));
    const serve = await startServe(['--no-cache', '--log-level', 'silent', '--mode', 'tournament', '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl]);
    const responses = Array.from({ length: 3000 }, (_, index) => `answer ${index}`);
    const refused = await post(`${serve.url}/v1/score/group`, { prompt: 'Name a fruit.', rubric: fruitRubric, responses });
    expect(refused.status).toBe(413);
    const { error } = await refused.json();
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.message).toMatch(/the group has 3000 responses, over the bound of 512 \(--max-group-size\)/);
    expect(fake.requests).toHaveLength(0);
    const answered = await post(`${serve.url}/v1/score/group`, { prompt: 'Name a fruit.', rubric: fruitRubric, responses: ['apples', 'pears', 'plums'] });
    expect(answered.status).toBe(200);
    expect((await answered.json()).rewards).toEqual([0.5, 0.5, 0.5]);
    // Three responses, all pairs in both orders.
    expect(fake.requests).toHaveLength(6);
  });

  test('a tournament over --max-tournament-pairs is 413 naming it; identical responses count once; the per-item modes bound the group too', async ({ closeAfter }) => {
    const tournament = closeAfter(await startTestServer({ script: () => ({ content: { explanation: 'compared', winner: 'tie' } }), service: { grading: { plan: { mode: 'tournament', orders: 1 }, limits: { maxTournamentPairs: 10 } } } }));
    const running = await startServer({ service: tournament.service, port: 0 });
    closeAfter({ close: async () => void (await running.close({ drainTimeoutMs: 1_000 })) });
    const group = (responses: string[]) => post(`${running.url}/v1/score/group`, { prompt: 'Name a fruit.', rubric: fruitRubric, responses });
    const six = await group(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(six.status).toBe(413);
    expect((await six.json()).error.message).toMatch(/a tournament of 6 responses \(--tournament all\) takes 15 comparisons, over the bound of 10 \(--max-tournament-pairs\)/);
    expect(tournament.fake.requests).toHaveLength(0);
    const five = await group(['a', 'b', 'c', 'd', 'e', 'a', 'b']);
    expect(five.status).toBe(200);
    expect(tournament.fake.requests).toHaveLength(10);

    const perItem = closeAfter(await startTestServer({ service: { grading: { limits: { maxGroupSize: 4 } } } }));
    const perItemServer = await startServer({ service: perItem.service, port: 0 });
    closeAfter({ close: async () => void (await perItemServer.close({ drainTimeoutMs: 1_000 })) });
    const over = await post(`${perItemServer.url}/v1/score/group`, { prompt: 'Name a fruit.', rubric: fruitRubric, responses: ['apples', 'pears', 'plums', 'figs', 'dates'] });
    expect(over.status).toBe(413);
    expect((await over.json()).error).toMatchObject({ code: 'LIMIT_EXCEEDED', message: expect.stringContaining('over the bound of 4 (--max-group-size)') });
    expect(perItem.fake.requests).toHaveLength(0);
    const within = await post(`${perItemServer.url}/v1/score/group`, { prompt: 'Name a fruit.', rubric: fruitRubric, responses: ['apples', 'pears', 'plums', 'figs'] });
    expect(within.status).toBe(200);
    expect((await within.json()).rewards).toHaveLength(4);
  });
});
