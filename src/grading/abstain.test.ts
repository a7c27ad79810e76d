/**
 * `--abstain POLICY`: offered in every native grading mode's prompt and reply schema, read by
 * every parser, counted by each policy, counted apart from errors; off, nothing changes.
 */
import { describe, expect } from 'vitest';
import { Grader, createStrategy } from '../pipeline/grader.js';
import { gradeFile } from '../pipeline/grade-file.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { ImportRecord } from '../rubric/records.js';
import { readResults } from '../results/results.js';
import { binaryVerdict, type FakeJudgeRequest, type FakeJudgeScript } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { join } from 'node:path';

const item = normalizeItem({
  id: 'note',
  prompt: 'Summarise the attached scan report.',
  response: 'The report says the scan',
  rubric: {
    criteria: [
      { id: 'finding', text: 'States the main finding of the scan (unassessable: the response is cut off)', points: 4 },
      { id: 'tone', text: 'Uses plain language', points: 2 },
      { id: 'jargon', text: 'Uses unexplained jargon', points: -2 },
    ],
  },
});

/** Abstains on every criterion whose text says so; decides the rest: met when its points are positive. */
const abstainingJudge: FakeJudgeScript = (request: FakeJudgeRequest) => {
  const entry = (criterion: FakeJudgeRequest['criteria'][number]) =>
    criterion.text.includes('unassessable') ? { explanation: 'The response stops before it says.', cannot_assess: true, criteria_met: false } : { ...binaryVerdict(criterion.points > 0), cannot_assess: false };
  if (request.criteria.length > 1) return { content: { verdicts: Object.fromEntries(request.criteria.map((criterion) => [criterion.id, entry(criterion)])) } };
  return { content: entry(request.criteria[0]) };
};

describe('abstain off (the default)', () => {
  test('templates, reply schemas, versions and results are those of a run that never heard of it', async ({ scriptedJudge }) => {
    for (const plan of [{}, { criteriaPerCall: 'all' as const }, { mode: 'holistic' as const }]) {
      const strategy = createStrategy(plan);
      const task = strategy.plan(item, item.rubric.criteria)[0];
      expect(JSON.stringify(task.request.messages)).not.toContain('cannot_assess');
      expect(JSON.stringify(task.request.output)).not.toContain('cannot_assess');
      expect(strategy.templateVersion).not.toContain('abstain');
    }
    // A judge that writes cannot_assess unasked is read by its verdict, as before.
    const { judge } = await scriptedJudge(abstainingJudge);
    const result = await new Grader({ judge }).gradeItem(item);
    expect(result.criteria.map((criterion) => [criterion.status, criterion.met, criterion.cannot_assess])).toEqual([
      ['ok', false, undefined],
      ['ok', true, undefined],
      ['ok', false, undefined],
    ]);
    expect(result.judge).not.toHaveProperty('abstain');
  });
});

