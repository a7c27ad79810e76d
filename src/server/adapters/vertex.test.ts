import { describe, expect, it } from 'vitest';
import { binaryVerdict } from '../../testing/fake-judge.js';
import { safeParseJson } from '../../util/json.js';
import { criterionMet, fruitRubric, startTestServer } from '../test-support.js';
import { vertexReward } from './vertex.js';
import { test } from '../../testing/vitest-fixtures.js';

function vertexRequest(parts: Array<{ text: string; thought?: boolean }>, references: Record<string, string> = { rubric: JSON.stringify(fruitRubric) }) {
  return {
    example: {
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Name some fruit.' }] }],
      references,
    },
    response: { role: 'model', parts },
    metadata: { step: 3, tuning_job_id: 'tuning-job-1' },
  };
}

describe('Vertex adapter: POST /vertex/reward', () => {
  test('maps the [0, 1] score to a reward in [−1, 1] and returns aux info as a JSON string', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post(
      '/vertex/reward',
      vertexRequest([{ text: 'Apples ' }, { text: 'and pears.' }, { text: 'Let me think about rotten fruit.', thought: true }], { rubric: JSON.stringify(fruitRubric), reference: 'Apples' }),
    );
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(Object.keys(body).sort()).toEqual(['reward', 'user_requested_aux_info']);
    expect(body.reward).toBe(1);
    expect(typeof body.user_requested_aux_info).toBe('string');
    const aux = safeParseJson(body.user_requested_aux_info);
    expect(aux.ok && aux.value).toMatchObject({ score: 1, status: 'ok', criteria: [{ id: 'apples', met: true }, { id: 'pears', met: true }, { id: 'rotten', met: false }] });
    expect(aux.ok && (aux.value as { reward_components: unknown }).reward_components).toEqual({ 'criterion:apples': 1, 'criterion:pears': 1, 'criterion:rotten': 0 });
    // Thought parts are not graded; the system instruction and the reference reach the judge.
    expect(server.fake.requests[0].response).toBe('Apples and pears.');
    expect(server.fake.requests[0].userText).toContain('system: Be brief.');
    expect(server.fake.requests[0].userText).toMatch(/<reference-[0-9a-f]{16}>\nApples\n/);

    const lower = await (await server.post('/vertex/reward', vertexRequest([{ text: 'Rotten apples.' }]))).json();
    expect(lower.reward).toBe(-0.5);
  });

  it('vertexReward is 2·clip(s, 0, 1) − 1', () => {
    expect([vertexReward(0), vertexReward(0.25), vertexReward(1), vertexReward(-0.5), vertexReward(1.5)]).toEqual([-1, -0.5, 1, -1, 1]);
  });

  test('refuses an example without a rubric, naming where it belongs', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/vertex/reward', vertexRequest([{ text: 'x' }], {}));
    expect(response.status).toBe(400);
    expect((await response.json()).error.message).toMatch(/example\.references\.rubric/);
  });

  test('a failed sample has no reward; with a fallback it gets the flagged fallback on the Vertex scale', async ({ closeAfter }) => {
    const failing = (request: { criteria: Array<{ text: string }>; response?: string }) =>
      request.response === 'broken' ? { status: 500 } : { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) };
    const server = closeAfter(await startTestServer({ script: failing }));
    const failed = await server.post('/vertex/reward', vertexRequest([{ text: 'broken' }]));
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({ reward: null, error: { code: 'JUDGE_SERVER_ERROR' } });

    const withFallback = closeAfter(await startTestServer({ script: failing, service: { onError: { kind: 'fallback', value: 0 } } }));
    const fallback = await withFallback.post('/vertex/reward', vertexRequest([{ text: 'broken' }]));
    expect(fallback.status).toBe(200);
    const body = await fallback.json();
    expect(body.reward).toBe(0);
    const aux = safeParseJson(body.user_requested_aux_info);
    expect(aux.ok && aux.value).toMatchObject({ score: null, status: 'error', fallback: true });
  });
});
