import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { checkRegistry, describeCheck, ifevalInstructionIds, runCheck, validateCheck } from './registry.js';

const context = { prompt: '', mode: 'strict' as const };

describe('check registry', () => {
  it('registers the 25 IFEval instructions under their ids and the general checks', () => {
    expect(ifevalInstructionIds).toHaveLength(25);
    expect(new Set(ifevalInstructionIds).size).toBe(25);
    for (const id of ['length_constraints:number_words', 'detectable_format:json_format', 'change_case:english_capital', 'startend:end_checker', 'punctuation:no_comma', 'combination:repeat_prompt', 'language:response_language']) {
      expect(checkRegistry.find(id)?.family).toBe('ifeval');
    }
    for (const type of ['regex', 'contains', 'excludes', 'count', 'starts_with', 'ends_with', 'json', 'language']) {
      expect(checkRegistry.find(type)?.family).toBe('general');
    }
  });

  it('accepts IFEval kwargs carrying nulls for ignored arguments', () => {
    expect(validateCheck({ type: 'length_constraints:number_words', num_words: 300, relation: 'at least', keywords: null, language: null })).toEqual({ ok: true });
  });

  it('rejects an unknown type with CHECK_INVALID, naming it and suggesting the closest', () => {
    const result = validateCheck({ type: 'length_constraints:number_word' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('CHECK_INVALID');
    expect(result.error.details.field).toBe('type');
    expect(result.error.message).toContain('"length_constraints:number_word"');
    expect(result.error.message).toContain('did you mean "length_constraints:number_words"');
  });

  it('names the bad parameter and the check type', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'length_constraints:number_words', num_words: 300, relation: 'at most' }, 'relation'],
      [{ type: 'length_constraints:number_words', relation: 'at least' }, 'num_words'],
      [{ type: 'keywords:letter_frequency', letter: 'ab', let_frequency: 2, let_relation: 'at least' }, 'letter'],
      [{ type: 'length_constraints:nth_paragraph_first_word', num_paragraphs: 2, nth_paragraph: 3, first_word: 'so' }, 'nth_paragraph'],
      [{ type: 'language:response_language', language: 'xx' }, 'language'],
      [{ type: 'punctuation:no_comma', strict: true }, 'strict'],
      [{ type: 'regex', pattern: '(unclosed' }, 'pattern'],
      [{ type: 'count', unit: 'pages', relation: 'at_least', value: 1 }, 'unit'],
    ];
    for (const [spec, field] of cases) {
      const result = validateCheck(spec as { type: string });
      expect(result.ok, JSON.stringify(spec)).toBe(false);
      if (result.ok) continue;
      expect(result.error).toBeInstanceOf(RubricateError);
      expect(result.error.code).toBe('CHECK_INVALID');
      expect(result.error.details.field).toBe(field);
      expect(result.error.message).toContain(`"${spec.type}"`);
      expect(result.error.message).toContain(`"${field}"`);
    }
  });

  it('runCheck throws CHECK_INVALID for invalid specs', () => {
    expect(() => runCheck({ type: 'nope' }, 'text', context)).toThrowError(RubricateError);
    try {
      runCheck({ type: 'keywords:existence', keywords: [] }, 'text', context);
      expect.unreachable();
    } catch (error) {
      expect((error as RubricateError).code).toBe('CHECK_INVALID');
      expect((error as RubricateError).details.field).toBe('keywords');
    }
  });

  it('validates a spec once and reuses the result for the same object', () => {
    const spec = { type: 'keywords:existence', keywords: ['alpha'] };
    expect(runCheck(spec, 'Alpha beta', context).passed).toBe(true);
    // Later changes to the same object are not seen: parameters are cached per spec.
    spec.keywords = ['gamma'];
    expect(runCheck(spec, 'Alpha beta', context).passed).toBe(true);
    expect(runCheck({ ...spec }, 'Alpha beta', context).passed).toBe(false);
  });

  it('describes checks in one readable line', () => {
    expect(describeCheck({ type: 'length_constraints:number_words', num_words: 300, relation: 'at least' })).toBe('Answer with at least 300 words.');
    expect(describeCheck({ type: 'language:response_language', language: 'kn' })).toContain('Kannada');
    expect(describeCheck({ type: 'keywords:frequency', keyword: 'war', frequency: 8, relation: 'less than' })).toBe(
      'The word "war" should appear fewer than 8 times.',
    );
  });

  it('general checks ignore the mode', () => {
    const spec = { type: 'starts_with', text: 'Answer:' };
    const response = 'Preamble\nAnswer: 42';
    expect(runCheck(spec, response, { prompt: '', mode: 'strict' }).passed).toBe(false);
    expect(runCheck(spec, response, { prompt: '', mode: 'loose' }).passed).toBe(false);
  });
});
