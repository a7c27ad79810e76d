/**
 * `/v1/scaffold` and `/v1/rubric-reward` through the app: rollout prompts by the schedule,
 * and a candidate rubric rewarded by the preference pairs it reproduces or its rank
 * correlation with expert scores, failures left out and counted, never scored.
 */
import { describe, expect } from 'vitest';
import { binaryVerdict, listwiseVerdicts } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { criterionMet, fruitRubric, fruitScore, startTestServer } from './test-support.js';

const prompt = 'Name some fruit.';

describe('POST /v1/scaffold', () => {
  test('returns the group’s rollout prompts with the rubric as guidance, decayed by step', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const early = await (await server.post('/v1/scaffold', { prompt, rubric: fruitRubric, step: 1, total_steps: 100, group_size: 4 })).json();
    expect(early.decay).toBeCloseTo(1, 9);
    // 3 criteria × [1, 2/3, 1/3, 0] → 3, 2, 1, 0.
    expect(early.shown.map((ids: string[]) => ids.length)).toEqual([3, 2, 1, 0]);
    expect(early.prompts[0][0].role).toBe('system');
    expect(early.prompts[0][0].content).toContain('mentions apples (3 points)');
    expect(early.prompts[3]).toEqual([{ role: 'user', content: prompt }]);
    expect(early.schedule).toEqual({ rule: 'step_sigmoid', group: 'linear', start: 0.2, steepness: 125 });
    const late = await (await server.post('/v1/scaffold', { prompt, rubric: fruitRubric, step: 60, total_steps: 100, group_size: 4 })).json();
    expect(late.shown.every((ids: string[]) => ids.length === 0)).toBe(true);
    expect(server.fake.requests).toHaveLength(0);
  });

  test('refuses a request without its step, or with a schedule setting it does not know, naming the field', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const missing = await server.post('/v1/scaffold', { prompt, rubric: fruitRubric, total_steps: 10 });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error.message).toMatch(/^field step: /);
    const unknown = await server.post('/v1/scaffold', { prompt, rubric: fruitRubric, step: 1, total_steps: 10, schedule: { middle: 0.5 } });
    expect((await unknown.json()).error.message).toMatch(/field schedule: not a setting \(middle\)/);
  });
});

describe('POST /v1/rubric-reward', () => {
  test('rewards a rubric with the share of preference pairs it reproduces, and its separation', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const pairs = [
      { chosen: 'apples and pears', rejected: 'pears' },
      { chosen: 'apples', rejected: 'rotten apples' },
      { chosen: 'plums', rejected: 'figs' },
      { chosen: 'pears', rejected: 'apples' },
    ];
    const body = await (await server.post('/v1/rubric-reward', { prompt, rubric: fruitRubric, pairs })).json();
    // Reproduced: the first two; a tie (plums, figs: both 0); reversed: the last.
    expect(body.pairs).toEqual({ n: 4, graded: 4, reproduced: 2, reversed: 1, ties: 1, errors: 0, accuracy: 0.5, accuracy_ties_half: 0.625 });
    expect(body).toMatchObject({ reward: 0.5, reward_from: 'pairs', responses: { graded: 6, errors: 0 } });
    expect(body.separation.n).toBe(6);
    // Six distinct responses, three criteria each.
    expect(server.fake.requests).toHaveLength(18);
    expect(body.usage.calls).toBe(18);
  });

  test('rewards a rubric by its rank correlation with expert scores (Spearman, or Kendall when asked)', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const responses = [
      { response: 'apples and pears', score: 9 },
      { response: 'apples', score: 7 },
      { response: 'pears', score: 3 },
      { response: 'rotten pears', score: 5 },
    ];
    // Rubric scores 1, 0.75, 0.25, −0.25: ranks 4, 3, 2, 1 against the experts' 4, 3, 1, 2.
    const spearman = await (await server.post('/v1/rubric-reward', { prompt, rubric: fruitRubric, responses })).json();
    expect(spearman.ranking).toEqual({ n: 4, graded: 4, spearman: 0.8, kendall: expect.closeTo(4 / 6, 12) });
    expect(spearman.reward).toBeCloseTo(0.8, 12);
    const kendall = await (await server.post('/v1/rubric-reward', { prompt, rubric: fruitRubric, responses, reward: 'kendall' })).json();
    expect(kendall.reward).toBeCloseTo(4 / 6, 12);
    expect(responses.map((entry) => fruitScore(entry.response))).toEqual([1, 0.75, 0.25, -0.25]);
  });

  test('a response the judge cannot grade is left out and counted; nothing graded is a null reward with the reason', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: (request) => (request.response?.includes('broken') ? { content: 'no verdict' } : { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) }) }));
    const partly = await (await server.post('/v1/rubric-reward', { prompt, rubric: fruitRubric, pairs: [{ chosen: 'apples', rejected: 'pears' }, { chosen: 'broken', rejected: 'pears' }] })).json();
    expect(partly.pairs).toMatchObject({ graded: 1, reproduced: 1, errors: 1, accuracy: 1 });
    expect(partly.responses).toEqual({ graded: 3, errors: 1 });
    const none = await (await server.post('/v1/rubric-reward', { prompt, rubric: fruitRubric, pairs: [{ chosen: 'broken a', rejected: 'broken b' }] })).json();
    expect(none.reward).toBeNull();
    expect(none.error.code).toBe('JUDGE_UNPARSEABLE');
  });

  test('in listwise mode the responses are graded in one call; a body without pairs or responses is a 400', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: (request) => ({ content: listwiseVerdicts(request, (response, criterion) => criterionMet(criterion.text, response.text)) }), service: { grading: { plan: { mode: 'listwise' } } } }));
    const body = await (await server.post('/v1/rubric-reward', { prompt, rubric: fruitRubric, pairs: [{ chosen: 'apples', rejected: 'pears' }, { chosen: 'pears', rejected: 'rotten' }] })).json();
    expect(server.fake.requests).toHaveLength(1);
    expect(body.reward).toBe(1);
    const empty = await server.post('/v1/rubric-reward', { prompt, rubric: fruitRubric });
    expect(empty.status).toBe(400);
    expect((await empty.json()).error.message).toMatch(/give `pairs`/);
  });
});
