/**
 * `--verdict expected-score`: G-Eval's probability-weighted mean over a scale's options from the
 * choice token's top alternatives (those under 1% dropped), by hand; yes/no criteria get P(met);
 * the expectation reaches the results line and the scorings that read Likert scores; no mass on
 * any option is an error, and the settings that cannot give one are refused.
 */
import { describe, expect } from 'vitest';
import { Grader } from '../pipeline/grader.js';
import { normalizeItem } from '../rubric/normalize.js';
import { aggregate, getScoring } from '../scoring/registry.js';
import { toScoredItem } from '../results/results.js';
import { test } from '../testing/vitest-fixtures.js';

const likert = { type: 'ordinal', choices: ['1', '2', '3', '4', '5'].map((label) => ({ label, description: `score ${label}` })) };
const item = normalizeItem({ id: 'q1', prompt: 'Summarise the article.', response: 'A fair summary.', rubric: { criteria: [{ id: 'quality', text: 'Summary quality', scale: likert }] } });

/** A native ordinal reply whose choice token is `token`, with these alternatives. */
function choiceReply(token: string, alternatives: Array<[string, number]>) {
  const tokens = ['{"explanation": "Fair.", "choice": ', token, '"}'].map((text) => ({ token: text, logprob: text === token ? Math.log(alternatives[0][1]) : 0, top_logprobs: text === token ? alternatives.map(([alternative, p]) => ({ token: alternative, logprob: Math.log(p) })) : [{ token: text, logprob: 0 }] }));
  return { content: `{"explanation": "Fair.", "choice": ${token}"}`, logprobs: { content: tokens } };
}

describe('expected scores', () => {
  test('the probability-weighted mean of the labels, alternatives under 1% and off the scale left out, renormalised', async ({ scriptedJudge }) => {
    // The chosen token carries the opening quote: alternatives are read without it.
    const { fake, judge } = await scriptedJudge(() => choiceReply('"4', [['"4', 0.58], ['"3', 0.3], ['"5', 0.08], ['"2', 0.015], ['"1', 0.005], ['"x', 0.02]]));
    const result = await new Grader({ judge, plan: { verdict: 'expected-score' }, scoring: 'weighted_mean' }).gradeItem(item);
    expect(fake.requests[0].body).toMatchObject({ logprobs: true, top_logprobs: 20 });
    const kept = 0.58 + 0.3 + 0.08 + 0.015;
    const expectedScore = (4 * 0.58 + 3 * 0.3 + 5 * 0.08 + 2 * 0.015) / kept;
    const value = (0.75 * 0.58 + 0.5 * 0.3 + 1 * 0.08 + 0.25 * 0.015) / kept;
    const [criterion] = result.criteria;
    expect(criterion.label).toBe('4');
    expect(criterion.expected_score).toBeCloseTo(expectedScore, 12);
    expect(criterion.value).toBeCloseTo(value, 12);
    expect(result.score).toBeCloseTo(value, 12);
    expect(result.judge?.verdict).toBe('expected-score');
    // BiGGen's scoring averages 1–5 scores: it takes the expectation.
    expect(aggregate(getScoring('biggen'), [toScoredItem(result)]).overall?.score).toBeCloseTo(expectedScore, 12);
  });

  test('a yes/no criterion gets P(met); no mass of 1% on any label is an error, never a score', async ({ scriptedJudge }) => {
    const both = normalizeItem({ id: 'q2', prompt: 'p', response: 'r', rubric: { criteria: [{ id: 'yes-no', text: 'Mentions the author' }, { id: 'quality', text: 'Quality', scale: likert }] } });
    const { judge } = await scriptedJudge((request) => {
      if (request.criteria[0].id === 'quality') return choiceReply('"9', [['"9', 0.995], ['"4', 0.005]]);
      const tokens = ['{"criteria_met": ', 'true', '}'].map((token) => ({ token, logprob: 0, top_logprobs: token === 'true' ? [{ token: 'true', logprob: Math.log(0.8) }, { token: 'false', logprob: Math.log(0.2) }] : [{ token, logprob: 0 }] }));
      return { content: '{"criteria_met": true}', logprobs: { content: tokens } };
    });
    const result = await new Grader({ judge, plan: { verdict: 'expected-score' }, calls: { maxAttempts: 1, retryBaseDelayMs: 1 } }).gradeItem(both);
    expect(result.criteria[0].probability).toBeCloseTo(0.8, 12);
    // "9" is not on the scale, and "4" has under 1%: whatever the reply's choice, there is nothing to weigh.
    expect(result.criteria[1]).toMatchObject({ status: 'error', error: { code: 'JUDGE_UNPARSEABLE' } });
    expect(result.status).toBe('error');
  });

  test('batched calls and judges without token probabilities are refused before any call', async ({ scriptedJudge, connectJudge, startJudge }) => {
    const { judge } = await scriptedJudge(() => ({ content: '{}' }));
    expect(() => new Grader({ judge, plan: { verdict: 'expected-score', criteriaPerCall: 'all' } })).toThrow(/expected-score verdicts need one criterion per call/);
    // Anthropic's OpenAI layer ignores logprobs.
    const blind = connectJudge(await startJudge(() => ({ content: '{}' })), { model: 'claude-sonnet-4-5', profile: 'anthropic-compat' });
    expect(() => new Grader({ judge: blind, plan: { verdict: 'expected-score' } })).toThrow(expect.objectContaining({ code: 'JUDGE_UNSUPPORTED' }));
  });
});
