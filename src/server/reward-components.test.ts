import { describe, expect } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { maxGroupsPerRequest } from './score-groups.js';
import { fruitRubric, startTestServer } from './test-support.js';
import { componentValues } from './reward-components.js';
import type { RewardResult } from './rewards.js';
import type { GradedCriterion } from '../results/results.js';
import { getScoring } from '../scoring/registry.js';

const prompt = 'Name some fruit.';

/** Two axes; the scripted judge meets a criterion when the response holds its last word. */
const axisRubric = {
  criteria: [
    { id: 'a', text: 'mentions alpha', points: 1, tags: ['axis:accuracy'] },
    { id: 'b', text: 'mentions beta', points: 1, tags: ['axis:style'] },
  ],
};

describe('reward_components', () => {
  test('without declared components: one per criterion, the reward unchanged, a penalty-only component in [−1, 0]', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const body = await (await server.post('/v1/score', { id: 'x', prompt, response: 'Rotten apples.', rubric: fruitRubric })).json();
    expect(body.reward).toBe(0.25);
    expect(body.reward_components).toEqual({ 'criterion:apples': 1, 'criterion:pears': 0, 'criterion:rotten': -1 });
    expect(body.reward_weights).toBeUndefined();
  });

  test('axis tags are the default components; declared weights make the reward their weighted sum', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const plain = await (await server.post('/v1/score', { prompt, response: 'alpha', rubric: axisRubric })).json();
    expect(plain.reward_components).toEqual({ 'axis:accuracy': 1, 'axis:style': 0 });
    expect(plain.reward).toBe(0.5);
    const declared = { ...axisRubric, reward_components: { 'axis:accuracy': 3, 'criterion:b': 1 } };
    const weighted = await (await server.post('/v1/score', { prompt, response: 'alpha', rubric: declared })).json();
    expect(weighted.reward_components).toEqual({ 'axis:accuracy': 1, 'criterion:b': 0 });
    expect(weighted.reward_weights).toEqual({ 'axis:accuracy': 3, 'criterion:b': 1 });
    expect(weighted.reward).toBe(0.75);
  });

  test('a declared component naming no criterion is a 400 naming it', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/v1/score', { prompt, response: 'alpha', rubric: { ...axisRubric, reward_components: { 'axis:safety': 1 } } });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/reward_components\.axis:safety|axis:safety/);
  });

  test('/v1/score/group answers each component over its members', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const body = await (await server.post('/v1/score/group', { prompt, rubric: axisRubric, responses: ['alpha', 'beta', 'alpha beta'] })).json();
    expect(body.reward_components).toEqual({ 'axis:accuracy': [1, 0, 1], 'axis:style': [0, 1, 1] });
    expect(body.results[2].reward_components).toEqual({ 'axis:accuracy': 1, 'axis:style': 1 });
  });

  test('a failed item has null components, never 0', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: () => ({ status: 500, body: 'down' }) }));
    const body = await (await server.post('/v1/score/batch', { items: [{ id: 'f', prompt, response: 'alpha', rubric: axisRubric }] })).json();
    expect(body.results[0].reward).toBeNull();
    expect(body.results[0].reward_components).toEqual({ 'axis:accuracy': null, 'axis:style': null });
  });
});

