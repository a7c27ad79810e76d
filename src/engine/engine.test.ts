import { describe, expect } from 'vitest';
import { createBatchedStrategy, createPerCriterionStrategy } from '../grading/strategies.js';
import type { Judge } from '../judges/types.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { Item } from '../rubric/schema.js';
import { batchedVerdicts, binaryVerdict, type FakeJudgeScript } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { GradingEngine, type CheckRunner, type EngineOptions, type GradedItem } from './engine.js';
import { SqliteReplyStore } from '../store/index.js';

const sampling = { temperature: 0, maxTokens: 128 };

function engine(options: Partial<EngineOptions> & { judge?: Judge }) {
  return new GradingEngine({ strategy: createPerCriterionStrategy({ sampling }), ...options, calls: { retryBaseDelayMs: 5, retryMaxDelayMs: 20, ...options.calls } });
}

function makeItem(id: string, criteria: number, response = `response ${id}`): Item {
  return normalizeItem({
    id,
    prompt: 'question',
    response,
    rubric: { criteria: Array.from({ length: criteria }, (_, index) => ({ id: `c${index}`, text: `criterion ${index}`, points: index % 3 === 2 ? -2 : 3 })) },
  });
}

/** Deterministic "truth" for a criterion of a response, so retries must give the same answer. */
const truth = (criterionText: string, response: string) => (criterionText.length + response.length) % 2 === 0;

