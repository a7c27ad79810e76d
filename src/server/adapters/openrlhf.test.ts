import { describe, expect, vi } from 'vitest';
import { binaryVerdict } from '../../testing/fake-judge.js';
import { criterionMet, fruitRubric, fruitScore, startTestServer } from '../test-support.js';
import { test } from '../../testing/vitest-fixtures.js';

const templatedPrompt = '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nName some fruit.<|im_end|>\n<|im_start|>assistant\n';
const query = (response: string) => `${templatedPrompt}${response}<|im_end|>`;
const failOnBroken = (request: { response?: string; criteria: Array<{ text: string }> }) =>
  request.response?.includes('broken') ? { status: 400 } : { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) };

/** A judge answer held until the test releases it (event-driven, no timing). */
function judgeGate(): { released: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { released, release };
}

describe('OpenRLHF adapter: POST /get_reward', () => {
  test('answers rewards, scores in [0, 1] and extra_logs, one per query, from the exact OpenRLHF request', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
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
    expect(Object.keys(body).sort()).toEqual(['extra_logs', 'reward_components', 'rewards', 'scores']);
    expect(body.reward_components[0]).toEqual({ 'criterion:apples': 1, 'criterion:pears': 1, 'criterion:rotten': 0 });
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

  test('without a fallback, a failed sample fails the request with its status (OpenRLHF retries); an invalid label is a 400 naming it', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: failOnBroken }));
    const failed = await server.post('/get_reward', { query: [query('Apples.'), query('broken pears')], prompts: [templatedPrompt, templatedPrompt], labels: [fruitRubric, fruitRubric] });
    expect(failed.status).toBe(502);
    const failedBody = await failed.json();
    expect(failedBody.error.code).toBe('JUDGE_REQUEST_REJECTED');
    expect(failedBody.error.message).toMatch(/^sample 1 was not graded/);
    expect(JSON.stringify(failedBody)).not.toContain(server.fake.baseUrl.replace(/\/v1$/, ''));
    expect(failedBody).not.toHaveProperty('rewards');
    // OpenRLHF sends "" when --label_key is not set: a 400 naming the field, not a silent 0.
    const noLabel = await server.post('/get_reward', { query: [query('Apples.'), query('Pears.')], prompts: [templatedPrompt, templatedPrompt], labels: ['', ''] });
    expect(noLabel.status).toBe(400);
    expect((await noLabel.json()).error.message).toMatch(/^field labels\[0\]: no label.*\(and 1 more of 2 samples\)$/);
    const badRubric = await server.post('/get_reward', { query: [query('Apples.')], prompts: [templatedPrompt], labels: [{ criteria: [{ text: 'x', points: 'many' }] }] });
    expect(badRubric.status).toBe(400);
    expect((await badRubric.json()).error.message).toMatch(/labels\[0\]\.criteria\[0\]\.points/);
    expect(server.service.metrics.fallbacks.value()).toBe(0);
  });

  test('with --on-error fallback=X, failed and invalid samples get X, flagged in reward_failed, and every number is a JSON float', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: failOnBroken, service: { onError: { kind: 'fallback', value: 0 } } }));
    const response = await server.post('/get_reward', {
      query: [query('Apples and pears.'), query('broken pears'), query('Pears.'), 42],
      prompts: [templatedPrompt, templatedPrompt, templatedPrompt, templatedPrompt],
      labels: [fruitRubric, fruitRubric, null, fruitRubric],
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"rewards":[1.0,0.0,0.0,0.0]');
    expect(text).toContain('"reward_failed":[0.0,1.0,1.0,1.0]');
    const body = JSON.parse(text);
    expect(body.scores).toEqual([1, 0, 0, 0]);
    expect(server.service.metrics.fallbacks.value()).toBe(3);
  });

  test('uses the configured fallback value, flagged the same way', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: failOnBroken, service: { onError: { kind: 'fallback', value: -0.5 } } }));
    const body = await (await server.post('/get_reward', { query: [query('broken'), query('Apples.')], prompts: [templatedPrompt, templatedPrompt], labels: [fruitRubric, fruitRubric] })).json();
    expect(body.rewards).toEqual([-0.5, 0.75]);
    expect(body.scores).toEqual([0, 0.75]);
    expect(body.extra_logs.reward_failed).toEqual([1, 0]);
  });

  test('waits for room instead of refusing; a batch larger than --max-queue is admitted in parts with every reward real', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: (request) => ({ content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')), delayMs: 20 }), service: { maxQueue: 2 } }));
    const responses = ['Apples.', 'Pears.', 'Rotten apples.', 'Apples and pears.', 'Nothing.'];
    const one = (response: string) => server.post('/get_reward', { query: [query(response)], prompts: [templatedPrompt], labels: [fruitRubric] }).then((answer) => answer.json());
    const singles = await Promise.all(responses.map(one));
    expect(singles.map((body) => body.rewards[0])).toEqual(responses.map(fruitScore));
    // OpenRLHF ≤ 0.9.0 sends the whole rollout batch in one request: 5 samples through a queue of 2.
    const batch = await (await server.post('/get_reward', { query: responses.map(query), prompts: responses.map(() => templatedPrompt), labels: responses.map(() => fruitRubric) })).json();
    expect(batch.rewards).toEqual(responses.map(fruitScore));
    expect(batch.extra_logs.reward_failed).toEqual([0, 0, 0, 0, 0]);
  });

  test('an empty request (the second of --reward.remote_url a,b gets one per sample) is answered at once with empty arrays', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/get_reward', { query: [], prompts: [], labels: [] });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ rewards: [], scores: [], reward_components: [], extra_logs: { reward_failed: [], criteria_met_fraction: [] } });
    expect(server.fake.requests).toHaveLength(0);
  });

  test('a request past the full waiting line is held open until there is room, then graded: no refusal OpenRLHF would spend its 5 tries on', async ({ closeAfter }) => {
    // The slow sample's verdict waits for `release`: the queue stays full until the test says so.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const server = closeAfter(await startTestServer({
      script: async (request) => {
        if (request.response?.includes('slow')) await released;
        return { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) };
      },
      service: { maxQueue: 1, maxWaiting: 1, deadlineMs: 5_000, onError: { kind: 'fallback', value: 0 } },
    }));
    const one = (response: string) => server.post('/get_reward', { query: [query(response)], prompts: [templatedPrompt], labels: [fruitRubric] });
    const holding = one('slow apples');
    await vi.waitFor(() => expect(server.service.admission.full).toBe(true));
    const waiting = one('Pears.');
    await vi.waitFor(() => expect(server.service.admission.waiting).toBe(1));
    // The queue and its waiting line are full: the next one is held open behind them.
    const held = one('Apples.');
    await vi.waitFor(() => expect(server.service.admission.heldCount).toBe(1));
    release();
    expect((await (await holding).json()).rewards).toEqual([0.75]);
    expect((await (await waiting).json()).rewards).toEqual([0.25]);
    const heldAnswer = await held;
    expect(heldAnswer.status).toBe(200);
    expect((await heldAnswer.json()).rewards).toEqual([0.75]);
    expect(server.service.metrics.fallbacks.value()).toBe(0);
    expect(server.service.metrics.rejected.value({ reason: 'queue_full' })).toBe(0);
  });

  test('a deadline passing while waiting for room is a 503 refusal too, not a fallback', async ({ closeAfter }) => {
    const gate = judgeGate();
    const server = closeAfter(await startTestServer({
      script: async (request) => {
        if (request.response?.includes('slow')) await gate.released;
        return { content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')) };
      },
      service: { maxQueue: 1, deadlineMs: 150, onError: { kind: 'fallback', value: 0 } },
    }));
    const one = (response: string) => server.post('/get_reward', { query: [query(response)], prompts: [templatedPrompt], labels: [fruitRubric] });
    try {
      const slow = one('slow apples');
      await vi.waitFor(() => expect(server.service.admission.full).toBe(true));
      const waiting = await one('Pears and apples.');
      // The other never got room: refused for load.
      expect(waiting.status).toBe(503);
      expect((await waiting.json()).error.code).toBe('OVERLOADED');
      // The slow sample was admitted and not graded by its deadline: a grading failure, flagged fallback.
      expect((await (await slow).json()).extra_logs.reward_failed).toEqual([1]);
    } finally {
      gate.release();
    }
  });

  test('answers 400 only to a body that is not an OpenRLHF request', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const response = await server.post('/get_reward', { prompts: ['x'] });
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe('INPUT_INVALID');
  });
});
