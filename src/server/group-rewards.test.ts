/**
 * `/v1/score/group` in the group modes and with shaping: one listwise call for the group, the
 * shaped rewards and what shaping did recorded in the answer, `zero_variance`, advantages from
 * the shaped rewards, per-axis rewards, and the new fields checked at the edge.
 */
import { describe, expect } from 'vitest';
import { listwiseVerdicts, type FakeJudgeRequest } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { criterionMet, fruitRubric, fruitScore, startTestServer } from './test-support.js';

const prompt = 'Name some fruit.';
const listwiseRule = (request: FakeJudgeRequest) => ({ content: listwiseVerdicts(request, (response, criterion) => criterionMet(criterion.text, response.text)) });
const listwise = { script: listwiseRule, service: { grading: { plan: { mode: 'listwise' as const } } } };

describe('POST /v1/score/group with group judging and shaping', () => {
  test('listwise: the whole group in one judge call, a reward per response, advantages and zero_variance', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer(listwise));
    const responses = ['apples', 'pears', 'rotten apples', 'apples and pears', 'plums', 'pears', 'apples', 'nothing'];
    const body = await (await server.post('/v1/score/group', { id: 'g', prompt, rubric: fruitRubric, responses, advantages: 'dr_grpo' })).json();
    // Six distinct responses, one call.
    expect(server.fake.requests).toHaveLength(1);
    expect(server.fake.requests[0].responses).toHaveLength(6);
    expect(body.rewards).toEqual(responses.map(fruitScore));
    const mean = responses.map(fruitScore).reduce((sum, value) => sum + value, 0) / responses.length;
    body.advantages.forEach((advantage: number, index: number) => expect(advantage).toBeCloseTo(fruitScore(responses[index]) - mean, 12));
    expect(body.zero_variance).toBe(false);
    expect(body.results[0].group).toMatchObject({ id: 'g', members: 8, index: 0 });
    expect(body.results.map((result: { usage: { calls: number } }) => result.usage.calls)).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
  });

  test('a group whose rewards are all equal is flagged', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer(listwise));
    const body = await (await server.post('/v1/score/group', { prompt, rubric: fruitRubric, responses: ['plums', 'figs', 'dates'], advantages: 'grpo' })).json();
    expect(body.rewards).toEqual([0, 0, 0]);
    expect(body.zero_variance).toBe(true);
    expect(body.advantages).toEqual([0, 0, 0]);
  });

  test('shaping: length penalty, outcome mixing and the veto, applied in that order and recorded; advantages from the shaped rewards', async ({ closeAfter }) => {
    const rubric = { criteria: [...fruitRubric.criteria, { id: 'safe', text: 'mentions fresh', points: 1, kind: 'hard_rule', tags: ['axis:safety'] }].map((criterion, index) => ({ ...criterion, tags: index < 2 ? ['axis:completeness'] : ['axis:safety'] })) };
    const server = closeAfter(await startTestServer(listwise));
    const responses = ['fresh apples and pears', 'fresh pears', 'rotten apples'];
    const request = { prompt, rubric, responses, lengths: [10, 20, 30], outcomes: [1, 0, 1], advantages: 'dr_grpo', shaping: { outcome_mix: { lambda: 0.5 }, length_penalty: { weight: 0.2 }, veto: { value: -1 }, axes: {} } };
    const body = await (await server.post('/v1/score/group', request)).json();
    // Raw (Σ met points ÷ 5): 5/5, 2/5, (3 − 2)/5.
    expect(body.raw_rewards).toEqual([1, 0.4, 0.2]);
    // Mixed: 0.5·outcome + 0.5·raw = 1, 0.2, 0.6. Length terms λ = 0.5, 0, −0.5; the second does not pass (outcome 0): min(0, 0) = 0.
    // Then the third, whose hard rule ("fresh") is not met, is vetoed to −1.
    expect(body.rewards[0]).toBeCloseTo(1 + 0.2 * 0.5, 12);
    expect(body.rewards[1]).toBeCloseTo(0.2, 12);
    expect(body.rewards[2]).toBe(-1);
    expect(body.shaping.length_penalty).toMatchObject({ weight: 0.2, lengths: [10, 20, 30], passed: [true, false, true], terms: [0.5, 0, -0.5] });
    expect(body.shaping.veto).toEqual({ value: -1, vetoed: [false, false, true] });
    const mean = (body.rewards[0] + body.rewards[1] + body.rewards[2]) / 3;
    expect(body.advantages[2]).toBeCloseTo(-1 - mean, 12);
    // Per axis: completeness = apples (3) + pears (1) ÷ 4; safety = rotten (−2) + fresh (1) ÷ 1.
    expect(body.axes['axis:completeness']).toEqual([1, 0.25, 0.75]);
    expect(body.axes['axis:safety']).toEqual([1, 1, -2]);
    expect(body.zero_variance).toBe(false);
    // Numbers a trainer reads are floats.
    const text = await (await server.post('/v1/score/group', request)).text();
    expect(text).toContain('"raw_rewards":[1.0,0.4,0.2]');
  });

  test('without shaping the answer is as before, plus the zero_variance flag and the reward components', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const body = await (await server.post('/v1/score/group', { prompt, rubric: fruitRubric, responses: ['apples', 'pears'] })).json();
    expect(Object.keys(body)).toEqual(['id', 'rewards', 'reward_components', 'zero_variance', 'results', 'fallbacks']);
    expect(server.fake.requests).toHaveLength(6);
  });

  test('the new fields are checked at the edge: a 400 naming the field, no judge call', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer(listwise));
    const base = { prompt, rubric: fruitRubric, responses: ['a', 'b'] };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ lengths: [1] }, /field lengths: 1 entries for 2 responses/],
      [{ shaping: { length_penalty: { weigth: 1 } } }, /shaping\.length_penalty/],
      [{ shaping: { outcome_mix: { lambda: 0.5 } } }, /give `outcomes`/],
      [{ outcomes: [1, 2] }, /outcomes\.1/],
      [{ step: -1 }, /step/],
    ];
    for (const [extra, message] of cases) {
      const response = await server.post('/v1/score/group', { ...base, ...extra });
      expect(response.status, JSON.stringify(extra)).toBe(400);
      expect((await response.json()).error.message).toMatch(message);
    }
    expect(server.fake.requests).toHaveLength(0);
  });

  test('tournament: rewards are win rates over all pairs in both orders', async ({ closeAfter }) => {
    const count = (text: string) => fruitRubric.criteria.filter((criterion) => criterion.points > 0 && criterionMet(criterion.text, text)).length;
    const server = closeAfter(await startTestServer({
      script: (request) => {
        const [first, second] = request.responses.map((response) => count(response.text));
        return { content: { explanation: 'x', winner: first === second ? 'tie' : first > second ? '1' : '2' } };
      },
      service: { grading: { plan: { mode: 'tournament' } } },
    }));
    const body = await (await server.post('/v1/score/group', { prompt, rubric: fruitRubric, responses: ['apples and pears', 'apples', 'plums'] })).json();
    expect(server.fake.requests).toHaveLength(6);
    expect(body.rewards).toEqual([1, 0.5, 0]);
    expect(body.results[0].group).toMatchObject({ members: 3, position_consistency: 1, bradley_terry: null });
  });
});