describe('abstain on', () => {
  test('every native mode offers cannot_assess in its prompt and reply schema, under its own template version', () => {
    const cases = [
      { plan: {}, schema: (output: Record<string, unknown>) => output },
      { plan: { criteriaPerCall: 'all' as const }, schema: (output: Record<string, unknown>) => ((output.properties as Record<string, { properties: Record<string, unknown> }>).verdicts.properties.finding as Record<string, unknown>) },
      { plan: { explanation: 'none' as const }, schema: (output: Record<string, unknown>) => output },
    ];
    for (const { plan, schema } of cases) {
      const strategy = createStrategy({ ...plan, abstain: 'skip' });
      const task = strategy.plan(item, item.rubric.criteria)[0];
      expect(task.request.messages[0].content).toContain('set "cannot_assess" to true');
      expect(task.request.messages[0].content).toMatch(/"cannot_assess": <true or false>, "criteria_met"/);
      const entry = schema(task.request.output!.schema);
      expect(entry.required).toContain('cannot_assess');
      expect(Object.keys(entry.properties as object).indexOf('cannot_assess')).toBeLessThan(Object.keys(entry.properties as object).indexOf('criteria_met'));
      expect(strategy.templateVersion).toMatch(/\+abstain$/);
    }
    const ordinal = normalizeItem({ ...item, prompt: 'p', rubric: { criteria: [{ id: 'o', text: 'Rates clarity', scale: { type: 'ordinal', choices: [{ label: 'low' }, { label: 'high' }] } }] } });
    const task = createStrategy({ abstain: 'half' }).plan(ordinal, ordinal.rubric.criteria)[0];
    expect(task.request.messages[0].content).toMatch(/"cannot_assess": <true or false>, "choice"/);
    expect(task.request.output!.schema.required).toEqual(['explanation', 'cannot_assess', 'choice']);
  });

  test('Prometheus judges and juries refuse it by name', async ({ scriptedJudge }) => {
    expect(() => createStrategy({ protocol: 'prometheus', abstain: 'skip' })).toThrow(/--abstain cannot be used with --judge-protocol prometheus/);
    const { judge } = await scriptedJudge(abstainingJudge);
    expect(() => new Grader({ judges: [judge, judge], plan: { abstain: 'skip' } })).toThrow(/--abstain cannot be used with a jury/);
  });

  test('skip: the criterion is left out of the score, kept on the line with its reason, and counted apart from errors', async ({ scriptedJudge, tempDir }) => {
    const { judge } = await scriptedJudge(abstainingJudge);
    const grader = new Grader({ judge, plan: { abstain: 'skip' } });
    const records = (async function* (): AsyncGenerator<ImportRecord> {
      yield { kind: 'item', item, line: 1 };
      yield { kind: 'item', item: { ...item, id: 'other', rubric: { ...item.rubric, criteria: item.rubric.criteria.slice(1) } }, line: 2 };
    })();
    const out = join(tempDir, 'results.jsonl');
    const outcome = await gradeFile({ grader, records, out });
    const lines = [];
    for await (const entry of readResults(out)) if (entry.kind === 'result') lines.push(entry.record);
    expect(lines[0].criteria[0]).toMatchObject({ id: 'finding', status: 'skipped', met: null, cannot_assess: true, skip_reason: 'cannot_assess', explanation: 'The response stops before it says.' });
    expect(lines[0].criteria[0]).not.toHaveProperty('value');
    // Scored on the two criteria the judge decided: tone met (2) of 2 positive points; jargon not met.
    expect(lines[0].score).toBe(1);
    expect(lines[0].judge?.abstain).toBe('skip');
    expect(outcome.metrics).toMatchObject({ n_ok: 2, n_error: 0, cannot_assess: { items: 1, criteria: 1 } });
  });

  test('not_met: the criterion counts as not met', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(abstainingJudge);
    const result = await new Grader({ judge, plan: { abstain: 'not_met' } }).gradeItem(item);
    expect(result.criteria[0]).toMatchObject({ status: 'ok', met: false, cannot_assess: true });
    expect(result.criteria[0]).not.toHaveProperty('value');
    // 2 of 6 positive points.
    expect(result.score).toBeCloseTo(2 / 6, 12);
  });

  test('half: the criterion earns half its points', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(abstainingJudge);
    const result = await new Grader({ judge, plan: { abstain: 'half' } }).gradeItem(item);
    expect(result.criteria[0]).toMatchObject({ status: 'ok', met: false, value: 0.5, cannot_assess: true });
    // (4 · 0.5 + 2) of 6 positive points.
    expect(result.score).toBeCloseTo(4 / 6, 12);
  });

  test('fail: the item scores 0, its other verdicts kept', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(abstainingJudge);
    const result = await new Grader({ judge, plan: { abstain: 'fail' } }).gradeItem(item);
    expect(result).toMatchObject({ status: 'ok', gated: true, score: 0 });
    expect(result.criteria.map((criterion) => [criterion.status, criterion.met])).toEqual([
      ['skipped', null],
      ['ok', true],
      ['ok', false],
    ]);
    expect(result.criteria[0].skip_reason).toBe('cannot_assess');
  });

  test('batched calls and holistic ratings are read alike; an unreadable cannot_assess is asked again, then an error', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(abstainingJudge);
    const batched = await new Grader({ judge, plan: { criteriaPerCall: 'all', abstain: 'not_met' } }).gradeItem(item);
    expect(batched.criteria.map((criterion) => criterion.cannot_assess ?? false)).toEqual([true, false, false]);
    const holistic = await scriptedJudge(() => ({ content: { explanation: 'Cut off.', cannot_assess: true, choice: '7' } }));
    const rated = await new Grader({ judge: holistic.judge, plan: { mode: 'holistic', abstain: 'half' } }).gradeItem(item);
    expect(rated.criteria[0]).toMatchObject({ id: 'holistic', status: 'ok', cannot_assess: true, value: 0.5 });
    expect(rated.score).toBe(0.5);
    const confused = await scriptedJudge(() => ({ content: { explanation: 'x', cannot_assess: 'perhaps', criteria_met: true } }));
    const failed = await new Grader({ judge: confused.judge, plan: { abstain: 'skip' }, calls: { maxAttempts: 2 } }).gradeItem(item);
    expect(confused.fake.requests).toHaveLength(6);
    expect(failed.status).toBe('error');
    expect(failed.criteria[0].error?.message).toMatch(/"cannot_assess" for criterion finding is "perhaps"/);
  });

  test('a hierarchical criterion with a sub-check it could not assess is unassessed as a whole', async ({ scriptedJudge }) => {
    const hierarchical = normalizeItem({
      id: 'h',
      prompt: 'p',
      response: 'r',
      rubric: { criteria: [{ id: 'steps', text: 'Gives the steps', subchecks: ['Names step one', 'Names step two (unassessable)'] }, { id: 'kind', text: 'Is kind', points: 1 }] },
    });
    const { judge } = await scriptedJudge(abstainingJudge);
    const result = await new Grader({ judge, plan: { abstain: 'skip' } }).gradeItem(hierarchical);
    expect(result.criteria[0]).toMatchObject({ id: 'steps', status: 'skipped', cannot_assess: true, explanation: 'sub-check "Names step two (unassessable)" could not be assessed' });
    expect(result.score).toBe(1);
  });
});
