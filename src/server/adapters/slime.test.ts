import { describe, expect } from 'vitest';
import { binaryVerdict } from '../../testing/fake-judge.js';
import { criterionMet, fruitRubric, startTestServer } from '../test-support.js';
import { test } from '../../testing/vitest-fixtures.js';

const templatedPrompt = '<|im_start|>user\nName some fruit.<|im_end|>\n<|im_start|>assistant\n';
const failOnBroken = (request: { response?: string; criteria: Array<{ text: string }> }) =>
  request.response?.includes('broken') ? { status: 500 } : { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) };

describe('slime adapter: POST /slime/reward and /reward', () => {
  test('answers an object with reward, status and criteria for the exact slime request', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/slime/reward', { prompt: templatedPrompt, response: 'Apples and pears.<|im_end|>', label: JSON.stringify(fruitRubric) });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ reward: 1, status: 'ok', reward_components: { 'criterion:apples': 1, 'criterion:pears': 1, 'criterion:rotten': 0 } });
    expect(body.criteria).toHaveLength(3);
    expect(server.fake.requests[0].response).toBe('Apples and pears.');
    expect(server.fake.requests[0].userText).toContain('user: Name some fruit.');
  });

  test('serves /reward too, and takes the prompt as a list of messages', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const body = await (
      await server.post('/reward', { prompt: [{ role: 'user', content: 'Name some fruit.' }], response: 'Rotten pears', label: { rubric: fruitRubric } })
    ).json();
    expect(body).toMatchObject({ reward: -0.25, status: 'ok' });
  });

  test('a failed sample keeps reward null under its error status, so slime retries it', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: failOnBroken }));
    const response = await server.post('/slime/reward', { prompt: templatedPrompt, response: 'broken', label: fruitRubric });
    expect(response.status).toBe(502);
    const body = await response.json();
    expect(body).toMatchObject({ reward: null, status: 'error', error: { code: 'JUDGE_SERVER_ERROR' } });
  });

  test('with a fallback, a failed sample is answered 200 with the flagged fallback', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: failOnBroken, service: { onError: { kind: 'fallback', value: 0 } } }));
    const response = await server.post('/slime/reward', { prompt: templatedPrompt, response: 'broken', label: fruitRubric });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ reward: 0, fallback: true, status: 'error' });
  });

  test('refuses a label without a rubric with 400', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/slime/reward', { prompt: templatedPrompt, response: 'x', label: 'B' });
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/label must hold a rubric/);
  });
});
