import { describe, expect } from 'vitest';
import type { Judge } from '../judges/types.js';
import { normalizeRubric } from '../rubric/normalize.js';
import type { PairwiseItem } from '../rubric/schema.js';
import { test } from '../testing/vitest-fixtures.js';
import { Comparer, CompareSummaryBuilder } from './compare.js';
import { sealAlignment } from '../spec/alignment.js';
import { benjaminiHochbergAdjust, holmAdjust } from '../statistics/multiple-testing.js';
import { normalQuantile, twoSidedNormalP } from '../statistics/normal.js';

function comparer(judge: Judge, options: Partial<ConstructorParameters<typeof Comparer>[0]> = {}) {
  return new Comparer({ judge, ...options, calls: { retryBaseDelayMs: 1, ...options.calls } });
}

const block = (text: string, position: 1 | 2) => new RegExp(`<response-${position}-([0-9a-f]{16})>\\n([\\s\\S]*?)\\n</response-${position}-\\1>`).exec(text)?.[2];

const pair: PairwiseItem = {
  id: 'p1',
  prompt: [{ role: 'user', content: 'Name a prime number.' }],
  responseA: 'Seven.',
  responseB: 'Nine.',
  label: 'A',
  rubric: normalizeRubric({ criteria: [{ id: 'correct', text: 'Gives a prime', points: 5 }, { id: 'rude', text: 'Is rude', points: -2 }] }),
};

