import { describe, expect } from 'vitest';
import { binaryVerdict } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { startTestServer } from './test-support.js';

const prompt = 'What is 1/2 + 1/4?';
const rubric = (fallback: boolean) => ({
  criteria: [{ id: 'final', text: 'The final answer is correct', points: 1, check: { type: 'answer-equivalent', answer: '\\frac{3}{4}', ...(fallback ? { fallback: 'judge' } : {}) } }],
});

describe('answer-equivalent in grading', () => {
  test('decided by the rules: no judge call; an undecided case goes to the judge, recorded as check_undecided', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: () => ({ content: binaryVerdict(true) }) }));
    const decided = await (await server.post('/v1/score', { prompt, response: 'So it is \\boxed{0.75}.', rubric: rubric(true) })).json();
    expect(decided.reward).toBe(1);
    expect(decided.criteria[0]).toMatchObject({ source: 'check', met: true });
    expect(decided.criteria[0].check_undecided).toBeUndefined();
    expect(server.fake.requests).toHaveLength(0);

    const wrong = await (await server.post('/v1/score', { prompt, response: 'So it is \\boxed{0.7}.', rubric: rubric(true) })).json();
    expect(wrong.reward).toBe(0);
    expect(server.fake.requests).toHaveLength(0);

    const undecided = await (await server.post('/v1/score', { prompt, response: 'Three quarters.', rubric: rubric(true) })).json();
    expect(server.fake.requests).toHaveLength(1);
    // The judge is asked the same question, with the reference answer.
    expect(server.fake.requests[0].criteria[0].text).toContain('\\frac{3}{4}');
    expect(undecided.criteria[0]).toMatchObject({ id: 'final', text: 'The final answer is correct', source: 'judge', met: true });
    expect(undecided.criteria[0].check_undecided).toMatch(/no final answer/);
    expect(undecided.reward).toBe(1);
  });

  test('without a fallback an undecided case is an error with its reason, never a 0', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const body = await (await server.post('/v1/score/batch', { items: [{ prompt, response: 'Three quarters.', rubric: rubric(false) }] })).json();
    const [result] = body.results;
    expect(result.reward).toBeNull();
    expect(result.criteria[0]).toMatchObject({ status: 'error', met: null });
    expect(result.criteria[0].error.code).toBe('CHECK_UNDECIDED');
    expect(server.fake.requests).toHaveLength(0);
  });
});
