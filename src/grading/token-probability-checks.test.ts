/**
 * Probability and expected-score verdicts read only token probabilities that can be a
 * distribution: a log-probability above 0 or not a finite number, a token listed twice, or
 * alternatives summing above 1 make the reply unparseable (asked again, then reported with the
 * reason, never scored). Tokens that print alike but are different tokens (other bytes, another
 * id) are merged by summing their probabilities. Each rule in the reply shapes of OpenAI (bytes,
 * `refusal: null`), the llama.cpp server (ids), Gemini (proto3 JSON, zero values left out) and
 * the local llama.cpp judge's alternatives.
 */
import { describe, expect } from 'vitest';
import { RubricateError } from '../errors.js';
import { startFakeGemini } from '../testing/fake-gemini.js';
import { createGeminiJudge } from '../judges/gemini/gemini-judge.js';
import { mergeAlikeAlternatives } from '../judges/token-alternatives.js';
import type { JudgeRequest } from '../judges/types.js';
import { Grader } from '../pipeline/grader.js';
import { normalizeItem } from '../rubric/normalize.js';
import { test } from '../testing/vitest-fixtures.js';
import { probabilityOfMet } from './verdicts.js';

const utf8 = (text: string) => [...Buffer.from(text, 'utf8')];
const binary = normalizeItem({ id: 'b1', prompt: 'Name a fruit.', response: 'An apple.', rubric: { criteria: [{ id: 'fruit', text: 'Names a fruit' }] } });
const likert = { type: 'ordinal', choices: ['1', '2', '3', '4', '5'].map((label) => ({ label, description: `score ${label}` })) };
const ordinal = normalizeItem({ id: 'o1', prompt: 'Summarise.', response: 'A summary.', rubric: { criteria: [{ id: 'quality', text: 'Summary quality', scale: likert }] } });
const calls = { maxAttempts: 2, retryBaseDelayMs: 1 };

interface Alternative {
  token: string;
  logprob?: unknown;
  bytes?: number[];
  id?: number;
}

/** An OpenAI chat completion whose answer value `answer` has these alternatives (`bytes` from the token unless given). */
function openAIReply(prefix: string, answer: string, suffix: string, alternatives: Alternative[]) {
  const entry = (token: string, logprob: unknown, top: Alternative[]) => ({ token, logprob, bytes: utf8(token), top_logprobs: top.map((alternative) => ({ bytes: utf8(alternative.token), ...alternative })) });
  const content = [entry(prefix, 0, [{ token: prefix, logprob: 0 }]), entry(answer, alternatives[0].logprob, alternatives), entry(suffix, 0, [{ token: suffix, logprob: 0 }])];
  return { content: `${prefix}${answer}${suffix}`, logprobs: { content, refusal: null } };
}

const metReply = (alternatives: Alternative[]) => openAIReply('{"criteria_met": ', alternatives[0].token, '}', alternatives);
const choiceReply = (alternatives: Alternative[]) => openAIReply('{"explanation": "Fair.", "choice": ', alternatives[0].token, '"}', alternatives);