describe('Comparer', () => {
  test('judges overall and every criterion in both orders, mapping verdicts back to A/B', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge((request) => ({ content: { explanation: 'x', winner: block(request.userText, 1) === 'Seven.' ? '1' : '2' } }));
    const compare = comparer(judge);
    const record = await compare.comparePair(pair);
    expect(fake.requests).toHaveLength(6);
    expect(record).toMatchObject({ status: 'ok', winner: 'A', consistent: true, orders: { ab: 'A', ba: 'A' }, correct: true });
    expect(record.criteria.map((comparison) => [comparison.id, comparison.winner])).toEqual([
      ['correct', 'A'],
      ['rude', 'A'],
    ]);
    // The undesirable criterion is framed so the better response is the one that avoids it.
    expect(fake.requests.some((request) => request.userText.includes('Is rude (undesirable: the better response avoids this)'))).toBe(true);
  });

  test('an alignment rewords a rubric criterion and shows its examples, except those from either response, and names itself in provenance', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: { explanation: 'x', winner: '1' } }));
    const example = (label: boolean, response: string) => ({ label, criterion: 'Gives a prime', prompt: 'Name a prime number.', response, source: `from ${response}` });
    const alignment = sealAlignment({
      examples: { criteria: { correct: [example(true, 'Eleven.'), example(false, 'Four.')] }, tags: {} },
      rewordings: { rude: { text: 'Insults the user', original: 'Is rude' } },
      calibrator: null,
    });
    const compare = comparer(judge, { plan: { alignment }, overall: false });
    await compare.comparePair(pair);
    const texts = fake.requests.map((request) => request.userText);
    expect(texts.filter((text) => text.includes('Insults the user (undesirable: the better response avoids this)'))).toHaveLength(2);
    expect(texts.filter((text) => text.includes('<examples-') && text.includes('Response: Eleven.'))).toHaveLength(2);
    expect(compare.judgeInfo).toMatchObject({ alignment: alignment.hash, template_version: `pairwise/v2+aligned-${alignment.hash.slice(0, 12)}` });
    const calibrated = sealAlignment({ ...alignment, calibrator: { kind: 'isotonic', points: [[0, 0]], threshold: 0.5 } });
    expect(() => comparer(judge, { plan: { alignment: calibrated } })).toThrow(/pairwise verdicts do not have/);
  });

  test('counts order-inconsistent verdicts as such, and ties', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge((request) => ({ content: { explanation: 'x', winner: request.userText.includes('Gives a prime') ? 'tie' : '1' } }));
    const compare = comparer(judge);
    const record = await compare.comparePair(pair);
    expect(record.winner).toBe('inconsistent');
    expect(record.consistent).toBe(false);
    expect(record.criteria[0].winner).toBe('tie');
    const summary = new CompareSummaryBuilder();
    summary.add(record);
    const result = summary.finish();
    expect(result.overall).toMatchObject({ inconsistent: 1, win: 0 });
    expect(result.overall.win_rate.value).toBe(0.5);
    expect(result.overall.position_consistency.value).toBe(0);
    expect(result.criteria.correct.tie).toBe(1);
  });

  test('the summary tests the preference of A over B (paired, normal approximation), per criterion with Holm and Benjamini–Hochberg', () => {
    const summary = new CompareSummaryBuilder();
    const winners: Array<'A' | 'B' | 'tie'> = [...Array(25).fill('A'), ...Array(10).fill('B'), ...Array(5).fill('tie')];
    winners.forEach((winner, index) => {
      const comparison = (id: string, chosen: 'A' | 'B' | 'tie') => ({ id, text: id, status: 'ok' as const, winner: chosen, consistent: true, orders: { ab: chosen, ba: chosen } });
      summary.add({
        id: `p${index}`,
        status: 'ok',
        winner,
        consistent: true,
        orders: { ab: winner, ba: winner },
        criteria: [comparison('clear', winner), comparison('even', index % 2 === 0 ? 'A' : 'B')],
        rubricate_version: 'test',
      });
    });
    const { preference } = summary.finish();
    // Differences: 25 × +1, 10 × −1, 5 × 0 → mean 0.375; sample variance (Σd² − n·mean²)/(n − 1).
    const mean = 15 / 40;
    const sd = Math.sqrt((35 - 40 * mean * mean) / 39);
    const se = sd / Math.sqrt(40);
    expect(preference.method).toBe('paired z-test (normal approximation)');
    expect(preference.overall.delta).toBeCloseTo(mean, 15);
    expect(preference.overall.p_value).toBeCloseTo(twoSidedNormalP(mean / se), 12);
    expect(preference.overall.ci95![0]).toBeCloseTo(mean - normalQuantile(0.975) * se, 12);
    expect(preference.overall.comparisons_for_power_80).toBe(Math.ceil(((normalQuantile(0.975) + normalQuantile(0.8)) * sd / mean) ** 2));
    // The even criterion has no preference to detect; p-values are adjusted across both criteria.
    expect(preference.criteria.even).toMatchObject({ delta: 0, p_value: 1, comparisons_for_power_80: null });
    const raw = [preference.criteria.clear.p_value!, preference.criteria.even.p_value!];
    expect([preference.criteria.clear.p_holm, preference.criteria.even.p_holm]).toEqual(holmAdjust(raw));
    expect([preference.criteria.clear.p_benjamini_hochberg, preference.criteria.even.p_benjamini_hochberg]).toEqual(benjaminiHochbergAdjust(raw));
  });

  test('a winner outside the allowed labels is retried then an error; never a default', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: { explanation: 'x', winner: 'both' } }));
    const compare = comparer(judge, { allowTies: false, calls: { maxAttempts: 2 } });
    const record = await compare.comparePair({ ...pair, rubric: undefined });
    expect(record.status).toBe('error');
    expect(record.winner).toBeNull();
    expect(record.error?.message).toMatch(/"winner" must be "1" or "2"/);
    expect(fake.requests).toHaveLength(4);
    const summary = new CompareSummaryBuilder();
    summary.add(record);
    expect(summary.finish()).toMatchObject({ n_error: 1, n_ok: 0 });
  });

  test('--no-swap judges the original order only', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: { explanation: 'x', winner: '2' } }));
    const compare = comparer(judge, { swap: false });
    const record = await compare.comparePair({ ...pair, rubric: undefined });
    expect(fake.requests).toHaveLength(1);
    expect(record).toMatchObject({ winner: 'B', consistent: null, orders: { ab: 'B' } });
  });
});
