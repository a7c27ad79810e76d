import { describe, expect } from 'vitest';
import { normalizeItem } from '../rubric/normalize.js';
import { batchedVerdicts, binaryVerdict, type FakeJudgeScript } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { Grader } from './grader.js';
import { Comparer } from './compare.js';
import { toScoredItem } from '../results/results.js';
import { aggregate, getScoring, scoringNames } from '../scoring/registry.js';

const tone = { type: 'ordinal', choices: [{ label: 'Poor' }, { label: 'Fair' }, { label: 'Good' }] };

/** A diagnosis tree: c2 under c1 met, c3 (and its child c4) under c1 unmet, c5 and c6 under tone labels. */
const item = normalizeItem({
  id: 'x',
  prompt: 'I have had a headache for three days.',
  response: 'This sounds like a tension headache: stress tightens the muscles of your neck.',
  rubric: {
    criteria: [
      { id: 'c1', text: 'Gives a likely diagnosis', points: 5 },
      { id: 'c2', text: 'Explains the diagnosis in plain words', points: 3, when: { criterion: 'c1', verdict: true } },
      { id: 'c3', text: 'Asks for more information', points: 4, when: { criterion: 'c1', verdict: false } },
      { id: 'c4', text: 'Asks about the duration', points: 2, when: { criterion: 'c3', verdict: true } },
      { id: 'tone', text: 'Tone', points: 2, scale: tone },
      { id: 'c5', text: 'Reassures the patient', points: 1, when: { criterion: 'tone', verdict: 'Good' } },
      { id: 'c6', text: 'Is condescending', points: -2, when: { criterion: 'tone', verdict: ['Fair', 'Good'] } },
    ],
  },
});

/** c1 met, c2 not, tone Fair, c6 not (any other criterion asked is answered met, which would show in the score). */
const script: FakeJudgeScript = (request) => {
  const id = request.criteria[0].id;
  if (id === 'tone') return { content: { explanation: 'Polite.', choice: 'Fair' } };
  return { content: binaryVerdict(id === 'c1' || !['c2', 'c6'].includes(id)) };
};

