/**
 * The R3, Selene and Lynx adapters: replies in each judge's documented format (fixtures written
 * from the published formats) are read; malformed ones are errors; a judge that keeps answering
 * out of format is never scored; the prompts have each protocol's layout; and items a protocol
 * has no place for are refused before any call.
 */
import { describe, expect } from 'vitest';
import { Comparer } from '../../pipeline/compare.js';
import { Grader } from '../../pipeline/grader.js';
import { normalizeItem } from '../../rubric/normalize.js';
import { test } from '../../testing/vitest-fixtures.js';
import { parseLynxReply } from './lynx.js';
import { r3Absolute, r3Relative } from './r3.js';
import { parseSeleneReply, seleneAbsolute, seleneRelative } from './selene.js';
import type { CriterionShape } from './shared.js';

const five: CriterionShape = { kind: 'five', levels: ['1', '2', '3', '4', '5'] };
const binary: CriterionShape = { kind: 'binary' };

/** Replies in the documented formats, and what each must read as. */
const wellFormed = {
  r3Pointwise: ['<think>The answer is mostly right.</think>\n{"explanation": "Accurate but misses one detail.", "score": 4}', 4],
  r3PointwiseFenced: ['```json\n{"explanation": "Complete.", "score": 5}\n```', 5],
  r3Binary: ['{"explanation": "The final answer matches.", "score": true}', true],
  r3BinaryFalse: ['{"explanation": "Wrong total.", "score": false}', false],
  seleneAbsolute: ['**Reasoning:** The response covers the main points but\nomits the dosage.\n\n**Result:** 3', 3],
  seleneYes: ['**Reasoning:** It answers the question.\n\n**Result:** Yes', true],
  seleneNo: ['**Reasoning:** It does not.\n\n**Result:** No', false],
} as const;

const malformed: Record<string, [string, CriterionShape]> = {
  'R3 score off the scale': ['{"explanation": "x", "score": 6}', five],
  'R3 score as a string': ['{"explanation": "x", "score": "4"}', five],
  'R3 fractional score': ['{"explanation": "x", "score": 3.5}', five],
  'R3 another key': ['{"explanation": "x", "score": 4, "confidence": 0.9}', five],
  'R3 no explanation': ['{"score": 4}', five],
  'R3 prose around the JSON': ['I think {"explanation": "x", "score": 4} is fair.', five],
  'R3 key given twice': ['{"explanation": "x", "score": 2, "score": 5}', five],
  'R3 binary as a string': ['{"explanation": "x", "score": "true"}', binary],
  'Selene no result': ['**Reasoning:** fine', five],
  'Selene two results': ['**Reasoning:** a\n\n**Result:** 4\n**Result:** 2', five],
  'Selene text after the result': ['**Reasoning:** a\n\n**Result:** 4\nThanks!', five],
  'Selene score out of 5': ['**Reasoning:** a\n\n**Result:** 4/5', five],
  'Selene no reasoning': ['**Result:** 4', five],
  'Selene lower-case yes': ['**Reasoning:** a\n\n**Result:** yes', binary],
};

describe('reading replies in each protocol\'s format', () => {
  test('replies in the documented formats are read', () => {
    expect(r3Absolute.parse(wellFormed.r3Pointwise[0], five)).toEqual({ ok: true, result: 4, explanation: 'Accurate but misses one detail.' });
    expect(r3Absolute.parse(wellFormed.r3PointwiseFenced[0], five)).toMatchObject({ ok: true, result: 5 });
    expect(r3Absolute.parse(wellFormed.r3Binary[0], binary)).toMatchObject({ ok: true, result: true });
    expect(r3Absolute.parse(wellFormed.r3BinaryFalse[0], binary)).toMatchObject({ ok: true, result: false });
    expect(r3Relative.parse('{"explanation": "Response 2 is correct.", "score": "Response 2"}')).toEqual({ ok: true, result: 'second', explanation: 'Response 2 is correct.' });
    expect(seleneAbsolute.parse(wellFormed.seleneAbsolute[0], five)).toEqual({ ok: true, result: 3, explanation: 'The response covers the main points but\nomits the dosage.' });
    expect(seleneAbsolute.parse(wellFormed.seleneYes[0], binary)).toMatchObject({ ok: true, result: true });
    expect(seleneAbsolute.parse(wellFormed.seleneNo[0], binary)).toMatchObject({ ok: true, result: false });
    expect(seleneRelative.parse('**Reasoning:** A is precise.\n\n**Result:** A')).toMatchObject({ ok: true, result: 'first' });
    expect(parseLynxReply('{"REASONING": ["The document says 12 km.", "The answer says 12 km."], "SCORE": "PASS"}')).toEqual({ ok: true, result: true, explanation: 'The document says 12 km.\nThe answer says 12 km.' });
    expect(parseLynxReply('{"REASONING": "Adds a claim the document lacks.", "SCORE": "FAIL"}')).toMatchObject({ ok: true, result: false });
  });

  test.for(Object.entries(malformed))('%s is an error', ([, [text, shape]]) => {
    const layout = text.includes('**') || text.startsWith('**') ? seleneAbsolute : r3Absolute;
    expect(layout.parse(text, shape).ok).toBe(false);
  });

  test('malformed Lynx and pairwise replies are errors', () => {
    for (const text of ['{"REASONING": ["ok"], "SCORE": "pass"}', '{"SCORE": "PASS"}', '{"REASONING": ["ok"], "SCORE": "PASS", "NOTE": 1}', '{"REASONING": [1], "SCORE": "FAIL"}', 'PASS']) expect(parseLynxReply(text).ok, text).toBe(false);
    expect(r3Relative.parse('{"explanation": "x", "score": "Response 3"}').ok).toBe(false);
    expect(parseSeleneReply('**Reasoning:** x\n\n**Result:** C', new Map([['A', 1], ['B', 2]])).ok).toBe(false);
  });
});

