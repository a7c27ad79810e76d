import { afterEach, describe, expect, it } from 'vitest';
import { binaryVerdict } from '../../testing/fake-judge.js';
import { criterionMet, fruitRubric, fruitScore, startTestServer, type TestServer } from '../test-support.js';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const templatedPrompt = '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nName some fruit.<|im_end|>\n<|im_start|>assistant\n';
const query = (response: string) => `${templatedPrompt}${response}<|im_end|>`;
const failOnBroken = (request: { response?: string; criteria: Array<{ text: string }> }) =>
  request.response?.includes('broken') ? { status: 400 } : { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) };

describe('OpenRLHF adapter: POST /get_reward', () => {
  it('answers rewards, scores in [0, 1] and extra_logs, one per query, from the exact OpenRLHF request', async () => {
    server = await startTestServer();
    const responses = ['Apples and pears.', 'Rotten apples.', 'Pears.'];
    const request = {
      query: responses.map(query),
      prompts: [templatedPrompt, 'Name some fruit.', templatedPrompt],
      // A rubric as a JSON string, as an object, and wrapped with a reference.
      labels: [JSON.stringify(fruitRubric), fruitRubric, { rubric: JSON.stringify(fruitRubric), reference: 'Apples' }],
      metas: [{ step: 1 }, { step: 1 }, { step: 1 }],
    };
    const response = await server.post('/get_reward', request);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(Object.keys(body).sort()).toEqual(['extra_logs', 'rewards', 'scores']);
    expect(body.rewards).toEqual(responses.map(fruitScore));
    expect(body.scores).toEqual([1, 0.25, 0.25]);
    expect(body.extra_logs.reward_failed).toEqual([0, 0, 0]);
    expect(body.extra_logs.criteria_met_fraction).toEqual([2 / 3, 2 / 3, 1 / 3]);
    // The judge saw the bare response and the de-templated conversation.
    const seen = server.fake.requests.map((entry) => entry.response);
    expect(new Set(seen)).toEqual(new Set(responses));
    const first = server.fake.requests.find((entry) => entry.response === 'Apples and pears.')!;
    expect(first.userText).toContain('system: Be brief.');
    expect(first.userText).toContain('user: Name some fruit.');
    expect(first.userText).not.toContain('<|im_start|>');
    const withReference = server.fake.requests.find((entry) => entry.response === 'Pears.')!;
    expect(withReference.userText).toMatch(/<reference-[0-9a-f]{16}>\nApples\n/);
  });

  it('always answers 200 with numbers: failures get the fallback (0) and reward_failed = 1', async () => {
    server = await startTestServer({ script: failOnBroken });
    const body = await (
      await server.post('/get_reward', {
        query: [query('Apples.'), query('broken pears'), query('Pears.'), 42],
        prompts: [templatedPrompt, templatedPrompt, templatedPrompt, templatedPrompt],
        labels: [fruitRubric, fruitRubric, null, fruitRubric],
      })
    ).json();
    expect(body.rewards).toEqual([0.75, 0, 0, 0]);
    expect(body.scores).toEqual([0.75, 0, 0, 0]);
    expect(body.extra_logs.reward_failed).toEqual([0, 1, 1, 1]);
    expect(server.service.metrics.fallbacks.value()).toBe(3);
  });

  it('uses the configured fallback instead of 0, flagged the same way', async () => {
    server = await startTestServer({ script: failOnBroken, service: { onError: { kind: 'fallback', value: -0.5 } } });
    const body = await (await server.post('/get_reward', { query: [query('broken'), query('Apples.')], prompts: [templatedPrompt, templatedPrompt], labels: [fruitRubric, fruitRubric] })).json();
    expect(body.rewards).toEqual([-0.5, 0.75]);
    expect(body.scores).toEqual([0, 0.75]);
    expect(body.extra_logs.reward_failed).toEqual([1, 0]);
  });

  it('waits for room in a full queue instead of refusing, and answers at the deadline with flagged fallbacks', async () => {
    server = await startTestServer({
      script: (request) => ({ content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')), delayMs: request.response?.includes('slow') ? 600 : 60 }),
      service: { maxQueue: 1, deadlineMs: 250 },
    });
    const one = (response: string) => server!.post('/get_reward', { query: [query(response)], prompts: [templatedPrompt], labels: [fruitRubric] }).then((answer) => answer.json());
    // Both fit one after the other within the deadline.
    const [first, second] = await Promise.all([one('Apples.'), one('Pears.')]);
    expect([first.rewards, second.rewards]).toEqual([[0.75], [0.25]]);
    expect([first.extra_logs.reward_failed, second.extra_logs.reward_failed]).toEqual([[0], [0]]);
    // A slow sample holds the only slot past the deadline: it and the one waiting behind it fall back.
    const started = Date.now();
    const [slow, waiting] = await Promise.all([one('slow apples'), one('Pears and apples.')]);
    expect(Date.now() - started).toBeLessThan(550);
    expect(slow.extra_logs.reward_failed).toEqual([1]);
    expect(waiting.extra_logs.reward_failed).toEqual([1]);
    expect(slow.rewards).toEqual([0]);
  });

  it('answers 400 only to a body that is not an OpenRLHF request', async () => {
    server = await startTestServer();
    const response = await server.post('/get_reward', { prompts: ['x'] });
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe('INPUT_INVALID');
  });
});
