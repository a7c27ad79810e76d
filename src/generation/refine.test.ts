import { describe, expect } from 'vitest';
import { Grader } from '../pipeline/grader.js';
import { normalizeRubric } from '../rubric/normalize.js';
import type { FakeJudge, FakeJudgeAction, FakeJudgeRequest } from '../testing/fake-judge.js';
import { test as base } from '../testing/vitest-fixtures.js';
import { answer, fencedBlocks, generatorAndJudge, mentions, taskOf, type FakeTask } from './fixtures/fake-generator.js';
import { createRubricGenerator, type RubricGenerator } from './generator.js';
import { formatRefineSummary, refineRubric, rescore } from './refine.js';

type Handlers = Partial<Record<FakeTask, (request: FakeJudgeRequest) => FakeJudgeAction>>;

/** `setup(handlers)`: one fake server as generator (answering with `handlers`) and keyword judge, and the generator and grader using it. */
const test = base.extend<{ setup: (handlers: Handlers) => Promise<{ fake: FakeJudge; generator: RubricGenerator; grader: Grader }> }>({
  setup: async ({ startJudge, connectJudge }, use) => {
    await use(async (handlers) => {
      const fake = await startJudge(
        generatorAndJudge((request, task) => {
          const handler = handlers[task];
          if (!handler) throw new Error(`unexpected ${task} request`);
          return handler(request);
        }),
      );
      return {
        fake,
        generator: createRubricGenerator({ generator: connectJudge(fake, { model: 'writer' }), minCriteria: 1, maxCriteria: 8, retryBaseDelayMs: 1, maxAttempts: 2 }),
        grader: new Grader({ judge: connectJudge(fake, { model: 'judge' }), scoring: 'weighted_mean', calls: { retryBaseDelayMs: 1 } }),
      };
    });
  },
});

const prompt = [{ role: 'user', content: 'Name some fruit.' }];
const responses = ['apple', 'apple banana', 'apple banana cherry', 'apple banana cherry', 'apple banana cherry durian'];
const startRubric = normalizeRubric({ id: 'fruit', criteria: [mentions('apple'), mentions('banana'), mentions('cherry')].map((criterion) => ({ text: criterion.text, points: 3 })) });

/** Refinement that adds a criterion for a word only the first of the two shown responses has. */
function separateTopTwo(request: FakeJudgeRequest): FakeJudgeAction {
  const [first, second] = [fencedBlocks(request, 'response-1')[0], fencedBlocks(request, 'response-2')[0]];
  const extra = first.split(' ').find((word) => !second.split(' ').includes(word)) ?? second.split(' ').find((word) => !first.split(' ').includes(word));
  const existing = [...request.userText.matchAll(/mentions "([^"]+)"/g)].map((match) => match[1]);
  return { content: answer([...new Set([...existing, ...(extra ? [extra] : [])])].map((word) => mentions(word))) };
}

