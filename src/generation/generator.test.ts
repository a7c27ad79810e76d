import { afterEach, describe, expect, it } from 'vitest';
import { SqliteReplyStore } from '../store/index.js';
import { emptyUsage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import { createOpenAICompatibleJudge } from '../judges/openai/openai-judge.js';
import type { Judge } from '../judges/types.js';
import { startFakeJudge, type FakeJudge, type FakeJudgeScript } from '../testing/fake-judge.js';
import { answer, fencedBlocks, mentions, taskOf } from './fixtures/fake-generator.js';
import { callGenerator } from './generator-call.js';
import { createRubricGenerator } from './generator.js';
import { readCriteriaAnswer } from './criteria.js';

let fake: FakeJudge | undefined;
let judge: (Judge & { close(): Promise<void> }) | undefined;

afterEach(async () => {
  await judge?.close();
  await fake?.close();
  fake = undefined;
  judge = undefined;
});

async function setup(script: FakeJudgeScript) {
  fake = await startFakeJudge(script);
  judge = createOpenAICompatibleJudge({ model: 'writer', baseUrl: fake.baseUrl });
  return { fake, judge };
}

const seven = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'].map((word) => mentions(word));
const readBounds = (value: unknown) => readCriteriaAnswer(value, { minItems: 7, maxItems: 20 });

describe('callGenerator', () => {
  it('retries transport failures and malformed or schema-invalid answers, then returns the valid one', async () => {
    const plan = [{ status: 503 }, { content: 'Sure! Here is a rubric' }, { content: { criteria: seven.slice(0, 3) } }, { destroy: true as const }];
    await setup((request) => plan[request.index] ?? { content: answer(seven) });
    const usage = emptyUsage();
    const result = await callGenerator({ generator: judge!, request: { messages: [{ role: 'user', content: 'x' }] }, promptVersion: 'generate/v1', read: readBounds, maxAttempts: 5, retryBaseDelayMs: 1, usage });
    expect(result.value).toHaveLength(7);
    expect(result.calls).toBe(5);
    expect(usage).toMatchObject({ calls: 5, retries: 4 });
    expect(fake!.requests).toHaveLength(5);
  });

  it('reports JUDGE_UNPARSEABLE with the last reason when no answer is usable, and returns nothing partial', async () => {
    await setup((request) => (request.index % 2 === 0 ? { content: 'no json here' } : { content: { criteria: seven.slice(0, 2) } }));
    const error = await callGenerator({ generator: judge!, request: { messages: [{ role: 'user', content: 'x' }] }, promptVersion: 'generate/v1', read: readBounds, maxAttempts: 3, retryBaseDelayMs: 1 }).catch((caught) => caught);
    expect(error).toBeInstanceOf(RubricateError);
    expect(error.code).toBe('JUDGE_UNPARSEABLE');
    expect(error.message).toBe('generator answer rejected after 3 attempts: no JSON object in reply');
    expect(fake!.requests).toHaveLength(3);
  });

  it('keeps the code of a transport failure that never passes, and does not retry a rejected request', async () => {
    await setup(() => ({ status: 500 }));
    const failing = await callGenerator({ generator: judge!, request: { messages: [{ role: 'user', content: 'x' }] }, promptVersion: 'v', read: readBounds, maxAttempts: 2, retryBaseDelayMs: 1 }).catch((caught) => caught);
    expect(failing.code).toBe('JUDGE_SERVER_ERROR');
    expect(failing.message).toMatch(/after 2 attempts/);
    fake!.setScript(() => ({ status: 400, body: { error: { message: 'bad request: temperature' } } }));
    const before = fake!.requests.length;
    const rejected = await callGenerator({ generator: judge!, request: { messages: [{ role: 'user', content: 'y' }] }, promptVersion: 'v', read: readBounds, maxAttempts: 4, retryBaseDelayMs: 1 }).catch((caught) => caught);
    expect(rejected.code).toBe('JUDGE_REQUEST_REJECTED');
    expect(fake!.requests.length - before).toBe(1);
  });

  it('times out a hanging generator and retries', async () => {
    await setup((request) => (request.index === 0 ? { hang: true } : { content: answer(seven) }));
    const result = await callGenerator({ generator: judge!, request: { messages: [{ role: 'user', content: 'x' }] }, promptVersion: 'v', read: readBounds, timeoutMs: 100, retryBaseDelayMs: 1 });
    expect(result.calls).toBe(2);
  });

  it('stops at once, without retrying, when the run is cancelled', async () => {
    await setup(() => ({ hang: true }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await callGenerator({ generator: judge!, request: { messages: [{ role: 'user', content: 'x' }] }, promptVersion: 'v', read: readBounds, signal: controller.signal, retryBaseDelayMs: 1 }).catch((caught) => caught);
    expect(error.code).toBe('DEADLINE_EXCEEDED');
    expect(fake!.requests).toHaveLength(1);
  });

  it('answers a repeated request from the store, per sample number', async () => {
    await setup(() => ({ content: answer(seven) }));
    const store = new SqliteReplyStore(':memory:');
    const options = { generator: judge!, request: { messages: [{ role: 'user' as const, content: 'x' }] }, promptVersion: 'v', read: readBounds, store };
    await callGenerator(options);
    const again = await callGenerator(options);
    expect(again).toMatchObject({ cached: true, calls: 0 });
    await callGenerator({ ...options, sample: 1 });
    expect(fake!.requests).toHaveLength(2);
    store.close();
  });
});

describe('createRubricGenerator', () => {
  it('asks for schema-constrained criteria and records provenance in metadata.generation', async () => {
    await setup(() => ({
      content: answer([
        ...seven.slice(0, 5),
        { text: 'The response has at most 120 words.', importance: 'Essential', kind: 'hard_rule', check: { type: 'count', parameters_json: '{"unit":"words","relation":"at_most","value":120}' } },
        { text: 'The response says the sky reflects the ocean.', importance: 'Pitfall', kind: 'principle', check: null },
      ]),
    }));
    const generator = createRubricGenerator({ generator: judge!, sampling: { temperature: 0.3, seed: 7 } });
    const generated = await generator.generate({ prompt: [{ role: 'user', content: 'Why is the sky blue? Under 120 words.' }], reference: 'Rayleigh scattering.' });

    const request = fake!.requests[0];
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
      generator: { id: 'openai:writer', model: 'writer', base_url: fake!.baseUrl },
      sampling: { temperature: 0.3, max_tokens: 4096, seed: 7 },
      sample: 0,
      checks: { proposed: 1, kept: 1, rejected: 0 },
    });
    expect(generator.usage.calls).toBe(1);
  });

  it('fails the generation, with no rubric, when every answer is malformed', async () => {
    await setup(() => ({ content: '{"criteria": [{"text": "only one", "importance": "Essential"' }));
    const generator = createRubricGenerator({ generator: judge!, maxAttempts: 2, retryBaseDelayMs: 1 });
    const error = await generator.generate({ prompt: [{ role: 'user', content: 'q' }] }).catch((caught) => caught);
    expect(error.code).toBe('JUDGE_UNPARSEABLE');
    expect(error.message).toMatch(/after 2 attempts: answer does not follow the schema/);
  });

  it('respects --min-criteria/--max-criteria and custom importance points', async () => {
    await setup(() => ({ content: answer(seven.slice(0, 3).map((entry, index) => ({ ...entry, importance: (['Essential', 'Optional', 'Pitfall'] as const)[index] }))) }));
    const generator = createRubricGenerator({ generator: judge!, minCriteria: 2, maxCriteria: 3, importancePoints: { Essential: 10, Important: 4, Optional: 2, Pitfall: -6 } });
    const { rubric } = await generator.generate({ prompt: [{ role: 'user', content: 'q' }] });
    expect(rubric.criteria.map((criterion) => criterion.points)).toEqual([10, 2, -6]);
    const schema = (fake!.requests[0].body.response_format as { json_schema: { schema: { properties: { criteria: object } } } }).json_schema.schema.properties.criteria;
    expect(schema).toMatchObject({ minItems: 2, maxItems: 3 });
  });

  it('samples plain-text responses with the prompt as the conversation', async () => {
    await setup((request) => ({ content: `<think>hmm</think>answer ${request.body.seed}` }));
    const generator = createRubricGenerator({ generator: judge!, sampling: { seed: 100 } });
    const text = await generator.sampleResponse([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }], { sample: 3, temperature: 1 });
    expect(text).toBe('answer 103');
    const request = fake!.requests[0];
    expect(taskOf(request)).toBe('respond');
    expect(request.messages).toEqual([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
    expect(request.body.response_format).toBeUndefined();
  });

  it('never has more generator calls in flight than its concurrency', async () => {
    let inFlight = 0;
    let most = 0;
    await setup(async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 20));
      inFlight -= 1;
      return { content: answer(seven) };
    });
    const generator = createRubricGenerator({ generator: judge!, concurrency: 2 });
    await Promise.all(Array.from({ length: 6 }, (_, index) => generator.generate({ prompt: [{ role: 'user', content: `q${index}` }] })));
    expect(most).toBe(2);
    expect(fake!.requests).toHaveLength(6);
  });
});
