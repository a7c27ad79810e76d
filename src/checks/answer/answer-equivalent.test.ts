import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCheck, validateCheck } from '../registry.js';
import { mathEquivalent, maxAnswerCharacters } from './math-equivalence.js';

const context = { prompt: '', mode: 'strict' as const };

interface AnswerPair {
  form: string;
  answer: string;
  response: string;
  equivalent: boolean;
  domain?: string;
  extract?: string;
}

/** Answer pairs written for this check from the facts of Math-Verify's test cases (forms, not text), truth by hand. */
const pairs: AnswerPair[] = readFileSync(new URL('./fixtures/answer-pairs.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as AnswerPair);

function check(pair: AnswerPair) {
  return runCheck({ type: 'answer-equivalent', answer: pair.answer, ...(pair.domain ? { domain: pair.domain } : {}), ...(pair.extract ? { extract: pair.extract } : {}) }, pair.response, context);
}

describe('answer-equivalent', () => {
  it('agrees with the truth on at least 98% of the held-out answer pairs without a judge, and never calls an undecided case false', () => {
    const forms = new Set(pairs.map((pair) => pair.form));
    for (const form of ['fraction', 'radical', 'pi', 'interval', 'set', 'tuple', 'equation', 'percent', 'thousands', 'unit', 'matrix']) expect(forms).toContain(form);
    let agreed = 0;
    const wrong: string[] = [];
    for (const pair of pairs) {
      const outcome = check(pair);
      if (outcome.undecided) {
        // Undecided is its own answer, with its reason: never a silent "not equivalent".
        expect(outcome.undecided.reason.length).toBeGreaterThan(0);
        continue;
      }
      if (outcome.passed === pair.equivalent) agreed += 1;
      else wrong.push(`${pair.form}: ${pair.answer} vs ${pair.response}`);
    }
    expect(wrong).toEqual([]);
    expect(agreed / pairs.length).toBeGreaterThanOrEqual(0.98);
  });

  it('what cannot be found or parsed is undecided, with fallback "judge" named when asked', () => {
    const noBox = runCheck({ type: 'answer-equivalent', answer: '2' }, 'I think it is two.', context);
    expect(noBox.undecided?.reason).toMatch(/no final answer/);
    expect(noBox.undecided?.fallback).toBeUndefined();
    const unparsable = runCheck({ type: 'answer-equivalent', answer: '2', fallback: 'judge' }, '\\boxed{\\frac{1}{}}', context);
    expect(unparsable.undecided).toMatchObject({ fallback: 'judge' });
    expect(unparsable.undecided?.reason).toMatch(/parse/);
  });

  it('bounded: an answer past the size limit is not parsed (undecided), and parameters are checked', () => {
    const long = `${'1+'.repeat(maxAnswerCharacters)}1`;
    expect(mathEquivalent('2', long)).toEqual({ decided: false, reason: expect.stringMatching(/longer than/) });
    const longBoxed = runCheck({ type: 'answer-equivalent', answer: '2', domain: 'number' }, `\\boxed{${'9'.repeat(maxAnswerCharacters + 1)}}`, context);
    expect(longBoxed.undecided?.reason).toMatch(/longer than/);
    expect(validateCheck({ type: 'answer-equivalent', answer: '1', domain: 'chemistry' }).ok).toBe(false);
    expect(validateCheck({ type: 'answer-equivalent', answer: '1', extract: { regex: '(' } }).ok).toBe(false);
    expect(validateCheck({ type: 'answer-equivalent', answer: '1', extract: { regex: 'ANSWER=(\\S+)' }, tolerance: 0.01 }).ok).toBe(true);
  });

  it('costly answers are refused before the engine computes them (undecided), and float overflow never makes two numbers equal', () => {
    // A tower of powers would be folded by the parse itself, past any time limit: read from the uncomputed form first.
    expect(mathEquivalent('9^{9^{9^9}}', '1')).toEqual({ decided: false, reason: expect.stringMatching(/exponent/) });
    expect(mathEquivalent('2', '2^{2^{30}}')).toEqual({ decided: false, reason: expect.stringMatching(/^the answer: .*exponent/) });
    expect(mathEquivalent('100000!', '2')).toEqual({ decided: false, reason: expect.stringMatching(/factorial/) });
    // Both are Infinity as floats; the exact comparison tells them apart.
    expect(mathEquivalent('7^{999}', '7^{998}')).toMatchObject({ decided: true, equivalent: false });
    expect(mathEquivalent('2^{10}', '1024')).toMatchObject({ decided: true, equivalent: true });
  });

  it('a regex extraction and a tolerance apply', () => {
    const outcome = runCheck({ type: 'answer-equivalent', answer: '3.14', domain: 'number', extract: { regex: 'ANSWER=(\\S+)' }, tolerance: 0.01 }, 'work… ANSWER=3.1416', context);
    expect(outcome.passed).toBe(true);
    expect(runCheck({ type: 'answer-equivalent', answer: '3.14', domain: 'number', extract: { regex: 'ANSWER=(\\S+)' } }, 'ANSWER=3.1416', context).passed).toBe(false);
  });
});
