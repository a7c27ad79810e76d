/**
 * Cascades over loopback judges: exactly the criteria whose P(met) is inside the band go to the
 * strong judge; errors, jury disagreements and abstentions escalate by their own reasons; each
 * result names the judge that decided it; a setting the run cannot honour is refused first.
 */
import { describe, expect } from 'vitest';
import { normalizeItem } from '../rubric/normalize.js';
import { binaryVerdict, type FakeJudgeRequest } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { Grader } from './grader.js';

/** A reply giving P(met) = p at the criteria_met token. */
function replyWithProbability(p: number) {
  const met = p >= 0.5;
  const tokens = ['{"criteria_met": ', String(met), '}'].map((token, index) => ({
    token,
    logprob: index === 1 ? Math.log(met ? p : 1 - p) : 0,
    top_logprobs: index === 1 ? [{ token: 'true', logprob: Math.log(p) }, { token: 'false', logprob: Math.log(1 - p) }] : [{ token, logprob: 0 }],
  }));
  return { content: `{"criteria_met": ${met}}`, logprobs: { content: tokens } };
}

/** The small judge's P(met) per criterion id. */
const smallProbability: Record<string, number> = { a: 0.05, b: 0.35, c: 0.5, d: 0.65, e: 0.95 };
const item = normalizeItem({ id: 'i1', prompt: 'Explain fevers.', response: 'A fever is a raised temperature.', rubric: { criteria: Object.keys(smallProbability).map((id) => ({ id, text: `criterion ${id}` })) } });

const smallScript = (request: FakeJudgeRequest) => replyWithProbability(smallProbability[request.criteria[0].id]);
const strongScript = () => replyWithProbability(0.99);