const likert = { type: 'ordinal', choices: ['Poor', 'Weak', 'Fair', 'Good', 'Excellent'].map((label, index) => ({ label, description: `level ${index + 1}: ${label.toLowerCase()}` })) };

describe('grading with a protocol', () => {
  test('each protocol sends its own layout and scores what its judge answers', async ({ scriptedJudge }) => {
    const replies = { r3: '{"explanation": "Good.", "score": 4}', selene: '**Reasoning:** Good.\n\n**Result:** 4', lynx: '{"REASONING": ["Faithful."], "SCORE": "PASS"}' } as const;
    const layouts = { r3: ['### TASK\nExplains the dose', '### INPUT\n', '### EVALUATION RUBRIC\n1: level 1: poor', '### OUTPUT FORMAT'], selene: ['**Result:** <an integer between 1 and 5>', 'Score Rubrics:\n[Explains the dose]\nScore 1: level 1: poor'], lynx: ['QUESTION (THIS DOES NOT COUNT AS BACKGROUND INFORMATION):', 'DOCUMENT:\nTake 500 mg.', '"SCORE"'] } as const;
    for (const protocol of ['r3', 'selene', 'lynx'] as const) {
      const { fake, judge } = await scriptedJudge(() => ({ content: replies[protocol] }));
      const criterion = protocol === 'lynx' ? { id: 'dose', text: 'Explains the dose' } : { id: 'dose', text: 'Explains the dose', scale: likert };
      const graded = normalizeItem({ id: 'q', prompt: 'How much should I take?', response: 'Take 500 mg.', ...(protocol === 'lynx' ? { reference: 'Take 500 mg.' } : {}), rubric: { criteria: [criterion] } });
      const result = await new Grader({ judge, plan: { protocol } }).gradeItem(graded);
      const prompt = fake.requests[0].messages.map((message) => message.content).join('\n');
      for (const part of layouts[protocol]) expect(prompt, `${protocol}: ${part}`).toContain(part);
      expect(fake.requests[0].messages.map((message) => message.role)).toEqual(['user']);
      expect(result.criteria[0], protocol).toMatchObject(protocol === 'lynx' ? { met: true } : { label: 'Good', value: 0.75 });
      expect(result.judge?.template_version).toMatch(new RegExp(`^${protocol}`));
    }
  });

  test('a judge that keeps answering out of format is asked again, then reported, never scored', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: '**Reasoning:** fine\n\n**Result:** 4 out of 5' }));
    const graded = normalizeItem({ id: 'q', prompt: 'p', response: 'r', rubric: { criteria: [{ text: 'c', scale: likert }] } });
    const result = await new Grader({ judge, plan: { protocol: 'selene' }, calls: { maxAttempts: 3, retryBaseDelayMs: 1 } }).gradeItem(graded);
    expect(fake.requests).toHaveLength(3);
    expect(result).toMatchObject({ status: 'error', score: null, criteria: [{ status: 'error', met: null, error: { code: 'JUDGE_UNPARSEABLE' } }] });
  });

  test('items a protocol has no place for are refused before any call', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(() => ({ content: '{}' }));
    const withReference = normalizeItem({ id: 'q', prompt: 'p', response: 'r', reference: 'ref', rubric: { criteria: [{ text: 'c', scale: likert }] } });
    await expect(new Grader({ judge, plan: { protocol: 'r3' } }).gradeItem(withReference)).rejects.toThrow(/r3 has no place for a reference answer/);
    const noDocument = normalizeItem({ id: 'q', prompt: 'p', response: 'r', rubric: { criteria: [{ text: 'c' }] } });
    await expect(new Grader({ judge, plan: { protocol: 'lynx' } }).gradeItem(noDocument)).rejects.toThrow(/lynx judges a response against its DOCUMENT/);
    const scaled = normalizeItem({ id: 'q', prompt: 'p', response: 'r', reference: 'ref', rubric: { criteria: [{ text: 'c', scale: likert }] } });
    await expect(new Grader({ judge, plan: { protocol: 'lynx' } }).gradeItem(scaled)).rejects.toThrow(/answers yes or no/);
    expect(() => new Grader({ judge, plan: { protocol: 'selene', verdict: 'probability' } })).toThrow(/grades one criterion per call in its own reply format/);
    expect(() => new Comparer({ judge, plan: { protocol: 'lynx' } })).toThrow(/no pairwise format/);
    expect(fake.requests).toHaveLength(0);
  });

  test('compare reads R3\'s and Selene\'s pairwise replies in both orders, mapped back to the pair', async ({ scriptedJudge }) => {
    // The judge prefers whichever response says "12 km", wherever it is shown.
    const pair = { id: 'p', prompt: [{ role: 'user', content: 'How far is it?' }], responseA: 'About 12 km.', responseB: 'No idea.', label: 'A' as const };
    for (const protocol of ['r3', 'selene'] as const) {
      const { judge } = await scriptedJudge((request) => {
        const firstIsRight = request.userText.indexOf('About 12 km.') < request.userText.indexOf('No idea.');
        return { content: protocol === 'r3' ? `{"explanation": "x", "score": "Response ${firstIsRight ? 1 : 2}"}` : `**Reasoning:** x\n\n**Result:** ${firstIsRight ? 'A' : 'B'}` };
      });
      const record = await new Comparer({ judge, plan: { protocol } }).comparePair(pair);
      expect(record, protocol).toMatchObject({ winner: 'A', consistent: true, orders: { ab: 'A', ba: 'A' }, correct: true });
    }
  });
});
