import { describe, expect, it } from 'vitest';
import { duplicateJsonKey, extractJson } from './parse.js';

describe('judge replies that repeat a key', () => {
  it('are ambiguous, never read as the last value', () => {
    const reply = '{"explanation": "x", "criteria_met": true, "criteria_met": false}';
    expect(JSON.parse(reply)).toEqual({ explanation: 'x', criteria_met: false });
    const extracted = extractJson(reply);
    expect(extracted.ok).toBe(false);
    expect(extracted.ok ? '' : extracted.reason).toMatch(/ambiguous reply: the key "criteria_met" appears twice/);
    // Inside a fence and inside prose, too.
    expect(extractJson('```json\n{"criteria_met": true, "criteria_met": true}\n```').ok).toBe(false);
    expect(extractJson('Verdict: {"verdicts": {"c1": {"criteria_met": true}, "c1": {"criteria_met": false}}} done').ok).toBe(false);
  });

  it('tells keys from values, nesting levels and escaped quotes apart', () => {
    expect(duplicateJsonKey('{"a": "a", "b": {"a": 1}, "c": ["a", "a"]}')).toBeUndefined();
    expect(duplicateJsonKey('{"a": "say \\"b\\": 1", "b": 2}')).toBeUndefined();
    expect(duplicateJsonKey('{"v": {"x": 1, "x": 2}}')).toBe('x');
    expect(duplicateJsonKey('{"\\u0061": 1, "a": 2}')).toBe('a');
    // A key that is no valid JSON string (a raw tab) is compared by its raw text.
    expect(duplicateJsonKey('{"a\tb": 1, "a\tb": 2}')).toBe('"a\tb"');
    expect(duplicateJsonKey('{"é \\"q\\"": 1, "é \\u0022q\\u0022": 2}')).toBe('é "q"');
    expect(extractJson('{"explanation": "criteria_met twice?", "criteria_met": true}')).toEqual({ ok: true, value: { explanation: 'criteria_met twice?', criteria_met: true } });
  });
});

describe('judge replies that hold several verdict objects', () => {
  it('refuse two different objects wherever they stand, never reading the last one', () => {
    for (const reply of [
      '{"criteria_met": true} {"criteria_met": false}',
      'First I thought {"explanation": "no", "criteria_met": false}. Final answer: {"explanation": "yes", "criteria_met": true}',
      '```json\n{"criteria_met": true}\n```\n```json\n{"criteria_met": false}\n```',
      '```json\n{"criteria_met": true}\n```\nCorrection: {"criteria_met": false}',
      '{"verdicts": {"c1": {"criteria_met": true}}}\n{"verdicts": {"c1": {"criteria_met": false}}}',
      '{"criteria_met": true} and then {"criteria_met": fal',
    ]) {
      const extracted = extractJson(reply);
      expect(extracted.ok, reply).toBe(false);
      expect(extracted.ok ? '' : extracted.reason).toMatch(/^ambiguous reply: /);
    }
  });

  it('accept the same object written twice, and thinking before the answer', () => {
    expect(extractJson('{"criteria_met": true}\n{"criteria_met": true}')).toEqual({ ok: true, value: { criteria_met: true } });
    expect(extractJson('<think>{"criteria_met": false}</think>{"criteria_met": true}')).toEqual({ ok: true, value: { criteria_met: true } });
    expect(extractJson('Reasoning with {braces} that are not JSON. {"criteria_met": false}')).toEqual({ ok: true, value: { criteria_met: false } });
  });
});
