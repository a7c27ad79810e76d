import { describe, expect } from 'vitest';
import { normalizeItem } from '../rubric/normalize.js';
import { aggregate, getScoring } from '../scoring/registry.js';
import { lengthAdjustedScoring } from '../scoring/benchmarks.js';
import { profbenchScoring } from '../scoring/profbench.js';
import type { ScoredItem } from '../scoring/types.js';
import { binaryVerdict, type FakeJudgeScript } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { Grader } from './grader.js';
import { toScoredItem } from '../results/results.js';

const item = normalizeItem({
  id: 'x',
  prompt: 'Explain how vaccines work.',
  response: 'Vaccines train the immune system with a harmless piece of a pathogen.',
  rubric: {
    criteria: [
      { id: 'mechanism', text: 'Explains the immune mechanism', points: 5 },
      { id: 'safety', text: 'Mentions safety testing', points: 3 },
      { id: 'false', text: 'States a falsehood', points: -4 },
    ],
  },
});

describe('holistic mode', () => {
  test('sends the whole rubric in one call and scores the normalised Likert answer', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: { explanation: 'Mostly there.', choice: '8' } }));
    const result = await new Grader({ judge, scoring: 'weighted_mean', plan: { mode: 'holistic' } }).gradeItem(item);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].criteria[0].text).toMatch(/\(\+5\) Explains the immune mechanism[\s\S]*\(-4\) States a falsehood/);
    expect(result.criteria).toHaveLength(1);
    expect(result.criteria[0]).toMatchObject({ id: 'holistic', label: '8', value: 7 / 9 });
    expect(result.score).toBeCloseTo(7 / 9, 12);
    expect((result.metadata?.holistic as { source_criteria: number }).source_criteria).toBe(3);
  });
});

describe('juries', () => {
  test('majority of several judges per criterion, every vote kept, agreement reported', async ({ scriptedJudge }) => {
    const yes = await scriptedJudge(() => ({ content: binaryVerdict(true) }), { model: 'judge-yes' });
    const no = await scriptedJudge(() => ({ content: binaryVerdict(false) }), { model: 'judge-no' });
    const split = await scriptedJudge((request) => ({ content: binaryVerdict(request.criteria[0].id === 'mechanism') }), { model: 'judge-split' });
    const grader = new Grader({ judges: [yes.judge, no.judge, split.judge], scoring: 'weighted_mean' });
    const result = await grader.gradeItem(item);
    expect(result.criteria.map((criterion) => criterion.met)).toEqual([true, false, false]);
    expect(result.criteria[0].votes?.map((vote) => vote.met)).toEqual([true, false, true]);
    expect(result.judge?.jury?.members).toHaveLength(3);
    const summary = grader.agreement!.summary() as { disagreements: number; criteria_rated: number };
    expect(summary).toMatchObject({ criteria_rated: 3, disagreements: 3 });
  });

  test('mean aggregation and an exact split', async ({ scriptedJudge }) => {
    const yes = await scriptedJudge(() => ({ content: binaryVerdict(true) }), { model: 'a' });
    const no = await scriptedJudge(() => ({ content: binaryVerdict(false) }), { model: 'b' });
    const mean = await new Grader({ judges: [yes.judge, no.judge], jury: { aggregate: 'mean' } }).gradeItem(item);
    expect(mean.criteria[0]).toMatchObject({ met: true, value: 0.5 });
    const majority = await new Grader({ judges: [yes.judge, no.judge] }).gradeItem(item);
    expect(majority.criteria[0]).toMatchObject({ met: false, value: 0.5 });
  });

  test('self-consistency samples have distinct cache keys and need a temperature', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => ({ content: binaryVerdict(request.index % 2 === 0) }));
    expect(() => new Grader({ judge, jury: { samples: 3 } })).toThrow(/temperature/);
    const result = await new Grader({ judge, plan: { sampling: { temperature: 0.7 } }, jury: { samples: 3 } }).gradeItem(item);
    expect(fake.requests).toHaveLength(9);
    expect(result.criteria[0].votes).toHaveLength(3);
  });

  test('a jury criterion without a quorum of answers is an error, not a verdict', async ({ scriptedJudge }) => {
    const yes = await scriptedJudge(() => ({ content: binaryVerdict(true) }), { model: 'a' });
    const broken = await scriptedJudge(() => ({ content: 'no idea' }), { model: 'b' });
    const alsoBroken = await scriptedJudge(() => ({ status: 400, body: { error: { message: 'bad' } } }), { model: 'c' });
    const result = await new Grader({ judges: [yes.judge, broken.judge, alsoBroken.judge], calls: { maxAttempts: 1 } }).gradeItem(item);
    expect(result.status).toBe('error');
    expect(result.criteria[0].error?.message).toMatch(/only 1 of 3 jury members/);
  });
});

