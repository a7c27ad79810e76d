/**
 * Process rewards end to end: step-scoped criteria through `rubricate grade` and the reward
 * server (`/v1/score`, `/v1/score/group`), each step's verdict and the step rewards on the
 * results line and in the answers, the trajectory reward folded by each declared rule and
 * worked out by hand; a failed step is an error, never 0; `--max-steps` refuses before any call.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { readResults } from '../src/results/results.js';
import { startTestServer } from '../src/server/test-support.js';
import { binaryVerdict, type FakeJudgeRequest, type FakeJudgeScript } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

/** A three-step trajectory: a search, a lookup that goes wrong, the answer. */
function trajectory(tag: string): unknown[] {
  return [
    { role: 'assistant', content: `Searching (${tag}).`, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q": "capital of France"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'Paris is the capital of France.' },
    { role: 'assistant', content: 'Looking up the wrong city.', tool_calls: [{ id: 'c2', type: 'function', function: { name: 'lookup', arguments: '{"city": "Lyon"}' } }] },
    { role: 'tool', tool_call_id: 'c2', content: 'Lyon: population 500,000.' },
    { role: 'assistant', content: 'The capital of France is Paris.' },
  ];
}

const useful = 'The step moves the task forward';
const answered = 'The final answer names Paris';

function item(id: string, stepAggregate: unknown): Record<string, unknown> {
  return {
    id,
    prompt: 'What is the capital of France?',
    response: trajectory(id),
    rubric: {
      criteria: [
        { id: 'useful', text: useful, points: 2, scope: 'step' },
        { id: 'answer', text: answered, points: 1 },
      ],
      ...(stepAggregate === undefined ? {} : { step_aggregate: stepAggregate }),
    },
  };
}

/**
 * The judge's rule: a step is useful unless the last step shown goes wrong (step 2); the answer
 * criterion is met when the response names Paris. A step whose trajectory was tagged `breaks`
 * gets HTTP 500 at step 2.
 */
const script: FakeJudgeScript = (request: FakeJudgeRequest) => {
  const criterion = request.criteria[0].text;
  const step = /\(Process step (\d+) of 3:/.exec(criterion)?.[1];
  if (step === undefined) return { content: binaryVerdict(criterion === answered && (request.response ?? '').includes('Paris')) };
  if (step === '2' && (request.response ?? '').includes('(breaks)')) return { status: 500 };
  return { content: binaryVerdict(step !== '2') };
};

// Step verdicts 1, 0, 1 on the 2-point step criterion; the 1-point answer criterion is met.
// Each rule's value v, then the reward (2·v + 1) ÷ 3:
const byHand = {
  min: 0,
  mean: 2 / 3,
  last: 1,
  // (1·1 + 0.5·0 + 0.25·1) ÷ (1 + 0.5 + 0.25) = 5/7
  discounted: 1.25 / 1.75,
};
const rewardOf = (value: number) => (2 * value + 1) / 3;

interface Line {
  id: string;
  status: string;
  score: number | null;
  step_rewards?: Array<number | null>;
  error?: { code: string; message: string };
  criteria: Array<{ id: string; status: string; value?: number; met: boolean | null; error?: { message: string }; process?: { aggregate: string; gamma?: number; verdicts: Array<{ step: number; status: string; met: boolean | null }> } }>;
}

describe('process rewards', () => {
  test('rubricate grade: each rule folds the step verdicts as worked by hand; a failed step is an error; the line reads back byte for byte', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(script);
    const input = join(tempDir, 'items.jsonl');
    const items = [item('min', 'min'), item('mean', undefined), item('last', { rule: 'last' }), item('discounted', { rule: 'discounted', gamma: 0.5 }), item('breaks', 'mean')];
    writeFileSync(input, `${items.map((entry) => JSON.stringify(entry)).join('\n')}\n`);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(['grade', '--input', input, '--out', out, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--max-attempts', '1', '--quiet']);
    expect(result.code, result.stderr).not.toBe(0);
    // One task per (step criterion, step) and one for the whole response, per item.
    expect(fake.requests).toHaveLength(5 * (3 + 1));
    const text = readFileSync(out, 'utf8');
    const lines = text.trim().split('\n').map((line) => JSON.parse(line) as Line);
    for (const rule of ['min', 'mean', 'last', 'discounted'] as const) {
      const line = lines.find((entry) => entry.id === rule)!;
      expect(line.status).toBe('ok');
      expect(line.step_rewards).toEqual([1, 0, 1]);
      const useful = line.criteria.find((criterion) => criterion.id === 'useful')!;
      expect(useful.process?.verdicts.map((verdict) => [verdict.step, verdict.met])).toEqual([
        [1, true],
        [2, false],
        [3, true],
      ]);
      expect(useful.process?.aggregate).toBe(rule);
      expect(useful.value ?? (useful.met ? 1 : 0)).toBeCloseTo(byHand[rule], 12);
      expect(line.score).toBeCloseTo(rewardOf(byHand[rule]), 12);
    }
    expect(lines.find((entry) => entry.id === 'discounted')!.criteria[0].process?.gamma).toBe(0.5);
    const broken = lines.find((entry) => entry.id === 'breaks')!;
    expect(broken.status).toBe('error');
    expect(broken.score).toBeNull();
    expect(broken.step_rewards).toEqual([1, null, 1]);
    expect(broken.criteria[0]).toMatchObject({ status: 'error', error: { message: expect.stringMatching(/^step 2: /) } });
    const written: string[] = [];
    for await (const read of readResults(out)) if (read.kind === 'result') written.push(JSON.stringify(read.record));
    expect(`${written.join('\n')}\n`).toBe(text);
  });

  test('--max-steps: a longer trajectory is refused before any judge call', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(script);
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, `${JSON.stringify(item('long', 'mean'))}\n`);
    const out = join(tempDir, 'results.jsonl');
    const result = await runCliInProcess(['grade', '--input', input, '--out', out, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--max-steps', '2', '--quiet']);
    expect(result.code).not.toBe(0);
    expect(fake.requests).toHaveLength(0);
    const line = JSON.parse(readFileSync(out, 'utf8').trim()) as Line;
    expect(line).toMatchObject({ status: 'error', score: null, error: { code: 'LIMIT_EXCEEDED' } });
    expect(line.error?.message).toMatch(/3 steps, over the bound of 2 \(--max-steps\)/);
  });

  test('a step-scoped criterion on a plain text response is refused naming the field', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(script);
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, `${JSON.stringify({ ...item('text', 'mean'), response: 'Paris.' })}\n`);
    const result = await runCliInProcess(['grade', '--input', input, '--out', join(tempDir, 'results.jsonl'), '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/step-scoped criteria/);
    expect(fake.requests).toHaveLength(0);
  });

  test('serve: /v1/score and /v1/score/group answer the step rewards and each step\'s verdict; components carry the folded value', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer({ script }));
    const single = await (await server.post('/v1/score', item('one', { rule: 'discounted', gamma: 0.5 }))).json();
    expect(single.step_rewards).toEqual([1, 0, 1]);
    expect(single.reward).toBeCloseTo(rewardOf(byHand.discounted), 12);
    expect(single.criteria[0].process.verdicts.map((verdict: { met: boolean }) => verdict.met)).toEqual([true, false, true]);
    expect(single.reward_components['criterion:useful']).toBeCloseTo(byHand.discounted, 12);
    expect(single.reward_components['criterion:answer']).toBe(1);
    const rubric = item('g', 'min').rubric;
    const group = await server.post('/v1/score/group', { prompt: 'What is the capital of France?', rubric, responses: [trajectory('a'), trajectory('breaks')] });
    expect(group.status).toBe(200);
    const answer = await group.json();
    expect(answer.rewards[0]).toBeCloseTo(rewardOf(byHand.min), 12);
    // A failed step: no reward for that response, never 0.
    expect(answer.rewards[1]).toBeNull();
    expect(answer.step_rewards).toEqual([
      [1, 0, 1],
      [1, null, 1],
    ]);
    expect(answer.results[1]).toMatchObject({ status: 'error', step_rewards: [1, null, 1] });
    // Over --max-steps: refused whole before admission, no call made.
    const bounded = closeAfter(await startTestServer({ script, service: { grading: { limits: { maxSteps: 2 } } } }));
    const refused = await bounded.post('/v1/score', item('long', 'mean'));
    expect(refused.status).toBe(413);
    expect((await refused.json()).error.code).toBe('LIMIT_EXCEEDED');
    expect(bounded.fake.requests).toHaveLength(0);
    // Text responses cannot be graded by step: 400 naming the response.
    const text = await server.post('/v1/score/group', { prompt: 'q', rubric, responses: [trajectory('a'), 'Paris.'] });
    expect(text.status).toBe(400);
    expect((await text.json()).error.message).toMatch(/step-scoped/);
  });
});