describe('refineRubric', () => {
  test('separates the top two responses and reports spread, ties and gap per round', async ({ setup }) => {
    const { generator, grader } = await setup({ refine: separateTopTwo });
    const outcome = await refineRubric({ id: 'fruit', prompt, rubric: startRubric, responses }, { generator, grader, iterations: 1 });
    const [start, end] = outcome.iterations;
    expect(start.scores).toEqual([0.333333, 0.666667, 1, 1, 1]);
    expect(start.separation).toMatchObject({ top_ties: 3, top2_gap: 0 });
    expect(start.top_two).toEqual([2, 3]);
    // The two tied best were identical ("apple banana cherry"), so the generator was shown them; nothing to add: no change.
    expect(end.changes).toEqual({ added: 0, removed: 0, kept: 3 });
    expect(outcome.final.separation).toEqual(end.separation);
    expect(outcome.generated_initial).toBe(false);
    expect(outcome.rubric.id).toBe('fruit');
  });

  test('adds the criterion that tells the best responses apart', async ({ setup }) => {
    const { fake, generator, grader } = await setup({ refine: separateTopTwo });
    const distinct = ['apple', 'apple banana', 'apple banana cherry', 'apple banana cherry durian'];
    const outcome = await refineRubric({ id: 'fruit', prompt, rubric: startRubric, responses: distinct }, { generator, grader, iterations: 2 });
    expect(outcome.iterations.map((report) => report.separation.top_ties)).toEqual([2, 1, 1]);
    expect(outcome.iterations[1]).toMatchObject({ criteria: 4, changes: { added: 1, removed: 0, kept: 3 }, scores: [0.25, 0.5, 0.75, 1] });
    expect(outcome.iterations[1].separation.top2_gap).toBe(0.25);
    expect(outcome.rubric.criteria.map((criterion) => criterion.text)).toContain('The response mentions "durian".');
    expect(outcome.rubric.metadata?.generation).toMatchObject({ method: 'refine', prompt_version: 'refine/v2', iteration: 2 });
    // The refinement prompt showed how the two responses fared on every criterion.
    const refineRequest = fake.requests.find((request) => taskOf(request) === 'refine')!;
    expect(refineRequest.userText).toContain('- [Important, principle] The response mentions "cherry".\n  response 1: met; response 2: met');
    const summary = formatRefineSummary(outcome);
    expect(summary.split('\n')).toHaveLength(4);
    expect(summary).toContain('round 1');
  });

  test('keeps the ids of criteria the generator copies unchanged', async ({ setup }) => {
    const { generator, grader } = await setup({ refine: separateTopTwo });
    const named = normalizeRubric({ id: 'fruit', criteria: [{ id: 'A', text: 'The response mentions "apple".' }, { id: 'B', text: 'The response mentions "banana".' }] });
    const outcome = await refineRubric({ id: 'fruit', prompt, rubric: named, responses: ['apple banana', 'apple banana kiwi'] }, { generator, grader, iterations: 1 });
    expect(outcome.rubric.criteria.map((criterion) => criterion.id)).toEqual(['A', 'B', expect.stringMatching(/^c_/)]);
    expect(outcome.iterations[1].changes).toEqual({ added: 1, removed: 0, kept: 2 });
  });

  test('generates the starting rubric when the input has none', async ({ setup }) => {
    const { generator, grader } = await setup({ generate: () => ({ content: answer([mentions('apple'), mentions('banana')]) }), refine: separateTopTwo });
    const outcome = await refineRubric({ id: 'fruit', prompt, responses: ['apple', 'banana cherry'] }, { generator, grader, iterations: 1 });
    expect(outcome.generated_initial).toBe(true);
    expect(outcome.iterations[0].criteria).toBe(2);
  });

  test('stops, keeping the last graded rubric, when the generator cannot refine', async ({ setup }) => {
    const { generator, grader } = await setup({ refine: () => ({ content: '[]' }) });
    const outcome = await refineRubric({ id: 'fruit', prompt, rubric: startRubric, responses: ['apple', 'banana'] }, { generator, grader, iterations: 3 });
    expect(outcome.iterations).toHaveLength(1);
    expect(outcome.iterations[0].error).toMatchObject({ code: 'JUDGE_UNPARSEABLE' });
    expect(outcome.rubric).toEqual(startRubric);
  });

  test('with the filter: splits criteria every response meets, drops misaligned ones, weights correlated clusters at the end', async ({ setup }) => {
    const { generator, grader } = await setup({
      decompose: () => ({ content: answer([mentions('crisp'), mentions('juicy')]) }),
      refine: (request) => {
        // Keep every criterion shown; refinement itself adds nothing here.
        const existing = [...request.userText.matchAll(/mentions "([^"]+)"/g)].map((match) => match[1]);
        return { content: answer(existing.map((word) => mentions(word))) };
      },
    });
    const rubric = normalizeRubric({
      id: 'fruit',
      criteria: [
        { text: 'The response mentions "apple".', points: 3 },
        { text: 'The response mentions "banana".', points: 3 },
        { text: 'The response mentions "bananas".', points: 3 },
        { text: 'The response mentions "rotten".', points: 3 },
      ],
    });
    const fruit = ['apple', 'apple banana crisp', 'apple bananas crisp juicy', 'apple banana bananas juicy', 'apple rotten'];
    const outcome = await refineRubric(
      { id: 'fruit', prompt, rubric, responses: fruit, pairs: [{ chosen: 'apple crisp', rejected: 'apple rotten' }] },
      { generator, grader, iterations: 1, filter: { minResponsesForCorrelation: 4, clusterThreshold: 0.5 } },
    );
    const actions = outcome.iterations[0].filter!;
    expect(actions.map((action) => [action.action, action.criterion_id === rubric.criteria[0].id ? 'apple' : action.criterion_id === rubric.criteria[3].id ? 'rotten' : 'other'])).toEqual([
      ['dropped', 'rotten'],
      ['decomposed', 'apple'],
    ]);
    expect(outcome.iterations[1].criteria).toBe(4);
    // After the last round: "bananas" has exactly the verdicts of "juicy" (earlier, same points) and goes;
    // the three left all correlate (phi 2/3 ≥ 0.5), so they form one cluster and share its weight.
    const final = outcome.final.filter!;
    const textOf = (id: string) => final.find((action) => action.criterion_id === id)?.text;
    expect(final.filter((action) => action.action === 'dropped').map((action) => [textOf(action.criterion_id), action.action === 'dropped' ? action.reason : ''])).toEqual([
      ['The response mentions "bananas".', 'correlated_verdicts'],
    ]);
    expect(outcome.rubric.criteria.map((criterion) => [criterion.text, criterion.points])).toEqual([
      ['The response mentions "crisp".', 1],
      ['The response mentions "juicy".', 1],
      ['The response mentions "banana".', 1],
    ]);
    expect(final.filter((action) => action.action === 'reweighted')).toHaveLength(3);
    // Final scores come from the last verdicts under the filtered, reweighted rubric.
    expect(outcome.final.separation.n).toBe(5);
    expect(outcome.final.criteria).toBe(outcome.rubric.criteria.length);
  });
});

describe('rescore', () => {
  test('re-scores graded records under fewer criteria and new points without judge calls', async ({ setup }) => {
    const { grader } = await setup({});
    const record = await grader.gradeItem({ id: 'x', prompt, response: 'apple', rubric: startRubric });
    const smaller = normalizeRubric({ id: 'fruit', criteria: [{ id: startRubric.criteria[0].id, text: 'The response mentions "apple".', points: 1 }, { id: startRubric.criteria[1].id, text: 'The response mentions "banana".', points: 3 }] });
    expect(record.score).toBeCloseTo(1 / 3, 9);
    expect(rescore([record], smaller, grader)).toEqual([0.25]);
  });
});
