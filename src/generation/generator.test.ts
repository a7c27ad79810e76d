import { describe, expect, vi } from 'vitest';
import { SqliteReplyStore } from '../store/index.js';
import { emptyUsage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import { test } from '../testing/vitest-fixtures.js';
import { answer, fencedBlocks, mentions, taskOf } from './fixtures/fake-generator.js';
import { callGenerator } from './generator-call.js';
import { createRubricGenerator } from './generator.js';
import { readCriteriaAnswer } from './criteria.js';

const seven = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'].map((word) => mentions(word));
const readBounds = (value: unknown) => readCriteriaAnswer(value, { minItems: 7, maxItems: 20 });

describe('callGenerator', () => {
  test('retries transport failures and malformed or schema-invalid answers, then returns the valid one', async ({ scriptedJudge }) => {
    const plan = [{ status: 503 }, { content: 'Sure! Here is a rubric' }, { content: { criteria: seven.slice(0, 3) } }, { destroy: true as const }];
    const { fake, judge } = await scriptedJudge((request) => plan[request.index] ?? { content: answer(seven) }, { model: 'writer' });
    const usage = emptyUsage();
    const result = await callGenerator({ generator: judge, request: { messages: [{ role: 'user', content: 'x' }] }, promptVersion: 'generate/v1', read: readBounds, maxAttempts: 5, retryBaseDelayMs: 1, usage });
    expect(result.value).toHaveLength(7);
    expect(result.calls).toBe(5);
    expect(usage).toMatchObject({ calls: 5, retries: 4 });
    expect(fake.requests).toHaveLength(5);
  });

  test('reports JUDGE_UNPARSEABLE with the last reason when no answer is usable, and returns nothing partial', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => (request.index % 2 === 0 ? { content: 'no json here' } : { content: { criteria: seven.slice(0, 2) } }), { model: 'writer' });
    const error = await callGenerator({ generator: judge, request: { messages: [{ role: 'user', content: 'x' }] }, promptVersion: 'generate/v1', read: readBounds, maxAttempts: 3, retryBaseDelayMs: 1 }).catch((caught) => caught);
    expect(error).toBeInstanceOf(RubricateError);
    expect(error.code).toBe('JUDGE_UNPARSEABLE');
    expect(error.message).toBe('generator answer rejected after 3 attempts: no JSON object in reply');
    expect(fake.requests).toHaveLength(3);
  });

  test('keeps the code of a transport failure that never passes, and does not retry a rejected request', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ status: 500 }), { model: 'writer' });
    const failing = await callGenerator({ generator: judge, request: { messages: [{ role: 'user', content: 'x' }] }, promptVersion: 'v', read: readBounds, maxAttempts: 2, retryBaseDelayMs: 1 }).catch((caught) => caught);
    expect(failing.code).toBe('JUDGE_SERVER_ERROR');
    expect(failing.message).toMatch(/after 2 attempts/);
    fake.setScript(() => ({ status: 400, body: { error: { message: 'bad request: temperature' } } }));
    const before = fake.requests.length;
    const rejected = await callGenerator({ generator: judge, request: { messages: [{ role: 'user', content: 'y' }] }, promptVersion: 'v', read: readBounds, maxAttempts: 4, retryBaseDelayMs: 1 }).catch((caught) => caught);
    expect(rejected.code).toBe('JUDGE_REQUEST_REJECTED');
    expect(fake.requests.length - before).toBe(1);
  });

  test('times out a hanging generator and retries', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge((request) => (request.index === 0 ? { hang: true } : { content: answer(seven) }), { model: 'writer' });
    // Long enough that the answer after the hang is never mistaken for another one on a loaded machine.
    const result = await callGenerator({ generator: judge, request: { messages: [{ role: 'user', content: 'x' }] }, promptVersion: 'v', read: readBounds, timeoutMs: 500, retryBaseDelayMs: 1 });
    expect(result.calls).toBe(2);
  });

  test('stops at once, without retrying, when the run is cancelled', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ hang: true }), { model: 'writer' });
    const controller = new AbortController();
    const pending = callGenerator({ generator: judge, request: { messages: [{ role: 'user', content: 'x' }] }, promptVersion: 'v', read: readBounds, signal: controller.signal, retryBaseDelayMs: 1 }).catch((caught) => caught);
    // Cancel once the call is in flight.
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
    controller.abort();
    const error = await pending;
    expect(error.code).toBe('DEADLINE_EXCEEDED');
    expect(fake.requests).toHaveLength(1);
  });

  test('answers a repeated request from the store, per sample number', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: answer(seven) }), { model: 'writer' });
    const store = new SqliteReplyStore(':memory:');
    const options = { generator: judge, request: { messages: [{ role: 'user' as const, content: 'x' }] }, promptVersion: 'v', read: readBounds, store };
    await callGenerator(options);
    const again = await callGenerator(options);
    expect(again).toMatchObject({ cached: true, calls: 0 });
    await callGenerator({ ...options, sample: 1 });
    expect(fake.requests).toHaveLength(2);
    store.close();
  });
});

