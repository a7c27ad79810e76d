import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { test } from '../../testing/vitest-fixtures.js';
import { criterionMet, fruitRubric, startTestServer } from '../test-support.js';
import { binaryVerdict } from '../../testing/fake-judge.js';

/** The request shape NeMo Gym's agent posts to /verify, written down from its source (see the file's `source`). */
const fixture = JSON.parse(readFileSync(new URL('./fixtures/nemo-gym-verify.json', import.meta.url), 'utf8')) as { request: Record<string, unknown> & { response: { output: Array<Record<string, unknown>> } } };

function verifyRequest(rubric: unknown, text = 'Apples and pears.') {
  const request = structuredClone(fixture.request) as Record<string, unknown> & { response: { output: Array<Record<string, unknown>> } };
  request.response.output[1].content = [{ type: 'output_text', text, annotations: [] }];
  return { ...request, rubric };
}

describe('NeMo Gym adapter: POST /verify', () => {
  test('answers the row back with a float reward, grading the assistant message (not the reasoning) against the row rubric', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/verify', { ...fixture.request, rubric: JSON.stringify(fruitRubric) });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"reward":1.0');
    const body = JSON.parse(text);
    expect(body).toMatchObject({ task_id: 'fruit-1', responses_create_params: fixture.request.responses_create_params, reward: 1 });
    expect(body.reward_components).toEqual({ 'criterion:apples': 1, 'criterion:pears': 1, 'criterion:rotten': 0 });
    expect(server.fake.requests[0].response).toBe('Apples and pears.');
    expect(server.fake.requests[0].userText).toContain('system: Be brief.');
    // A rubric column filled by Arrow (absent keys null) reads as the rubric it is.
    const filled = { criteria: fruitRubric.criteria.map((criterion) => ({ ...criterion, importance: null, tags: null, scale: null })) };
    const arrow = await server.post('/verify', verifyRequest(filled, 'Rotten apples.'));
    expect((await arrow.json()).reward).toBe(0.25);
  });

  test('a sample the judge could not grade fails the rollout (502, reward null); a fallback is answered only when configured, flagged the NeMo Gym way', async ({ closeAfter }) => {
    const failing = (request: { criteria: Array<{ text: string }>; response?: string }) =>
      request.response === 'broken' ? { status: 500 } : { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) };
    const server = closeAfter(await startTestServer({ script: failing }));
    const failed = await server.post('/verify', verifyRequest(fruitRubric, 'broken'));
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({ reward: null, error: { code: 'JUDGE_SERVER_ERROR' }, reward_components: { 'criterion:apples': null, 'criterion:pears': null, 'criterion:rotten': null } });
    const noRubric = await server.post('/verify', verifyRequest(undefined));
    expect(noRubric.status).toBe(400);
    expect((await noRubric.json()).error.message).toMatch(/rubric/);

    // A rollout that only reasoned (no assistant message) has no answer to grade: 400 with the reason, no reward, no judge call.
    const calls = server.fake.requests.length;
    for (const output of [[fixture.request.response.output[0]], [], [{ type: 'function_call', name: 'search', arguments: '{}', call_id: 'c1' }]]) {
      const reasoningOnly = await server.post('/verify', { ...verifyRequest(fruitRubric), response: { ...fixture.request.response, output } });
      expect(reasoningOnly.status).toBe(400);
      const answer = await reasoningOnly.json();
      expect(answer.reward ?? null).toBeNull();
      expect(answer.error).toMatchObject({ code: 'INPUT_INVALID' });
      expect(answer.error.message).toMatch(/no assistant message to grade: response\.output holds (reasoning|nothing|function_call)/);
    }
    expect(server.fake.requests).toHaveLength(calls);

    const withFallback = closeAfter(await startTestServer({ script: failing, service: { onError: { kind: 'fallback', value: 0 } } }));
    const fallback = await withFallback.post('/verify', verifyRequest(fruitRubric, 'broken'));
    expect(fallback.status).toBe(200);
    expect(await fallback.json()).toMatchObject({ reward: 0, fallback: true, _ng_failure_class: 'judge_failed', task_id: 'fruit-1' });
    expect(withFallback.service.metrics.fallbacks.value()).toBe(1);
  });
});
