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
    expect(extractJson('{"explanation": "criteria_met twice?", "criteria_met": true}')).toEqual({ ok: true, value: { explanation: 'criteria_met twice?', criteria_met: true } });
  });
});