describe('cascades', () => {
  test('exactly the criteria whose P(met) is inside the band escalate, and each result names its deciding judge', async ({ startJudge, connectJudge }) => {
    const small = await startJudge(smallScript);
    const strong = await startJudge(strongScript);
    const grader = new Grader({
      judge: connectJudge(small, { model: 'small', id: 'openai:small' }),
      cascade: { judges: [connectJudge(strong, { model: 'strong', id: 'openai:strong' })], band: [0.3, 0.7] },
      plan: { verdict: 'probability' },
      calls: { retryBaseDelayMs: 1 },
    });
    const result = await grader.gradeItem(item);
    expect(small.requests.map((request) => request.criteria[0].id).sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(strong.requests.map((request) => request.criteria[0].id).sort()).toEqual(['b', 'c', 'd']);
    const decided = Object.fromEntries(result.criteria.map((criterion) => [criterion.id, criterion.cascade?.decided_by]));
    expect(decided).toEqual({ a: 'openai:small', b: 'openai:strong', c: 'openai:strong', d: 'openai:strong', e: 'openai:small' });
    expect(result.criteria.find((criterion) => criterion.id === 'b')?.cascade).toEqual({ decided_by: 'openai:strong', escalations: [{ judge: 'openai:small', reason: 'band', probability: expect.closeTo(0.35, 12) }] });
    expect(result.criteria.find((criterion) => criterion.id === 'b')?.probability).toBeCloseTo(0.99, 12);
    expect(result.judge?.cascade).toEqual({ judges: ['openai:strong'], band: [0.3, 0.7], escalate_on: ['band', 'abstain', 'error'] });
    expect(grader.cascadeTally?.summary()).toEqual({ decided_by: { 'openai:small': 2, 'openai:strong': 3 }, escalated_from: { 'openai:small': { band: 3 } } });
  });

  test('a failed criterion escalates; with escalate-on band only, it stays in error', async ({ startJudge, connectJudge }) => {
    const small = await startJudge((request) => (request.criteria[0].id === 'a' ? { status: 400, body: { error: { message: 'bad request' } } } : replyWithProbability(0.9)));
    const strong = await startJudge(strongScript);
    const build = (escalateOn?: Array<'band' | 'error'>) =>
      new Grader({
        judge: connectJudge(small, { model: 'small' }),
        cascade: { judges: [connectJudge(strong, { model: 'strong' })], band: [0.4, 0.6], ...(escalateOn ? { escalateOn } : {}) },
        plan: { verdict: 'probability' },
        calls: { retryBaseDelayMs: 1, maxAttempts: 1 },
      });
    const escalated = await build().gradeItem(item);
    expect(escalated.status).toBe('ok');
    expect(escalated.criteria.find((criterion) => criterion.id === 'a')?.cascade?.escalations).toEqual([{ judge: 'openai:small', reason: 'error' }]);
    expect(strong.requests.map((request) => request.criteria[0].id)).toEqual(['a']);
    const kept = await build(['band']).gradeItem(item);
    expect(kept.status).toBe('error');
    expect(kept.criteria.find((criterion) => criterion.id === 'a')?.error?.code).toBe('JUDGE_REQUEST_REJECTED');
    expect(strong.requests).toHaveLength(1);
  });

  test('a jury that disagrees escalates; one that agrees decides', async ({ startJudge, connectJudge }) => {
    const yes = await startJudge(() => ({ content: binaryVerdict(true) }));
    const split = await startJudge((request) => ({ content: binaryVerdict(request.criteria[0].id !== 'c') }));
    const strong = await startJudge(() => ({ content: binaryVerdict(false) }));
    const grader = new Grader({ judges: [connectJudge(yes, { model: 'yes' }), connectJudge(split, { model: 'split' })], cascade: { judges: [connectJudge(strong, { model: 'strong' })] }, calls: { retryBaseDelayMs: 1 } });
    const result = await grader.gradeItem(item);
    expect(strong.requests.map((request) => request.criteria[0].id)).toEqual(['c']);
    const c = result.criteria.find((criterion) => criterion.id === 'c')!;
    expect(c).toMatchObject({ met: false, cascade: { decided_by: 'openai:strong', escalations: [{ judge: 'openai:yes+openai:split', reason: 'disagreement' }] } });
    expect(result.judge?.cascade?.escalate_on).toEqual(['disagreement', 'abstain', 'error']);
  });

  test('an abstention (--abstain) escalates', async ({ startJudge, connectJudge }) => {
    const small = await startJudge((request) => ({ content: { explanation: 'x', cannot_assess: request.criteria[0].id === 'd', criteria_met: true } }));
    const strong = await startJudge(() => ({ content: { explanation: 'x', cannot_assess: false, criteria_met: false } }));
    const grader = new Grader({ judge: connectJudge(small, { model: 'small' }), plan: { abstain: 'skip' }, cascade: { judges: [connectJudge(strong, { model: 'strong' })] }, calls: { retryBaseDelayMs: 1 } });
    const result = await grader.gradeItem(item);
    expect(strong.requests.map((request) => request.criteria[0].id)).toEqual(['d']);
    expect(result.criteria.find((criterion) => criterion.id === 'd')).toMatchObject({ status: 'ok', met: false, cascade: { decided_by: 'openai:strong', escalations: [{ judge: 'openai:small', reason: 'abstain' }] } });
    expect(result.criteria.find((criterion) => criterion.id === 'a')).toMatchObject({ met: true, cascade: { decided_by: 'openai:small' } });
  });

  test('settings a run cannot honour are refused before any call', async ({ startJudge, connectJudge }) => {
    const small = await startJudge(() => replyWithProbability(0.5));
    const strong = connectJudge(await startJudge(strongScript), { model: 'strong' });
    const judge = connectJudge(small, { model: 'small' });
    expect(() => new Grader({ judge, cascade: { judges: [strong], band: [0.3, 0.7] } })).toThrow(/--escalate-band .*--verdict probability/);
    expect(() => new Grader({ judge, cascade: { judges: [strong], escalateOn: ['disagreement'] } })).toThrow(/needs a jury/);
    expect(() => new Grader({ judge, cascade: { judges: [], band: [0.3, 0.7] }, plan: { verdict: 'probability' } })).toThrow(/add --cascade-judge/);
    const gated = normalizeItem({ id: 'g', prompt: 'p', response: 'r', rubric: { gate: 'hard_rules', criteria: [{ text: 'rule', kind: 'hard_rule' }] } });
    await expect(new Grader({ judge, cascade: { judges: [strong] } }).gradeItem(gated)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(small.requests).toHaveLength(0);
  });
});
