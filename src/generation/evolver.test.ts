import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { Judge } from '../judges/types.js';
import { Grader } from '../pipeline/grader.js';
import type { FakeJudge, FakeJudgeScript } from '../testing/fake-judge.js';
import { redisTest } from '../testing/redis-fixture.js';
import { test as base } from '../testing/vitest-fixtures.js';
import { createRubricEvolver, type ObservedRollout, type RubricEvolver } from './evolver.js';
import { answer, fencedBlocks, generatorAndJudge, mentions, taskOf, type FakeCriterion } from './fixtures/fake-generator.js';
import { hangGuard } from '../testing/hang-guard.js';

/**
 * `setup(proposals)`: a fake server as keyword judge and as a generator proposing what the
 * script hands it next (every request kept for inspection), and an evolver using it.
 */
const test = base.extend<{ setup: (proposals: FakeCriterion[][], options?: { store?: string; topK?: number }) => Promise<{ fake: FakeJudge; evolver: RubricEvolver; writer: Judge }> }>({
  setup: async ({ startJudge, connectJudge, closeAfter }, use) => {
    await use(async (proposals, options = {}) => {
      let next = 0;
      const fake = await startJudge(generatorAndJudge(() => ({ content: answer(proposals[next++] ?? []) })));
      const writer = connectJudge(fake, { model: 'writer' });
      const evolver = closeAfter(createRubricEvolver({ generator: writer, store: options.store ?? ':memory:', topK: options.topK ?? 2 }));
      return { fake, evolver, writer };
    });
  },
});

const rollout = (met: Record<string, boolean | null>): ObservedRollout => ({ criteria: Object.entries(met).map(([id, value]) => ({ id, met: value, status: value === null ? 'error' : 'ok' })) });

describe('createRubricEvolver', () => {
  test('proposes criteria from the differences between rollouts, skipping ones it already has', async ({ setup }) => {
    const { fake, evolver } = await setup([
      [mentions('citation'), { ...mentions('padding'), importance: 'Pitfall' }],
      [mentions('Citation'), mentions('example')],
    ]);
    await evolver.setPersistent('q1', 'Explain X.', [{ text: 'The response defines X.', points: 5 }]);
    const first = await evolver.propose('q1', 'Explain X.', ['short answer', 'long answer with citation'], ['reference answer']);
    expect(first.step).toBe(1);
    expect(first.added.map((criterion) => [criterion.text, criterion.points])).toEqual([
      ['The response mentions "citation".', 1],
      ['The response mentions "padding".', -1],
    ]);
    const request = fake.requests[0];
    expect(taskOf(request)).toBe('evolve');
    expect(fencedBlocks(request, 'policy')).toEqual(['short answer', 'long answer with citation']);
    expect(fencedBlocks(request, 'reference')).toEqual(['reference answer']);
    expect(request.userText).toContain('- [Essential] The response defines X.');
    expect(request.body.response_format).toMatchObject({ json_schema: { schema: { properties: { criteria: { minItems: 0, maxItems: 3 } } } } });

    const second = await evolver.propose('q1', 'Explain X.', ['a', 'b']);
    expect(second.step).toBe(2);
    expect(second.duplicatesSkipped).toBe(1);
    expect(second.added.map((criterion) => criterion.text)).toEqual(['The response mentions "example".']);
    expect((await evolver.activeRubric('q1'))!.criteria.map((criterion) => criterion.text)).toEqual([
      'The response defines X.',
      'The response mentions "citation".',
      'The response mentions "padding".',
      'The response mentions "example".',
    ]);
  });

  test('deactivates evolving criteria whose verdicts do not vary and keeps the top-k by variance; persistent ones stay', async ({ setup }) => {
    const { evolver } = await setup([[mentions('a'), mentions('b'), mentions('c')], [mentions('d')]], { topK: 2 });
    const [persistent] = await evolver.setPersistent('q', 'prompt', [{ text: 'Persistent rule.', points: 3 }]);
    const { added } = await evolver.propose('q', 'prompt', ['x', 'y']);
    const [a, b, c] = added.map((criterion) => criterion.id);
    const { added: moreAdded } = await evolver.propose('q', 'prompt', ['x', 'y']);
    const d = moreAdded[0].id;
    // a: constant → zero variance; b: 2 of 4; c: 1 of 4; d: 3 of 4 ... but observed on 4 rollouts.
    const group = [
      rollout({ [persistent.id]: true, [a]: true, [b]: true, [c]: false, [d]: true }),
      rollout({ [persistent.id]: true, [a]: true, [b]: false, [c]: false, [d]: true }),
      rollout({ [persistent.id]: true, [a]: true, [b]: true, [c]: true, [d]: false }),
      rollout({ [persistent.id]: true, [a]: true, [b]: false, [c]: false, [d]: null }),
    ];
    const observed = await evolver.observe('q', group);
    expect(observed.step).toBe(2);
    expect(observed.variances).toEqual({ [persistent.id]: 0, [a]: 0, [b]: 0.25, [c]: 0.1875, [d]: 0.222222222 });
    expect(observed.deactivated).toEqual([
      { criterion_id: a, reason: 'zero_variance', variance: 0 },
      { criterion_id: c, reason: 'over_top_k', variance: 0.1875 },
    ]);
    expect(observed.active).toEqual([persistent.id, b, d]);
    expect((await evolver.activeRubric('q'))!.criteria.map((criterion) => criterion.id)).toEqual([persistent.id, b, d]);
    expect((await evolver.activeRubric('q'))!.metadata).toEqual({ evolving: { prompt_id: 'q', step: 2, persistent: 1, evolving: 2 } });
    expect((await evolver.history('q')).map((event) => [event.step, event.event, event.criterion_id, event.reason ?? null])).toEqual([
      [0, 'persistent', persistent.id, null],
      [1, 'added', a, null],
      [1, 'added', b, null],
      [1, 'added', c, null],
      [2, 'added', d, null],
      [2, 'deactivated', a, 'zero_variance'],
      [2, 'deactivated', c, 'over_top_k'],
    ]);
    const states = await evolver.criteria('q');
    expect(states.find((state) => state.criterion.id === a)).toMatchObject({ active: false, deactivated_step: 2, deactivation_reason: 'zero_variance', origin: 'evolving' });
    expect(states.find((state) => state.criterion.id === persistent.id)).toMatchObject({ active: true, origin: 'persistent', last_variance: 0 });
  });

  test('keeps its state in SQLite across restarts', async ({ setup, tempDir, closeAfter }) => {
    const store = join(tempDir, 'evolver.sqlite');
    const first = await setup([[mentions('alpha')]], { store });
    await first.evolver.propose('q', 'prompt', ['x', 'y'], undefined, { step: 40 });
    await first.evolver.close();
    const reopened = closeAfter(createRubricEvolver({ generator: first.writer, store }));
    expect((await reopened.activeRubric('q'))!.id).toBe('q@40');
    expect(await reopened.history('q')).toEqual([{ step: 40, event: 'added', criterion_id: (await reopened.activeRubric('q'))!.criteria[0].id, text: 'The response mentions "alpha".' }]);
    expect(await reopened.activeRubric('unknown')).toBeUndefined();
    await expect(reopened.observe('unknown', [])).rejects.toThrow(/no rubric state for prompt "unknown"/);
  });

  test('grades rollouts with the active rubric through the pipeline and feeds the results back (the serve loop)', async ({ setup, connectJudge }) => {
    const { fake, evolver } = await setup([[mentions('sources'), mentions('hello')]]);
    const grader = new Grader({ judge: connectJudge(fake, { model: 'judge' }), calls: { retryBaseDelayMs: 1 } });
    const rollouts = ['hello with sources', 'hello plain', 'hello again'];
    await evolver.propose('q', 'Say hello and cite.', rollouts);
    const rubric = (await evolver.activeRubric('q'))!;
    const results = await Promise.all(rollouts.map((response, index) => grader.gradeItem({ id: `q/${index}`, prompt: [{ role: 'user', content: 'Say hello and cite.' }], response, rubric })));
    const observed = await evolver.observe('q', results);
    // Every rollout says hello: that criterion cannot separate them and is deactivated.
    expect(observed.deactivated.map((entry) => entry.reason)).toEqual(['zero_variance']);
    expect((await evolver.activeRubric('q'))!.criteria.map((criterion) => criterion.text)).toEqual(['The response mentions "sources".']);
  });

  test('refuses to propose from fewer than two rollouts', async ({ setup }) => {
    const { evolver } = await setup([]);
    await expect(evolver.propose('q', 'p', ['only one'])).rejects.toThrow(/at least two rollouts/);
  });
});

