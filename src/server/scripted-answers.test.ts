/**
 * Made-up verdicts in the reward service's answers: a judge whose replies are scripted (here a
 * loopback judge answering as `rubricate fake-judge` does, its explanations carrying the scripted
 * label) gives answers that say `scripted: true` on every endpoint whose shape has room for it;
 * a model's answers carry no such field.
 */
import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { binaryVerdict } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { safeParseJson } from '../util/json.js';
import { scriptedLabel } from '../util/made-up.js';
import { SqliteReplyStore } from '../store/sqlite.js';
import type { ReplyStore } from '../store/types.js';
import { criterionMet, fruitRubric, ruleScript, startTestServer } from './test-support.js';

const scriptedScript = (request: { criteria: Array<{ text: string }>; response?: string }) => ({ content: binaryVerdict(criterionMet(request.criteria[0]?.text ?? '', request.response ?? ''), scriptedLabel) });
const item = (response: string) => ({ prompt: 'Name some fruit.', response, rubric: fruitRubric });
const nemoFixture = JSON.parse(readFileSync(new URL('./adapters/fixtures/nemo-gym-verify.json', import.meta.url), 'utf8')) as { request: Record<string, unknown> };
const vertexRequest = { example: { contents: [{ role: 'user', parts: [{ text: 'Name some fruit.' }] }], references: { rubric: JSON.stringify(fruitRubric) } }, response: { role: 'model', parts: [{ text: 'Apples.' }] } };
const openRlhfRequest = { query: ['Name some fruit. Apples.', 'Name some fruit. Pears.'], prompts: ['Name some fruit. ', 'Name some fruit. '], labels: [fruitRubric, fruitRubric] };

describe('reward answers say when their verdicts are made up', () => {
  test('score, batch and group answers, and the OpenRLHF, Vertex and NeMo Gym adapters, carry scripted: true', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: scriptedScript }));
    const one = await (await server.post('/v1/score', item('Apples and pears.'))).json();
    expect(one).toMatchObject({ status: 'ok', reward: 1, scripted: true });
    const batch = await (await server.post('/v1/score/batch', { items: [item('Apples.'), item('Pears.')] })).json();
    expect(batch.results.map((result: { scripted?: boolean }) => result.scripted)).toEqual([true, true]);
    const group = await (await server.post('/v1/score/group', { prompt: 'Name some fruit.', rubric: fruitRubric, responses: ['Apples.', 'Pears.', 'Rotten apples.'] })).json();
    expect(group.scripted).toBe(true);
    expect(group.results.every((result: { scripted?: boolean }) => result.scripted === true)).toBe(true);
    const openRlhf = await (await server.post('/get_reward', openRlhfRequest)).json();
    expect(openRlhf.scripted).toBe(true);
    expect(openRlhf.extra_logs.scripted).toEqual([1, 1]);
    const vertex = await (await server.post('/vertex/reward', vertexRequest)).json();
    const aux = safeParseJson(vertex.user_requested_aux_info);
    expect(aux.ok && (aux.value as { scripted?: boolean }).scripted).toBe(true);
    const nemo = await (await server.post('/verify', { ...nemoFixture.request, rubric: JSON.stringify(fruitRubric) })).json();
    expect(nemo.scripted).toBe(true);
  });

  test("a model's answers carry no scripted field", async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script: ruleScript }));
    const one = await (await server.post('/v1/score', item('Apples and pears.'))).json();
    expect(one).toMatchObject({ status: 'ok', reward: 1 });
    expect(one).not.toHaveProperty('scripted');
    const group = await (await server.post('/v1/score/group', { prompt: 'Name some fruit.', rubric: fruitRubric, responses: ['Apples.', 'Pears.'] })).json();
    expect(group).not.toHaveProperty('scripted');
    const openRlhf = await (await server.post('/get_reward', openRlhfRequest)).json();
    expect(Object.keys(openRlhf).sort()).toEqual(['extra_logs', 'reward_components', 'rewards', 'scores']);
    expect(openRlhf.extra_logs).not.toHaveProperty('scripted');
  });
  test('a grading answered again from memory says what it said the first time', async ({ closeAfter }) => {
    for (const [script, scripted] of [[scriptedScript, true], [ruleScript, undefined]] as const) {
      const sqlite = new SqliteReplyStore(':memory:');
      let reads = 0;
      const store: ReplyStore = { get: (key) => ((reads += 1), sqlite.get(key)), put: (key, reply) => sqlite.put(key, reply), close: () => sqlite.close() };
      const server = closeAfter(await startTestServer({ script, service: { grading: { store } } }));
      const answers = [];
      for (const id of ['paid', 'stored', 'remembered']) answers.push(await (await server.post('/v1/score', { id, ...item('Apples and pears.') })).json());
      const readsAfterStored = reads;
      answers.push(await (await server.post('/v1/score', { id: 'again', ...item('Apples and pears.') })).json());
      // Answered from the remembered grading: the store is not read again.
      expect(reads).toBe(readsAfterStored);
      expect(answers.map((answer) => answer.scripted)).toEqual([scripted, scripted, scripted, scripted]);
    }
  });
});