describe('GradingEngine', () => {
  test('grades every criterion with one call each and records usage', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => ({ content: binaryVerdict(truth(request.criteria[0].text, request.response!)), usage: { prompt_tokens: 50, completion_tokens: 7 } }));
    const graded = await engine({ judge }).gradeItem(makeItem('a', 4));
    expect(graded.status).toBe('ok');
    expect(graded.criteria.map((result) => result.verdict?.met)).toEqual(graded.criteria.map((result) => truth(result.criterion.text, 'response a')));
    expect(graded.usage).toMatchObject({ calls: 4, prompt_tokens: 200, completion_tokens: 28, cache_hits: 0, retries: 0 });
    expect(fake.requests).toHaveLength(4);
  });

  test('retries 429 (honouring Retry-After), 500, dropped connections and timeouts, then succeeds', async ({ scriptedJudge }) => {
    const plan = [{ status: 429, headers: { 'retry-after-ms': '30' } }, { status: 500 }, { destroy: true as const }, { hang: true as const }];
    const { judge } = await scriptedJudge((request) => plan[request.index] ?? { content: binaryVerdict(true) });
    const started = Date.now();
    // The timeout ends the hang; it is long enough that no prompt answer is ever mistaken for one under load.
    const graded = await engine({ judge, calls: { timeoutMs: 500, concurrency: 1 } }).gradeItem(makeItem('a', 1));
    expect(graded.status).toBe('ok');
    expect(graded.criteria[0].verdict?.met).toBe(true);
    expect(graded.usage).toMatchObject({ calls: 5, retries: 4 });
    // At least the 30 ms Retry-After asked plus the timeout waited out (a lower bound: load only adds to it).
    expect(Date.now() - started).toBeGreaterThanOrEqual(530);
  });

  test('reports a criterion whose replies never parse as an error with the reason, never as "not met"', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: 'I think it is fine' }));
    const graded = await engine({ judge, calls: { maxAttempts: 3 } }).gradeItem(makeItem('a', 2));
    expect(graded.status).toBe('error');
    for (const result of graded.criteria) {
      expect(result.status).toBe('error');
      expect(result.verdict).toBeUndefined();
      expect(result.error?.code).toBe('JUDGE_UNPARSEABLE');
      expect(result.error?.message).toMatch(/no JSON object.*after 3 attempts/);
    }
    expect(fake.requests).toHaveLength(6);
  });

  test('a label outside the scale is retried, then an error', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: { explanation: 'x', choice: 'Excellent' } }));
    const item = normalizeItem({ id: 'o', prompt: 'q', response: 'r', rubric: { criteria: [{ text: 't', scale: { type: 'ordinal', choices: [{ label: '1' }, { label: '2' }] } }] } });
    const graded = await engine({ judge, calls: { maxAttempts: 2 } }).gradeItem(item);
    expect(graded.criteria[0].error?.message).toMatch(/not on its scale/);
    expect(fake.requests).toHaveLength(2);
  });

  test('does not retry a request the judge rejects outright', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ status: 400, body: { error: { message: 'bad request: temperature' } } }));
    const graded = await engine({ judge }).gradeItem(makeItem('a', 1));
    expect(graded.criteria[0].error?.code).toBe('JUDGE_REQUEST_REJECTED');
    expect(fake.requests).toHaveLength(1);
  });

  test('with 20% of calls failing in mixed ways, every item ends ok or error with a reason and no score comes from a failed call', async ({ scriptedJudge }) => {
    const failures: Array<() => ReturnType<FakeJudgeScript>> = [
      () => ({ status: 500 }),
      () => ({ status: 429, headers: { 'retry-after-ms': '5' } }),
      () => ({ content: 'not json at all' }),
      () => ({ content: '{"explanation": "truncated' }),
      () => ({ content: { explanation: 'wrong type', criteria_met: 'perhaps' } }),
      () => ({ destroy: true }),
      () => ({ hang: true }),
    ];
    const hang = failures.length - 1;
    // Which calls fail, how and how often is fixed by the item and criterion, never by timing: one criterion
    // in five fails, in the way its item picks, on its first attempt, its first two, or (every fifth item) all three.
    // A hang fails once only: the timeout that ends it is the one wait in this test.
    const planFor = (item: number, criterion: number) => {
      if ((item + criterion) % 5 !== 0) return undefined;
      const way = item % failures.length;
      return { way, failingAttempts: way === hang ? 1 : item % 5 === 4 ? 3 : 1 + (item % 2) };
    };
    const attempts = new Map<string, number>();
    let failedCalls = 0;
    const { judge } = await scriptedJudge((request) => {
      const item = Number(/^response i(\d+)$/.exec(request.response!)![1]);
      const criterion = Number(/^criterion (\d+)$/.exec(request.criteria[0].text)![1]);
      const key = `${item}/${criterion}`;
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      const plan = planFor(item, criterion);
      if (plan && attempt <= plan.failingAttempts) {
        failedCalls += 1;
        return failures[plan.way]();
      }
      return { content: binaryVerdict(truth(request.criteria[0].text, request.response!)) };
    });
    const items = Array.from({ length: 40 }, (_, index) => makeItem(`i${index}`, 5));
    // The timeout only has to end the hangs: a loopback answer comes far sooner, even on a loaded machine.
    const grading = engine({ judge, calls: { concurrency: 8, timeoutMs: 1_000, maxAttempts: 3 } });
    const graded: GradedItem[] = await Promise.all(items.map((item) => grading.gradeItem(item)));
    expect(graded.map((entry) => entry.item.id)).toEqual(items.map((entry) => entry.id));
    for (const [itemIndex, entry] of graded.entries()) {
      expect(['ok', 'error']).toContain(entry.status);
      for (const [criterionIndex, result] of entry.criteria.entries()) {
        // A criterion is an error exactly when every one of its attempts failed.
        expect(result.status).toBe(planFor(itemIndex, criterionIndex)?.failingAttempts === 3 ? 'error' : 'ok');
        if (result.status === 'ok') expect(result.verdict?.met).toBe(truth(result.criterion.text, entry.item.response));
        else {
          expect(result.verdict).toBeUndefined();
          expect(result.error?.code).toMatch(/^JUDGE_/);
          expect(result.error?.message.length).toBeGreaterThan(10);
        }
      }
      expect(entry.status === 'error').toBe(entry.criteria.some((result) => result.status === 'error'));
    }
    expect(graded.filter((entry) => entry.status === 'ok').length).toBeGreaterThan(30);
    // About a fifth of all calls failed.
    const calls = [...attempts.values()].reduce((sum, count) => sum + count, 0);
    expect(failedCalls / calls).toBeGreaterThan(0.15);
    expect(failedCalls / calls).toBeLessThan(0.3);
  });

  test('makes identical requests in flight once', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: binaryVerdict(true), delayMs: 40 }));
    const grader = engine({ judge });
    const [first, second] = await Promise.all([grader.gradeItem(makeItem('a', 3, 'same')), grader.gradeItem(makeItem('b', 3, 'same'))]);
    expect(fake.requests).toHaveLength(3);
    expect(first.usage.calls + second.usage.calls).toBe(3);
    expect(first.usage.cache_hits + second.usage.cache_hits).toBe(3);
    expect(second.criteria.map((result) => result.verdict?.met)).toEqual([true, true, true]);
  });

  test('reuses stored replies: a second run makes no calls and gives the same verdicts', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => ({ content: binaryVerdict(truth(request.criteria[0].text, request.response!)) }));
    const store = new SqliteReplyStore(':memory:');
    const items = [makeItem('a', 3), makeItem('b', 3)];
    const first = await Promise.all(items.map((item) => engine({ judge, store }).gradeItem(item)));
    expect(fake.requests).toHaveLength(6);
    const second = await Promise.all(items.map((item) => engine({ judge, store }).gradeItem(item)));
    expect(fake.requests).toHaveLength(6);
    expect(second.map((entry) => entry.criteria)).toEqual(first.map((entry) => entry.criteria));
    expect(second.map((entry) => entry.usage.cache_hits)).toEqual([3, 3]);
    expect(second.map((entry) => entry.usage.calls)).toEqual([0, 0]);
    // Only a grading read wholly from the store says so (the server may then reuse it).
    expect(first.map((entry) => entry.fromStore)).toEqual([undefined, undefined]);
    expect(second.map((entry) => entry.fromStore)).toEqual([true, true]);
    store.close();
  });

  test('a grading is from the store only when every verdict came from its own store lookups', async ({ scriptedJudge }) => {
    let delayMs = 40;
    const { judge } = await scriptedJudge((request) => ({ content: binaryVerdict(truth(request.criteria[0].text, request.response!)), delayMs }));
    const store = new SqliteReplyStore(':memory:');
    const grader = engine({ judge, store });
    // Joined in flight: no call of its own, yet not read from the store.
    const [leader, follower] = await Promise.all([grader.gradeItem(makeItem('a', 3, 'same')), grader.gradeItem(makeItem('b', 3, 'same'))]);
    expect(leader.usage.calls + follower.usage.calls).toBe(3);
    expect([leader.fromStore, follower.fromStore]).toEqual([undefined, undefined]);
    // Two criteria stored, one new: not wholly from the store.
    delayMs = 0;
    const wider = normalizeItem({ id: 'c', prompt: 'question', response: 'same', rubric: { criteria: [...makeItem('x', 2).rubric.criteria, { id: 'extra', text: 'criterion extra', points: 1 }] } });
    const mixed = await grader.gradeItem(wider);
    expect(mixed.usage).toMatchObject({ calls: 1, cache_hits: 2 });
    expect(mixed.fromStore).toBeUndefined();
    expect((await grader.gradeItem(wider)).fromStore).toBe(true);
    // Without a store, nothing is from it.
    expect((await engine({ judge }).gradeItem(makeItem('d', 2, 'same'))).fromStore).toBeUndefined();
    store.close();
  });

  test('does not store replies that gave no verdict', async ({ scriptedJudge }) => {
    let parseable = false;
    const { judge } = await scriptedJudge(() => ({ content: parseable ? binaryVerdict(true) : 'garbage' }));
    const store = new SqliteReplyStore(':memory:');
    const failed = await engine({ judge, store, calls: { maxAttempts: 1 } }).gradeItem(makeItem('a', 1));
    expect(failed.status).toBe('error');
    parseable = true;
    const retried = await engine({ judge, store }).gradeItem(makeItem('a', 1));
    expect(retried.status).toBe('ok');
    expect(retried.usage.calls).toBe(1);
    store.close();
  });

  test('batched: re-asks only the criteria a reply left out', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => {
      const keep = request.index === 0 ? request.criteria.slice(0, 2) : request.criteria;
      return { content: batchedVerdicts(keep, () => true) };
    });
    const graded = await engine({ judge, strategy: createBatchedStrategy({ sampling, criteriaPerCall: 4 }) }).gradeItem(makeItem('a', 4));
    expect(graded.status).toBe('ok');
    expect(fake.requests.map((request) => request.criteria.map((criterion) => criterion.id))).toEqual([
      ['c0', 'c1', 'c2', 'c3'],
      ['c2', 'c3'],
    ]);
  });

  test('runs checks locally and sends only the other criteria to the judge', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }));
    const checkRunner: CheckRunner = (spec, response) => ({ passed: !response.includes(','), detail: `checked ${spec.type}` });
    const item = normalizeItem({
      id: 'h',
      prompt: 'q',
      response: 'no commas here',
      rubric: { criteria: [{ id: 'rule', text: 'No commas', kind: 'hard_rule', check: { type: 'punctuation:no_comma' } }, { id: 'principle', text: 'Is helpful' }] },
    });
    const graded = await engine({ judge, checkRunner }).gradeItem(item);
    expect(graded.criteria.map((result) => [result.source, result.verdict?.met])).toEqual([
      ['check', true],
      ['judge', true],
    ]);
    expect(graded.criteria[0].verdict?.explanation).toBe('checked punctuation:no_comma');
    expect(fake.requests).toHaveLength(1);
  });

  test('gate: a failed hard rule zeroes the item and the judge is never asked', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }));
    const checkRunner: CheckRunner = () => ({ passed: false });
    const item = normalizeItem({
      id: 'g',
      prompt: 'q',
      response: 'r',
      rubric: { gate: 'hard_rules', criteria: [{ text: 'rule', kind: 'hard_rule', check: { type: 'x' } }, { text: 'p1' }, { text: 'p2' }] },
    });
    const graded = await engine({ judge, checkRunner }).gradeItem(item);
    expect(graded.gated).toBe(true);
    expect(graded.status).toBe('ok');
    expect(graded.usage.gate_calls_saved).toBe(2);
    expect(graded.criteria.slice(1).map((result) => [result.status, result.skipReason])).toEqual([
      ['skipped', 'gated'],
      ['skipped', 'gated'],
    ]);
    expect(fake.requests).toHaveLength(0);
  });

  test('without a judge, criteria that need one are errors that say so', async () => {
    const graded = await engine({}).gradeItem(makeItem('a', 1));
    expect(graded.criteria[0].error).toMatchObject({ code: 'JUDGE_UNAVAILABLE' });
  });
});