describe('POST /v1/score/groups', () => {
  const groups = [
    { id: 'A', prompt, rubric: axisRubric, responses: ['alpha', 'none'] },
    { id: 'B', prompt, rubric: axisRubric, responses: ['alpha beta', 'none'] },
  ];

  test('the published example: grpo ±0.707 in both groups, gdpo ±0.548 and ±1.095', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const grpo = await (await server.post('/v1/score/groups', { groups, advantages: 'grpo', eps: 0 })).json();
    expect(grpo.estimator).toBe('grpo');
    expect(grpo.groups.map((group: { rewards: number[] }) => group.rewards)).toEqual([
      [0.5, 0],
      [1, 0],
    ]);
    for (const group of grpo.groups) {
      expect(group.advantages[0]).toBeCloseTo(0.7071, 4);
      expect(group.advantages[1]).toBeCloseTo(-0.7071, 4);
    }
    const gdpo = await (await server.post('/v1/score/groups', { groups, advantages: 'gdpo', eps: 0 })).json();
    expect(gdpo.groups[0].reward_components).toEqual({ 'axis:accuracy': [1, 0], 'axis:style': [0, 0] });
    expect(gdpo.groups[1].reward_components).toEqual({ 'axis:accuracy': [1, 0], 'axis:style': [1, 0] });
    expect(gdpo.groups[0].advantages[0]).toBeCloseTo(0.5477, 4);
    expect(gdpo.groups[0].advantages[1]).toBeCloseTo(-0.5477, 4);
    expect(gdpo.groups[1].advantages[0]).toBeCloseTo(1.0954, 4);
    expect(gdpo.groups[1].advantages[1]).toBeCloseTo(-1.0954, 4);
    expect(gdpo.groups[0].results[0].id).toBe('A/0');
  });

  test('a group with a constant component keeps its other component’s signal', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const body = await (await server.post('/v1/score/groups', { groups: [{ prompt, rubric: axisRubric, responses: ['alpha beta', 'beta', 'alpha beta', 'beta'] }], advantages: 'gdpo', eps: 0 })).json();
    const [group] = body.groups;
    expect(group.reward_components['axis:style']).toEqual([1, 1, 1, 1]);
    expect(group.advantages).toEqual([1, -1, 1, -1].map((sign) => expect.closeTo((sign * Math.sqrt(3)) / 2, 10)));
    expect(group.zero_variance).toBe(false);
  });

  test('bounded and checked at the edge: too many groups, an unknown estimator or field is a 400 naming it', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const many = Array.from({ length: maxGroupsPerRequest + 1 }, () => groups[0]);
    const tooMany = await server.post('/v1/score/groups', { groups: many, advantages: 'gdpo' });
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).error.message).toMatch(new RegExp(`at most ${maxGroupsPerRequest}`));
    const estimator = await server.post('/v1/score/groups', { groups, advantages: 'ppo' });
    expect(estimator.status).toBe(400);
    const field = await server.post('/v1/score/groups', { groups: [{ ...groups[0], shaping: {} }] });
    expect(field.status).toBe(400);
    expect((await field.json()).error.message).toMatch(/shaping/);
    expect(server.fake.requests).toHaveLength(0);
  });
});

describe('componentValues', () => {
  test('each component is scored over exactly the criteria its name picks (by id, or by tag), on 300 random rubrics', () => {
    let state = 7;
    const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
    const tagPool = ['axis:accuracy', 'axis:safety', 'theme:x', 'criterion:c1', 'axis:accuracy'];
    const scoring = getScoring('healthbench');
    for (let run = 0; run < 300; run += 1) {
      const criteria: GradedCriterion[] = Array.from({ length: 1 + Math.floor(random() * 6) }, (_, index) => ({
        id: pick(['c0', 'c1', 'c2', `c${index}`]),
        points: pick([-3, -1, 1, 2, 5]),
        tags: Array.from({ length: Math.floor(random() * 3) }, () => pick(tagPool)),
        kind: 'principle',
        source: 'judge',
        status: pick(['ok', 'ok', 'ok', 'error', 'skipped'] as const),
        met: pick([true, false]),
      }));
      const result = { id: 'q', status: 'ok', criteria } as unknown as RewardResult;
      const names = [...new Set([...tagPool, 'criterion:c0', 'criterion:c2', 'criterion:nothing'])];
      const values = componentValues(result, names, scoring);
      for (const name of names) {
        const members = name.startsWith('criterion:') ? criteria.filter((criterion) => criterion.id === name.slice('criterion:'.length)) : criteria.filter((criterion) => criterion.tags.includes(name));
        // The value over those members alone: one component that picks all of them.
        const alone = members.map((criterion) => ({ ...criterion, tags: ['only'] }));
        const expected = componentValues({ ...result, criteria: alone } as RewardResult, ['only'], scoring).only;
        expect(values[name], `${name} of ${JSON.stringify(criteria)}`).toBe(members.some((criterion) => criterion.status === 'ok') ? expected : null);
      }
    }
  });
});
