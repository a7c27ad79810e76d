/**
 * Bad input over HTTP (Hono's app.request, the real app): each case names the status, the
 * error code and the field, and checks that the judge was never called for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRubricEvolver } from '../../src/generation/evolver.js';
import { answer, keywordMet, mentions, taskOf } from '../../src/generation/fixtures/fake-generator.js';
import { createOpenAICompatibleJudge } from '../../src/judges/openai/openai-judge.js';
import { createServerApp } from '../../src/server/app.js';
import { fruitRubric, startTestServer, type TestServer } from '../../src/server/test-support.js';
import { binaryVerdict } from '../../src/testing/fake-judge.js';
import { deepJson } from './support.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const good = { id: 'a', prompt: 'Name some fruit.', response: 'Apples.', rubric: fruitRubric };

interface HttpCase {
  name: string;
  path?: string;
  /** An object (sent as JSON) or raw body text. */
  body: unknown;
  status: number;
  code: string;
  field: string;
  message?: RegExp;
}

const cases: HttpCase[] = [
  ...(['constructor', '__proto__', 'toString'] as const).map((importance): HttpCase => ({ name: `importance "${importance}"`, body: { ...good, rubric: { criteria: [{ text: 'mentions apples', importance }] } }, status: 400, code: 'INPUT_INVALID', field: 'rubric.criteria[0].importance' })),
  { name: 'metadata nested 20,000 levels', body: `${JSON.stringify(good).slice(0, -1)},"metadata":${deepJson(20_000)}}`, status: 400, code: 'INPUT_INVALID', field: 'body', message: /nested deeper than 64 levels/ },
  { name: 'a rubric given as a string nested 20,000 levels', body: { ...good, rubric: deepJson(20_000) }, status: 400, code: 'INPUT_INVALID', field: 'rubric', message: /nested deeper/ },
  { name: 'points whose sum overflows', body: { ...good, rubric: { criteria: [{ text: 'mentions apples', points: 1.7e308 }, { text: 'mentions pears', points: 1.7e308 }] } }, status: 400, code: 'INPUT_INVALID', field: 'rubric.criteria' },
  { name: 'a metadata key "__proto__"', body: `${JSON.stringify(good).slice(0, -1)},"metadata":{"__proto__":{"x":1}}}`, status: 400, code: 'INPUT_INVALID', field: 'metadata.__proto__' },
  { name: 'a tag "__proto__"', body: { ...good, tags: ['__proto__'] }, status: 400, code: 'INPUT_INVALID', field: 'tags[0]' },
  { name: 'importance_points with a "__proto__" key', body: `${JSON.stringify({ ...good, rubric: undefined }).slice(0, -1)},"rubric":{"importance_points":{"__proto__":3},"criteria":[{"text":"mentions apples","importance":"essential"}]}}`, status: 400, code: 'INPUT_INVALID', field: 'rubric.importance_points.__proto__' },
  { name: 'an image content part', body: { ...good, prompt: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/x.png' } }] }] }, status: 400, code: 'INPUT_INVALID', field: 'prompt[0].content[0]' },
  { name: 'a body that is not JSON', body: '{"prompt": ', status: 400, code: 'INPUT_INVALID', field: 'body', message: /not valid JSON/ },
  { name: 'points given as a string', body: { ...good, rubric: { criteria: [{ text: 'mentions apples', points: 'three' }] } }, status: 400, code: 'INPUT_INVALID', field: 'rubric.criteria[0].points' },
  { name: 'a batch item with importance "constructor"', path: '/v1/score/batch', body: { items: [good, { ...good, id: 'b', rubric: { criteria: [{ text: 'mentions apples', importance: 'constructor' }] } }] }, status: 400, code: 'INPUT_INVALID', field: 'items[1]' },
  { name: 'a batch nested too deep', path: '/v1/score/batch', body: `{"items":[${deepJson(20_000)}]}`, status: 400, code: 'INPUT_INVALID', field: 'body' },
];

describe('bad input over HTTP', () => {
  for (const testCase of cases) {
    it(`${testCase.name}: ${testCase.status} ${testCase.code}`, async () => {
      const calls = server.fake.requests.length;
      const response = await server.post(testCase.path ?? '/v1/score', testCase.body);
      expect(response.status).toBe(testCase.status);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe(testCase.code);
      expect(body.error.message).toContain(`field ${testCase.field}`);
      if (testCase.message) expect(body.error.message).toMatch(testCase.message);
      expect(body.error.message).not.toMatch(/TypeError|RangeError|stack/);
      expect(server.fake.requests.length).toBe(calls);
    });
  }

  it('the good request still scores after all of them (the server is unharmed)', async () => {
    const response = await server.post('/v1/score', good);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { reward: number }).reward).toBe(0.75);
  });

  /** A server with evolving rubrics; the loopback model proposes "sources" and "hello". */
  async function evolvingServer(run: (call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: Record<string, any> }>) => Promise<void>) {
    const proposals = [[mentions('sources'), mentions('hello')]];
    let next = 0;
    const local = await startTestServer({ script: (request) => (taskOf(request) === 'grade' ? { content: binaryVerdict(keywordMet(request)) } : { content: answer(proposals[next++] ?? []) }) });
    const evolver = createRubricEvolver({ generator: createOpenAICompatibleJudge({ model: 'writer', baseUrl: local.fake.baseUrl }), store: ':memory:', topK: 2 });
    try {
      const app = createServerApp({ service: local.service, evolver });
      await run(async (method, path, body) => {
        const response = await app.request(path, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
        return { status: response.status, body: (await response.json()) as Record<string, any> };
      });
    } finally {
      evolver.close();
      await local.close();
    }
  }

  it('POST /v1/rubrics/:id/observe refuses verdicts that are not verdicts ({"$ne": 1} ids, "yes")', async () => {
    await evolvingServer(async (call) => {
      expect((await call('POST', '/v1/rubrics/q/propose', { prompt: 'Say hello.', rollouts: ['hello', 'hello there'] })).status).toBe(200);
      const garbage = await call('POST', '/v1/rubrics/q/observe', { results: [{ criteria: [{ id: { $ne: 1 }, met: 'yes' }] }] });
      expect(garbage.status).toBe(400);
      expect(garbage.body.error.code).toBe('INPUT_INVALID');
      expect(garbage.body.error.message).toContain('field results[0].criteria[0].id');
      const offScale = await call('POST', '/v1/rubrics/q/observe', { results: [{ criteria: [{ id: 'x', met: true, value: 7 }] }] });
      expect(offScale.status).toBe(400);
      expect(offScale.body.error.message).toContain('field results[0].criteria[0].value');
      // Nothing was recorded: the rubric is still at its first step with both criteria active.
      expect(((await call('GET', '/v1/rubrics/q')).body.rubric.criteria as unknown[]).length).toBe(2);
    });
  });

  it('GET /v1/rubrics/:id/history answers 200 after a step retires every criterion', async () => {
    await evolvingServer(async (call) => {
      const proposed = await call('POST', '/v1/rubrics/q/propose', { prompt: 'Say hello.', rollouts: ['hello', 'hello there'] });
      expect(proposed.status).toBe(200);
      const ids = (proposed.body.rubric.criteria as Array<{ id: string }>).map((criterion) => criterion.id);
      expect(ids.length).toBe(2);
      // Every rollout meets every criterion: no variance, so every (evolving) criterion is retired.
      const results = [0, 1, 2].map(() => ({ criteria: ids.map((id) => ({ id, met: true, status: 'ok' })) }));
      const observed = await call('POST', '/v1/rubrics/q/observe', { results });
      expect(observed.status).toBe(200);
      expect((await call('GET', '/v1/rubrics/q')).status).toBe(404);
      const history = await call('GET', '/v1/rubrics/q/history');
      expect(history.status).toBe(200);
      expect((history.body.history as Array<{ event: string }>).filter((event) => event.event === 'deactivated')).toHaveLength(2);
      expect((await call('GET', '/v1/rubrics/never-seen/history')).status).toBe(404);
    });
  });
});