/**
 * Two replicas (two evolvers, each with its own connection to one store) step the same prompt
 * at once: both read step 0 before either writes (the generator answers only once both have
 * asked), so each must take its step number from the state it writes over, not the one it read.
 */
async function twoConcurrentSteps(
  fixtures: { startJudge: (script: FakeJudgeScript) => Promise<FakeJudge>; connectJudge: (fake: FakeJudge, options?: { model?: string }) => Judge; closeAfter: <T extends { close(): Promise<void> }>(resource: T) => T },
  store: string,
): Promise<void> {
  let asked = 0;
  let bothAsked!: () => void;
  const barrier = new Promise<void>((resolve) => (bothAsked = resolve));
  const fake = await fixtures.startJudge(
    generatorAndJudge(async (request) => {
      asked += 1;
      if (asked === 2) bothAsked();
      await barrier;
      // Each replica proposes a criterion of its own, named after its rollouts.
      return { content: answer([mentions(fencedBlocks(request, 'policy')[0])]) };
    }),
  );
  const [first, second] = ['replica-1', 'replica-2'].map((model) => fixtures.closeAfter(createRubricEvolver({ generator: fixtures.connectJudge(fake, { model }), store })));
  const steps = await Promise.all([first.propose('q', 'Explain X.', ['apples', 'one']), second.propose('q', 'Explain X.', ['pears', 'two'])]);
  expect(steps.map((step) => step.step).sort()).toEqual([1, 2]);
  expect((await first.activeRubric('q'))!.id).toBe('q@2');
  expect((await second.criteria('q')).map((entry) => entry.criterion.text).sort()).toEqual(['The response mentions "apples".', 'The response mentions "pears".']);
  // Each criterion is recorded under the step that added it.
  expect((await first.history('q')).map((event) => event.step).sort()).toEqual([1, 2]);
}

describe('evolving rubrics on two replicas', () => {
  base('two concurrent steps on one SQLite file are both counted', async ({ startJudge, connectJudge, closeAfter, tempDir }) => {
    await twoConcurrentSteps({ startJudge, connectJudge, closeAfter }, join(tempDir, 'evolver.sqlite'));
  });

  redisTest('two concurrent steps on one Redis are both counted', async ({ startJudge, connectJudge, closeAfter, redis }) => {
    await twoConcurrentSteps({ startJudge, connectJudge, closeAfter }, redis.url);
  }, hangGuard(30_000));
});
