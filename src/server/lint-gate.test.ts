import { describe, expect } from 'vitest';
import { fruitRubric, startTestServer } from './test-support.js';
import { test } from '../testing/vitest-fixtures.js';

const prompt = 'Name some fruit.';
const contradictory = { criteria: [{ id: 'a', text: 'Mentions apples.', points: 2 }, { id: 'b', text: 'Does not mention apples.', points: 2 }] };

describe('serve --lint', () => {
  test('a rubric with lint errors is refused whole with 422 before any judge call; a sound one is graded', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ service: { lint: true } }));
    const refused = await server.post('/v1/score/batch', { items: [{ id: 'x', prompt, response: 'apples', rubric: fruitRubric }, { id: 'y', prompt, response: 'apples', rubric: contradictory }] });
    expect(refused.status).toBe(422);
    const body = await refused.json();
    expect(body.error.code).toBe('RUBRIC_LINT_FAILED');
    expect(body.error.message).toContain('[contradictory-criteria]');
    const group = await server.post('/v1/score/group', { prompt, rubric: contradictory, responses: ['apples', 'pears'] });
    expect(group.status).toBe(422);
    expect(server.fake.requests).toHaveLength(0);
    const graded = await server.post('/v1/score', { id: 'z', prompt, response: 'apples and pears', rubric: fruitRubric });
    expect(graded.status).toBe(200);
    expect(server.fake.requests.length).toBeGreaterThan(0);
  });

  test('without --lint the same rubric is graded', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/v1/score', { id: 'y', prompt, response: 'apples', rubric: contradictory });
    expect(response.status).toBe(200);
  });
});