describe('conditional criteria', () => {
  test('scores as hand-computed, with not-applicable criteria out of both sums, in the fewest calls', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(script);
    const result = await new Grader({ judge, scoring: 'healthbench' }).gradeItem(item);
    // Applicable: c1 (+5, met), c2 (+3, unmet), tone (+2, Fair = 0.5), c6 (−2, unmet): (5 + 1) ÷ (5 + 3 + 2) = 0.6.
    // Counted as 0 instead, c3, c4 and c5 would make it 6 ÷ 17.
    expect(result.score).toBe(0.6);
    const byId = Object.fromEntries(result.criteria.map((criterion) => [criterion.id, criterion]));
    for (const id of ['c3', 'c4', 'c5']) expect(byId[id]).toMatchObject({ status: 'skipped', skip_reason: 'not_applicable', met: null });
    expect(byId.c3.when).toEqual([{ criterion: 'c1', verdict: false }]);
    expect(byId.c6.when).toEqual([{ criterion: 'tone', verdict: ['Fair', 'Good'] }]);
    expect(byId.c2).toMatchObject({ status: 'ok', met: false });
    // One call per applicable criterion, parents first: the roots, then the children whose condition holds.
    const asked = fake.requests.map((request) => request.criteria[0].id);
    expect(asked).toHaveLength(4);
    expect(new Set(asked.slice(0, 2))).toEqual(new Set(['c1', 'tone']));
    expect(new Set(asked.slice(2))).toEqual(new Set(['c2', 'c6']));
  });

  test('every scoring leaves not-applicable criteria out: the same figures as without them', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(script);
    const record = await new Grader({ judge }).gradeItem(item);
    const withThem = toScoredItem(record);
    const without = { ...withThem, criteria: withThem.criteria.filter((criterion) => !['c3', 'c4', 'c5'].includes(criterion.id)) };
    expect(withThem.criteria).toHaveLength(7);
    for (const name of scoringNames()) {
      const scoring = getScoring(name);
      expect(scoring.itemScore(withThem), name).toEqual(scoring.itemScore(without));
      expect(aggregate(scoring, [withThem]), name).toEqual(aggregate(scoring, [without]));
    }
  });

  test('batched mode asks each wave in one call', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => ({
      content: { verdicts: { ...batchedVerdicts(request.criteria.filter((criterion) => criterion.id !== 'tone'), (criterion) => criterion.id === 'c1').verdicts, ...(request.criteria.some((criterion) => criterion.id === 'tone') ? { tone: { explanation: 'Polite.', choice: 'Fair' } } : {}) } },
    }));
    const result = await new Grader({ judge, scoring: 'healthbench', plan: { criteriaPerCall: 10 } }).gradeItem(item);
    expect(fake.requests.map((request) => request.criteria.map((criterion) => criterion.id))).toEqual([['c1', 'tone'], ['c2', 'c6']]);
    expect(result.score).toBe(0.6);
  });

  test('a child of a parent in error is in error, naming the parent, unless another of its conditions already failed', async ({ scriptedJudge }) => {
    const withSibling = normalizeItem({
      ...{ id: 'y', prompt: 'p', response: 'r' },
      rubric: {
        criteria: [
          ...item.rubric.criteria.map((criterion) => ({ id: criterion.id, text: criterion.text, points: criterion.points, ...(criterion.scale ? { scale: criterion.scale } : {}), ...(criterion.when ? { when: criterion.when } : {}) })),
          { id: 'c7', text: 'Names a remedy', points: 1, when: [{ criterion: 'c1', verdict: true }, { criterion: 'tone', verdict: 'Good' }] },
        ],
      },
    });
    const { fake, judge } = await scriptedJudge((request) => (request.criteria[0].id === 'c1' ? { content: 'no verdict here' } : script(request)));
    const result = await new Grader({ judge, calls: { maxAttempts: 1 } }).gradeItem(withSibling);
    expect(result.status).toBe('error');
    expect(result.score).toBeNull();
    const byId = Object.fromEntries(result.criteria.map((criterion) => [criterion.id, criterion]));
    expect(byId.c1).toMatchObject({ status: 'error', error: { code: 'JUDGE_UNPARSEABLE' } });
    for (const id of ['c2', 'c3']) expect(byId[id]).toMatchObject({ status: 'error', met: null, error: { code: 'CONDITION_UNDECIDED', message: `criterion ${id} depends on c1, which is in error: whether it applies cannot be decided` } });
    // c4's parent c3 is in error: undecided too. c7 needs tone Good, and tone is Fair: not applicable whatever c1 is.
    expect(byId.c4).toMatchObject({ status: 'error', error: { code: 'CONDITION_UNDECIDED' } });
    expect(byId.c7).toMatchObject({ status: 'skipped', skip_reason: 'not_applicable' });
    expect(fake.requests.map((request) => request.criteria[0].id).sort()).toEqual(['c1', 'c6', 'tone']);
  });

  test('under the hard-rule gate a child of a passed hard rule is graded, and gated with its item otherwise', async ({ scriptedJudge }) => {
    const gatedItem = (safe: boolean) => ({
      ...normalizeItem({
        id: safe ? 'safe' : 'unsafe',
        prompt: 'p',
        response: 'r',
        rubric: {
          gate: 'hard_rules',
          criteria: [
            { id: 'h', text: 'Gives no dangerous advice', kind: 'hard_rule' },
            { id: 'p', text: 'Explains why', points: 2, when: { criterion: 'h', verdict: true } },
          ],
        },
      }),
      response: safe ? 'safe' : 'unsafe',
    });
    const { fake, judge } = await scriptedJudge((request) => ({ content: binaryVerdict(request.response === 'safe') }));
    const grader = new Grader({ judge });
    const passed = await grader.gradeItem(gatedItem(true));
    expect(passed.criteria.map((criterion) => criterion.status)).toEqual(['ok', 'ok']);
    const failed = await grader.gradeItem(gatedItem(false));
    expect(failed).toMatchObject({ gated: true, score: 0 });
    expect(failed.criteria[1]).toMatchObject({ status: 'skipped', skip_reason: 'gated' });
    expect(fake.requests).toHaveLength(3);
  });

  test('modes that grade the rubric together, juries and cascades refuse a conditional rubric by name', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(script);
    const { judge: other } = await scriptedJudge(script, { model: 'other' });
    await expect(new Grader({ judge, plan: { mode: 'holistic' } }).gradeItem(item)).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('--mode holistic grades the rubric\'s criteria together'), details: { field: 'mode' } });
    await expect(new Grader({ judges: [judge, other] }).gradeItem(item)).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('a jury') });
    await expect(new Grader({ judge, cascade: { judges: [other] } }).gradeItem(item)).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('a cascade'), details: { field: 'cascade-judge' } });
  });

  test('compare refuses a pair whose rubric has conditions', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(script);
    const pair = { id: 'p', prompt: item.prompt, responseA: 'a', responseB: 'b', rubric: item.rubric };
    await expect(new Comparer({ judge }).comparePair(pair)).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('pair p has a rubric with conditional criteria') });
    expect(fake.requests).toHaveLength(0);
  });
});