describe('hierarchical criteria', () => {
  const hierarchical = (rule: 'all' | 'fraction' | 'penalty', penalty?: number) =>
    normalizeItem({
      id: 'h',
      prompt: 'Draw a cat.',
      response: 'An image description',
      rubric: { criteria: [{ id: 'cat', text: 'The cat is drawn correctly', points: 4, subchecks: ['Has four legs?', 'Has a tail?', 'Has whiskers?', 'Is orange?'], subcheckRule: rule, ...(penalty ? { subcheckPenalty: penalty } : {}) }] },
    });
  const script: FakeJudgeScript = (request) => ({ content: binaryVerdict(!/orange/.test(request.criteria[0].text)) });

  test.for([
    ['all', undefined, 0],
    ['fraction', undefined, 0.75],
    ['penalty', 0.4, 0.6],
  ] as const)('rule %s', async ([rule, penalty, value], { scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(script);
    const result = await new Grader({ judge, scoring: 'weighted_mean' }).gradeItem(hierarchical(rule, penalty));
    expect(fake.requests.map((request) => request.criteria[0].text)).toEqual(['Has four legs?', 'Has a tail?', 'Has whiskers?', 'Is orange?']);
    expect(result.criteria[0].value ?? (result.criteria[0].met ? 1 : 0)).toBeCloseTo(value, 12);
    expect(result.criteria[0].subchecks?.map((check) => check.met)).toEqual([true, true, true, false]);
    expect(result.criteria[0].met).toBe(false);
  });
});

describe('long responses', () => {
  test('reads every chunk for evidence, drops invented quotes, then judges each criterion on its evidence', async ({ scriptedJudge }) => {
    const paragraphs = Array.from({ length: 40 }, (_, index) => `Paragraph ${index}: ${index === 33 ? 'Vaccines are tested for safety in large trials.' : 'Background discussion that repeats itself at some length to fill the space.'}`);
    const long = normalizeItem({ id: 'long', prompt: 'Write a report on vaccines.', response: paragraphs.join('\n\n'), rubric: { criteria: [{ id: 'safety', text: 'Mentions safety testing', points: 3 }] } });
    const { fake, judge } = await scriptedJudge((request) => {
      const excerpt = /<excerpt-[0-9a-f]{16}>\n([\s\S]*?)\n<\/excerpt-/.exec(request.userText)?.[1];
      if (excerpt !== undefined) {
        const quotes = excerpt.includes('tested for safety') ? ['Vaccines are tested for safety in large trials.', 'An invented quote.'] : [];
        return { content: { evidence: { safety: quotes } } };
      }
      return { content: binaryVerdict(request.response?.includes('tested for safety') ?? false) };
    });
    const result = await new Grader({ judge, scoring: 'weighted_mean', plan: { contextBudget: 1200 } }).gradeItem(long);
    const evidenceCalls = fake.requests.filter((request) => request.userText.includes('<excerpt-'));
    const chunksText = evidenceCalls.map((request) => /<excerpt-[0-9a-f]{16}>\n([\s\S]*?)\n<\/excerpt-/.exec(request.userText)![1]).join('\n\n');
    expect(evidenceCalls.length).toBeGreaterThan(1);
    for (const paragraph of paragraphs) expect(chunksText).toContain(paragraph);
    const finalCall = fake.requests.at(-1)!;
    expect(finalCall.response).toContain('> Vaccines are tested for safety in large trials.');
    expect(finalCall.response).not.toContain('An invented quote.');
    expect(result.criteria[0]).toMatchObject({ met: true, evidence: { chunks: evidenceCalls.length, quotes: 1 } });
  });
});

describe('benchmark scorings', () => {
  const scored = (points: number[], met: boolean[], extra: Partial<ScoredItem> = {}): ScoredItem => ({
    id: 'i',
    status: 'ok',
    criteria: points.map((value, index) => ({ id: `c${index}`, points: value, tags: [], status: 'ok', met: met[index] })),
    ...extra,
  });

  test('ResearchRubrics compliance: partial counts half; the binary view counts it as not met', () => {
    const item = { ...scored([4, 2], [false, true]), criteria: [{ id: 'a', points: 4, tags: [], status: 'ok' as const, met: false, value: 0.5 }, { id: 'b', points: 2, tags: [], status: 'ok' as const, met: true }] };
    expect(getScoring('compliance').itemScore(item)).toBeCloseTo(4 / 6, 12);
    expect(getScoring('compliance_binary').itemScore(item)).toBeCloseTo(2 / 6, 12);
  });

  test('ProfBench: per task, per domain (rounded to 3 decimals as the reference does), mean of domains', () => {
    const metrics = aggregate(profbenchScoring, [
      scored([4, 3, 1], [true, false, true], { id: 't1', tags: ['domain:chemistry'] }),
      scored([2, 2], [true, true], { id: 't2', tags: ['domain:chemistry'] }),
      scored([4], [false], { id: 't3', tags: ['domain:finance'] }),
    ]);
    // chemistry (5/8 + 1) / 2 = 0.8125 → NumPy round half to even → 0.812; finance 0; overall round(0.406, 3).
    expect(metrics.by_tag['domain:chemistry'].score).toBe(0.812);
    expect(metrics.by_tag['domain:finance'].score).toBe(0);
    expect(metrics.overall?.score).toBe(0.406);
  });

  test('HealthBench length adjustment: per 500 characters beyond 2,000, either way; tags unadjusted', () => {
    const scoring = lengthAdjustedScoring('professional');
    expect(scoring.itemScore(scored([10], [true], { responseCharacters: 3000 }))).toBeCloseTo(1 - 0.0147 * 2, 12);
    expect(scoring.itemScore(scored([10], [false], { responseCharacters: 1000 }))).toBeCloseTo(0.0147 * 2, 12);
    const metrics = aggregate(scoring, [scored([10], [true], { responseCharacters: 7000 })]);
    expect(metrics.overall?.score).toBeCloseTo(1 - 0.0147 * 10, 12);
    expect((metrics.extra?.unadjusted as { score: number }).score).toBe(1);
    expect(getScoring('healthbench_length_adjusted:0.1').itemScore(scored([1], [true], { responseCharacters: 2500 }))).toBeCloseTo(0.9, 12);
  });

  test('results carry the response length so re-scoring needs no text', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ content: binaryVerdict(true) }));
    const result = await new Grader({ judge, omitText: true }).gradeItem(item);
    expect(result.response).toBeUndefined();
    expect(result.response_chars).toBe(item.response.length);
    expect(toScoredItem(result).responseCharacters).toBe(item.response.length);
  });
});