describe('createRubricGenerator', () => {
  test('asks for schema-constrained criteria and records provenance in metadata.generation', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({
      content: answer([
        ...seven.slice(0, 5),
        { text: 'The response has at most 120 words.', importance: 'Essential', kind: 'hard_rule', check: { type: 'count', parameters_json: '{"unit":"words","relation":"at_most","value":120}' } },
        { text: 'The response says the sky reflects the ocean.', importance: 'Pitfall', kind: 'principle', check: null },
      ]),
    }), { model: 'writer' });
    const generator = createRubricGenerator({ generator: judge, sampling: { temperature: 0.3, seed: 7 } });
    const generated = await generator.generate({ prompt: [{ role: 'user', content: 'Why is the sky blue? Under 120 words.' }], reference: 'Rayleigh scattering.' });

    const request = fake.requests[0];
    expect(taskOf(request)).toBe('generate');
    const format = request.body.response_format as { type: string; json_schema: { name: string; strict: boolean; schema: { properties: { criteria: { minItems: number; maxItems: number; items: { properties: { check: { anyOf: Array<{ properties?: { type: { enum: string[] } } }> } } } } } } } };
    expect(format.type).toBe('json_schema');
    expect(format.json_schema.name).toBe('rubric_criteria');
    expect(format.json_schema.schema.properties.criteria).toMatchObject({ minItems: 7, maxItems: 20 });
    expect(format.json_schema.schema.properties.criteria.items.properties.check.anyOf[1].properties!.type.enum).toContain('length_constraints:number_words');
    expect(request.body).toMatchObject({ temperature: 0.3, seed: 7, max_tokens: 4096 });
    // The request and the reference are fenced data; the check catalogue is offered.
    expect(fencedBlocks(request, 'request')).toEqual(['Why is the sky blue? Under 120 words.']);
    expect(fencedBlocks(request, 'reference')).toEqual(['Rayleigh scattering.']);
    expect(request.messages[0].content).toContain('- count: ');
    expect(request.messages[0].content).toContain('Essential 5, Important 3, Optional 1, Pitfall -2');

    const { rubric } = generated;
    expect(rubric.criteria).toHaveLength(7);
    expect(rubric.criteria.map((criterion) => criterion.points)).toEqual([3, 3, 3, 3, 3, 5, -2]);
    expect(rubric.criteria[5].check).toEqual({ type: 'count', unit: 'words', relation: 'at_most', value: 120 });
    expect(rubric.metadata?.generation).toMatchObject({
      method: 'generate',
      prompt_version: 'generate/v1',
      generator: { id: 'openai:writer', model: 'writer', base_url: fake.baseUrl },
      sampling: { temperature: 0.3, max_tokens: 4096, seed: 7 },
      sample: 0,
      checks: { proposed: 1, kept: 1, rejected: 0 },
    });
    expect(generator.usage.calls).toBe(1);
  });

  test('fails the generation, with no rubric, when every answer is malformed', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ content: '{"criteria": [{"text": "only one", "importance": "Essential"' }), { model: 'writer' });
    const generator = createRubricGenerator({ generator: judge, maxAttempts: 2, retryBaseDelayMs: 1 });
    const error = await generator.generate({ prompt: [{ role: 'user', content: 'q' }] }).catch((caught) => caught);
    expect(error.code).toBe('JUDGE_UNPARSEABLE');
    expect(error.message).toMatch(/after 2 attempts: answer does not follow the schema/);
  });

  test('respects --min-criteria/--max-criteria and custom importance points', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: answer(seven.slice(0, 3).map((entry, index) => ({ ...entry, importance: (['Essential', 'Optional', 'Pitfall'] as const)[index] }))) }), { model: 'writer' });
    const generator = createRubricGenerator({ generator: judge, minCriteria: 2, maxCriteria: 3, importancePoints: { Essential: 10, Important: 4, Optional: 2, Pitfall: -6 } });
    const { rubric } = await generator.generate({ prompt: [{ role: 'user', content: 'q' }] });
    expect(rubric.criteria.map((criterion) => criterion.points)).toEqual([10, 2, -6]);
    const schema = (fake.requests[0].body.response_format as { json_schema: { schema: { properties: { criteria: object } } } }).json_schema.schema.properties.criteria;
    expect(schema).toMatchObject({ minItems: 2, maxItems: 3 });
  });

  test('samples plain-text responses with the prompt as the conversation', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => ({ content: `<think>hmm</think>answer ${request.body.seed}` }), { model: 'writer' });
    const generator = createRubricGenerator({ generator: judge, sampling: { seed: 100 } });
    const text = await generator.sampleResponse([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], { sample: 3, temperature: 1 });
    expect(text).toBe('answer 103');
    const request = fake.requests[0];
    expect(taskOf(request)).toBe('respond');
    expect(request.messages).toEqual([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
    expect(request.body.response_format).toBeUndefined();
  });

  test('never has more generator calls in flight than its concurrency', async ({ scriptedJudge }) => {
    let inFlight = 0;
    let most = 0;
    let answered = 0;
    // Each answer is held until a second call is in flight (or no other is left), so a limit of two is reached
    // whatever the machine's speed, and a third call would arrive while the two are held.
    const held: Array<() => void> = [];
    const { fake, judge } = await scriptedJudge(async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      const released = new Promise<void>((resolve) => held.push(resolve));
      if (inFlight >= 2 || answered + inFlight === 6) for (const release of held.splice(0)) release();
      await released;
      inFlight -= 1;
      answered += 1;
      return { content: answer(seven) };
    }, { model: 'writer' });
    const generator = createRubricGenerator({ generator: judge, concurrency: 2 });
    await Promise.all(Array.from({ length: 6 }, (_, index) => generator.generate({ prompt: [{ role: 'user', content: `q${index}` }] })));
    expect(most).toBe(2);
    expect(fake.requests).toHaveLength(6);
  });
});