describe('impossible token probabilities are refused, never scored', () => {
  const refused: Array<[string, Alternative[], RegExp]> = [
    ['a log-probability above 0 (a probability of 148)', [{ token: 'true', logprob: 5 }, { token: 'false', logprob: -3 }], /log-probability of token "true" at the answer is 5, above 0/],
    ['a log-probability that is a string', [{ token: 'true', logprob: '-0.1' }, { token: 'false', logprob: -3 }], /log-probability of token "true" at the answer is missing or not a number, not a finite number/],
    ['a missing log-probability', [{ token: 'true', logprob: -0.2 }, { token: 'false' }], /log-probability of token "false" at the answer is .*not a finite number/],
    ['the same token listed twice', [{ token: 'true', logprob: -0.7 }, { token: 'true', logprob: -0.7 }, { token: 'false', logprob: -3 }], /token "true" is listed twice/],
    ['probabilities summing to 1.98', [{ token: 'true', logprob: -0.01 }, { token: 'false', logprob: -0.01 }], /summing to 1\.980, above 1/],
  ];
  for (const [name, alternatives, reason] of refused) {
    test(`probability verdict, OpenAI shape: ${name}`, async ({ scriptedJudge }) => {
      const { fake, judge } = await scriptedJudge(() => metReply(alternatives));
      const result = await new Grader({ judge, plan: { verdict: 'probability' }, calls }).gradeItem(binary);
      // Asked again (another reply might be readable), then reported with the reason.
      expect(fake.requests).toHaveLength(2);
      expect(result.criteria[0]).toMatchObject({ status: 'error', error: { code: 'JUDGE_UNPARSEABLE' } });
      expect(result.criteria[0].error?.message).toMatch(reason);
      expect(result.criteria[0].probability).toBeUndefined();
      expect(result.status).toBe('error');
      expect(result.score ?? null).toBeNull();
    });
  }

  test('expected-score verdict, OpenAI shape: the audit\'s +5 and a duplicated label are refused', async ({ scriptedJudge }) => {
    const replies = [
      choiceReply([{ token: '"4', logprob: 5 }, { token: '"3', logprob: -2 }]),
      choiceReply([{ token: '"4', logprob: -0.5 }, { token: '"4', logprob: -0.5 }, { token: '"3', logprob: -3 }]),
      choiceReply([{ token: '"4', logprob: -0.5 }, { token: '"3', logprob: Number.NaN }]),
    ];
    for (const [index, reply] of replies.entries()) {
      const { fake, judge } = await scriptedJudge(() => reply);
      const result = await new Grader({ judge, plan: { verdict: 'expected-score' }, calls }).gradeItem(ordinal);
      expect(fake.requests, `reply ${index}`).toHaveLength(2);
      expect(result.criteria[0], `reply ${index}`).toMatchObject({ status: 'error', error: { code: 'JUDGE_UNPARSEABLE' } });
      expect(result.criteria[0].expected_score, `reply ${index}`).toBeUndefined();
      expect(result.score ?? null, `reply ${index}`).toBeNull();
    }
  });

  test('OpenAI shape: one string of two tokens (other bytes) is one answer, probabilities summed; P(met) within [0, 1]', async ({ scriptedJudge }) => {
    // Two byte pieces both shown as U+FFFD would print alike; here two spellings of "true".
    const alternatives = [{ token: 'true', logprob: Math.log(0.3) }, { token: 'true', logprob: Math.log(0.3), bytes: [0x74, 0x72, 0x75, 0x65, 0x00] }, { token: 'false', logprob: Math.log(0.4) }];
    const { judge } = await scriptedJudge(() => metReply(alternatives));
    const result = await new Grader({ judge, plan: { verdict: 'probability' }, calls }).gradeItem(binary);
    expect(result.criteria[0].status).toBe('ok');
    expect(result.criteria[0].probability).toBeCloseTo(0.6, 12);
    expect(result.score).toBeGreaterThanOrEqual(0);
    expect(result.score).toBeLessThanOrEqual(1);
  });

  test('llama.cpp server shape (token ids): two ids of one spelling are summed, one id listed twice is refused', async ({ scriptedJudge }) => {
    const merged = [{ token: '"4', logprob: Math.log(0.4), id: 19 }, { token: '"4', logprob: Math.log(0.2), id: 2511 }, { token: '"2', logprob: Math.log(0.4), id: 17 }];
    const { judge } = await scriptedJudge(() => choiceReply(merged));
    const result = await new Grader({ judge, plan: { verdict: 'expected-score' }, calls }).gradeItem(ordinal);
    expect(result.criteria[0].expected_score).toBeCloseTo(4 * 0.6 + 2 * 0.4, 12);
    expect(result.criteria[0].value).toBeCloseTo(0.75 * 0.6 + 0.25 * 0.4, 12);
    const twice = [{ token: '"4', logprob: Math.log(0.4), id: 19 }, { token: '"4', logprob: Math.log(0.4), id: 19 }, { token: '"2', logprob: Math.log(0.2), id: 17 }];
    const { judge: repeating } = await scriptedJudge(() => choiceReply(twice));
    const refused = await new Grader({ judge: repeating, plan: { verdict: 'expected-score' }, calls }).gradeItem(ordinal);
    expect(refused.criteria[0].error?.message).toMatch(/token "\\"4" is listed twice/);
  });

  test('Gemini shape: a left-out logProbability is 0 (proto3), +5 and a string are refused, a repeated candidate too', async ({ closeAfter }) => {
    const request: JudgeRequest = { messages: [{ role: 'user', content: 'grade' }], output: { name: 'criterion_verdict', schema: { type: 'object' } }, temperature: 0, maxTokens: 64, logprobs: { top: 5 } };
    const tokens = ['{"criteria_met": ', 'true', '}'];
    const replyWith = async (top: Array<{ token: string; logProbability?: unknown }>) => {
      const logprobs = tokens.map((token) => (token === 'true' ? { token, logProbability: top[0].logProbability, top } : { token, top: [{ token }] }));
      const fake = closeAfter(await startFakeGemini(() => ({ json: tokens.join(''), logprobs: logprobs as never }), { logprobModels: ['gemini-2.0-flash'] }));
      const judge = closeAfter(createGeminiJudge({ model: 'gemini-2.0-flash', baseUrl: fake.baseUrl, apiKey: 'test-gemini-key' }));
      return probabilityOfMet(await judge.complete(request, { signal: new AbortController().signal }));
    };
    expect(await replyWith([{ token: 'true' }])).toBe(1);
    expect(await replyWith([{ token: 'true', logProbability: Math.log(0.75) }, { token: 'false', logProbability: Math.log(0.25) }])).toBeCloseTo(0.75, 12);
    const aboveZero = await replyWith([{ token: 'true', logProbability: 5 }, { token: 'false', logProbability: -3 }]);
    expect(RubricateError.isInstance(aboveZero) && aboveZero.message).toMatch(/above 0/);
    const text = await replyWith([{ token: 'true', logProbability: 'Infinity' }]);
    expect(RubricateError.isInstance(text) && text.message).toMatch(/not a finite number/);
    const twice = await replyWith([{ token: 'true', logProbability: -0.7 }, { token: 'true', logProbability: -0.7 }]);
    expect(RubricateError.isInstance(twice) && twice.message).toMatch(/listed twice/);
  });

  test('the local judge\'s alternatives: ids of one spelling summed, the same id or no identity kept apart for the reader to refuse', () => {
    const merged = mergeAlikeAlternatives([
      { token: 't', logprob: Math.log(0.5), identity: '83' },
      { token: 'f', logprob: Math.log(0.2), identity: '69' },
      { token: 't', logprob: Math.log(0.25), identity: '1404' },
    ]);
    expect(merged.map((entry) => entry.token)).toEqual(['t', 'f']);
    expect(Math.exp(merged[0].logprob)).toBeCloseTo(0.75, 12);
    expect(mergeAlikeAlternatives([{ token: 't', logprob: -1, identity: '83' }, { token: 't', logprob: -1, identity: '83' }])).toHaveLength(2);
    expect(mergeAlikeAlternatives([{ token: 't', logprob: -1 }, { token: 't', logprob: -1 }])).toHaveLength(2);
    // Summing never hides an impossible value: NaN stays NaN, above 0 stays above 0.
    expect(mergeAlikeAlternatives([{ token: 't', logprob: Number.NaN, identity: '1' }, { token: 't', logprob: -1, identity: '2' }])[0].logprob).toBeNaN();
    expect(mergeAlikeAlternatives([{ token: 't', logprob: 5, identity: '1' }, { token: 't', logprob: -1, identity: '2' }])[0].logprob).toBeGreaterThan(0);
  });
});
