/**
 * Per-turn grading through the Grader: each turn judged with the conversation up to it, each
 * turn's verdict kept, the three folds by hand, the last turn graded exactly as without turns,
 * a turn in error making the criterion an error, and the inputs that cannot be graded by turn.
 */
import { describe, expect } from 'vitest';
import type { Judge } from '../judges/types.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { FakeJudgeRequest } from '../testing/fake-judge.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { Grader } from './grader.js';

const conversation = [
  { role: 'user', content: "Hi, I'm Alex and I'm allergic to peanuts." },
  { role: 'assistant', content: 'Noted: no peanuts.' },
  { role: 'user', content: 'Suggest a snack.' },
];
const finalResponse = 'Try apple slices, Alex.';

function itemWith(criteria: unknown[], extra: Record<string, unknown> = {}) {
  return normalizeItem({ id: 'chat-1', prompt: conversation, response: finalResponse, rubric: { criteria, ...extra } });
}

/** Met when the graded turn names the criterion's last word. */
function keywordMet(request: FakeJudgeRequest): boolean {
  const keyword = request.criteria[0].text.trim().split(/\s+/).at(-1)!.toLowerCase();
  return (request.response ?? '').toLowerCase().includes(keyword);
}

/** A probability reply: P(met) 0.3 when the keyword is missing, 0.9 when present. */
function probabilityReply(request: FakeJudgeRequest) {
  const met = keywordMet(request);
  const pTrue = met ? 0.9 : 0.3;
  const tokens = ['{"criteria_met": ', String(met), '}'].map((token, index) => ({
    token,
    logprob: index === 1 ? Math.log(met ? pTrue : 1 - pTrue) : 0,
    top_logprobs: index === 1 ? [{ token: 'true', logprob: Math.log(pTrue) }, { token: 'false', logprob: Math.log(1 - pTrue) }] : [{ token, logprob: 0 }],
  }));
  return { content: `{"criteria_met": ${met}}`, logprobs: { content: tokens } };
}

const grader = (judge: Judge, options: ConstructorParameters<typeof Grader>[0] = {}) => new Grader({ judge, scoring: 'weighted_mean', calls: { retryBaseDelayMs: 1 }, ...options });

describe('per-turn grading', () => {
  test('each assistant turn is judged with the conversation up to it, and keeps its own verdict', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => ({ content: binaryVerdict(keywordMet(request)) }));
    const item = itemWith([{ id: 'name', text: 'Uses the name Alex', turn: 'every' }]);
    const result = await grader(judge).gradeItem(item);
    expect(fake.requests).toHaveLength(2);
    const first = fake.requests.find((request) => request.response === 'Noted: no peanuts.')!;
    const last = fake.requests.find((request) => request.response === finalResponse)!;
    // Turn 1 sees only what came before it; the last turn sees the whole conversation.
    expect(first.userText).toContain("I'm Alex");
    expect(first.userText).not.toContain('Suggest a snack');
    expect(last.userText).toContain('Suggest a snack');
    const [criterion] = result.criteria;
    expect(criterion.turns).toEqual({
      aggregate: 'mean',
      verdicts: [
        { turn: 1, status: 'ok', met: false, explanation: 'The response does not do this.' },
        { turn: 2, status: 'ok', met: true, explanation: 'The response does this.' },
      ],
    });
    expect(criterion.value).toBe(0.5);
    expect(criterion.met).toBe(true);
    expect(result.score).toBe(0.5);
  });

  test('the three folds: mean of the values, their minimum, or met only when every turn is', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(probabilityReply);
    const criteria = [{ id: 'name', text: 'Uses the name Alex', turn: 'every' }];
    const scores: Record<string, unknown> = {};
    for (const aggregate of ['mean', 'min', 'all'] as const) {
      const result = await grader(judge, { plan: { verdict: 'probability' } }).gradeItem(itemWith(criteria, { turn_aggregate: aggregate }));
      const [criterion] = result.criteria;
      expect(criterion.turns?.verdicts.map((turn) => turn.probability)).toEqual([expect.closeTo(0.3, 12), expect.closeTo(0.9, 12)]);
      scores[aggregate] = { score: result.score, met: criterion.met };
    }
    // By hand: mean (0.3 + 0.9) / 2 = 0.6, met; min 0.3, not met (turn 1 is not); all: turn 1 not met, so 0.
    expect(scores).toEqual({ mean: { score: expect.closeTo(0.6, 12), met: true }, min: { score: expect.closeTo(0.3, 12), met: false }, all: { score: 0, met: false } });
  });

  test('a criterion about the last turn is asked exactly as without turns; one about turn N only on turn N', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => ({ content: binaryVerdict(keywordMet(request)) }));
    const plain = normalizeItem({ id: 'chat-1', prompt: conversation, response: finalResponse, rubric: { criteria: [{ id: 'fruit', text: 'Suggests apple' }] } });
    await grader(judge).gradeItem(plain);
    const alone = fake.requests.map((request) => JSON.stringify(request.body));
    const mixed = itemWith([{ id: 'fruit', text: 'Suggests apple' }, { id: 'peanuts', text: 'Acknowledges peanuts', turn: 1 }]);
    const result = await grader(judge).gradeItem(mixed);
    const bodies = fake.requests.slice(alone.length).map((request) => JSON.stringify(request.body));
    expect(bodies).toContain(alone[0]);
    expect(result.criteria.find((criterion) => criterion.id === 'fruit')?.turns).toBeUndefined();
    expect(result.criteria.find((criterion) => criterion.id === 'peanuts')?.turns?.verdicts).toEqual([{ turn: 1, status: 'ok', met: true, explanation: 'The response does this.' }]);
  });

  test('a turn whose verdict fails makes the criterion an error, the other turn kept', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge((request) => (request.response === finalResponse ? { content: 'not json at all' } : { content: binaryVerdict(true) }));
    const result = await grader(judge, { calls: { maxAttempts: 1, retryBaseDelayMs: 1 } }).gradeItem(itemWith([{ id: 'name', text: 'Uses the name Alex', turn: 'every' }]));
    expect(result.status).toBe('error');
    expect(result.score).toBeNull();
    const [criterion] = result.criteria;
    expect(criterion.error?.code).toBe('JUDGE_UNPARSEABLE');
    expect(criterion.error?.message).toMatch(/^turn 2: /);
    expect(criterion.turns?.verdicts.map((turn) => turn.status)).toEqual(['ok', 'error']);
  });

  test('a turn the conversation does not have, a gate, or a trajectory are refused at the edge, naming the field', () => {
    expect(() => itemWith([{ text: 'x', turn: 3 }])).toThrow(expect.objectContaining({ code: 'INPUT_INVALID', details: expect.objectContaining({ field: 'rubric.criteria[0].turn' }) }));
    expect(() => itemWith([{ text: 'x', turn: 'every', kind: 'hard_rule' }], { gate: 'hard_rules' })).toThrow(expect.objectContaining({ code: 'INPUT_INVALID', details: expect.objectContaining({ field: 'rubric.gate' }) }));
    const trajectory = [{ role: 'assistant', content: 'Looking it up.' }];
    expect(() => normalizeItem({ id: 't', prompt: 'p', response: trajectory, rubric: { criteria: [{ text: 'x', turn: 'every' }] } })).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: 'response' }) }));
  });

  test('holistic mode, which scores the whole rubric at once, refuses per-turn criteria', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: { explanation: 'x', choice: '5' } }));
    await expect(grader(judge, { plan: { mode: 'holistic' } }).gradeItem(itemWith([{ text: 'Uses the name Alex', turn: 'every' }]))).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(fake.requests).toHaveLength(0);
  });
});
