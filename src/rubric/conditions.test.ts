import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { normalizeItem, normalizeRubric } from './normalize.js';

const tone = { type: 'ordinal', choices: [{ label: 'Poor' }, { label: 'Fair' }, { label: 'Good' }] };

/** The error normalising a rubric throws, read back as its fields. */
function refusal(criteria: unknown[], extra: Record<string, unknown> = {}): { code: string; message: string; field?: string; line?: number; file?: string } {
  try {
    normalizeRubric({ criteria, ...extra }, { file: 'rubrics.jsonl', line: 7 });
  } catch (error) {
    if (!RubricateError.isInstance(error)) throw error;
    return { code: error.code, message: error.message, field: error.details.field, line: error.details.line, file: error.details.file };
  }
  throw new Error('the rubric was accepted');
}

describe('conditional criteria: the graph checked at the edge', () => {
  it('accepts a tree, one condition or a list, labels on an ordinal parent, and counts a repeated condition once', () => {
    const rubric = normalizeRubric({
      criteria: [
        { id: 'c1', text: 'Gives a diagnosis' },
        { id: 'c2', text: 'Explains it', when: { criterion: 'c1', verdict: true } },
        { id: 'tone', text: 'Tone', scale: tone },
        { id: 'c3', text: 'Warm', when: [{ criterion: 'tone', verdict: 'Good' }, { criterion: 'tone', verdict: 'Good' }, { criterion: 'c2', verdict: false }] },
      ],
    });
    expect(rubric.criteria[1].when).toEqual([{ criterion: 'c1', verdict: true }]);
    expect(rubric.criteria[3].when).toEqual([{ criterion: 'tone', verdict: ['Good'] }, { criterion: 'c2', verdict: false }]);
    expect(rubric.criteria[0].when).toBeUndefined();
  });

  it('refuses a cycle, naming its path, the file, line and field', () => {
    const error = refusal([
      { id: 'a', text: 'A' },
      { id: 'b', text: 'B', when: { criterion: 'c', verdict: true } },
      { id: 'c', text: 'C', when: { criterion: 'b', verdict: true } },
    ]);
    expect(error).toMatchObject({ code: 'INPUT_INVALID', file: 'rubrics.jsonl', line: 7 });
    expect(error.message).toContain('cycle ("b" → "c" → "b", each conditioned on the next)');
    expect(error.field).toBe('criteria[1].when');
  });

  it('refuses a condition on a missing criterion', () => {
    const error = refusal([{ id: 'a', text: 'A' }, { id: 'b', text: 'B', when: [{ criterion: 'a', verdict: true }, { criterion: 'zz', verdict: true }] }]);
    expect(error.message).toBe('criterion "b" is conditioned on "zz", which is not a criterion of this rubric');
    expect(error.field).toBe('criteria[1].when[1].criterion');
  });

  it('refuses a self-reference', () => {
    const error = refusal([{ id: 'a', text: 'A', when: { criterion: 'a', verdict: true } }]);
    expect(error.message).toContain('"a" is conditioned on itself');
    expect(error.field).toBe('criteria[0].when.criterion');
  });

  it('refuses a criterion listed under both verdicts of one parent', () => {
    const error = refusal([{ id: 'a', text: 'A' }, { id: 'b', text: 'B', when: [{ criterion: 'a', verdict: true }, { criterion: 'a', verdict: false }] }]);
    expect(error.message).toBe('criterion "b" is conditioned on contradictory verdicts of criterion "a" (true and false): it could never be graded');
    expect(error.field).toBe('criteria[1].when[1]');
  });

  it('refuses disjoint labels of an ordinal parent, and a met view that no label allows', () => {
    expect(refusal([{ id: 't', text: 'T', scale: tone }, { id: 'b', text: 'B', when: [{ criterion: 't', verdict: ['Poor'] }, { criterion: 't', verdict: ['Fair', 'Good'] }] }]).message).toContain('contradictory verdicts of criterion "t" ("Poor" and "Fair", "Good")');
    // Met only at the top label: `true` is "Good", which contradicts "Fair".
    expect(refusal([{ id: 't', text: 'T', scale: tone }, { id: 'b', text: 'B', when: [{ criterion: 't', verdict: true }, { criterion: 't', verdict: 'Fair' }] }]).message).toContain('("Good" and "Fair")');
  });

  it('refuses a child conditioned on verdicts that contradict what its ancestors need', () => {
    const error = refusal([
      { id: 'a', text: 'A' },
      { id: 'b', text: 'B', when: { criterion: 'a', verdict: true } },
      { id: 'c', text: 'C', when: [{ criterion: 'b', verdict: true }, { criterion: 'a', verdict: false }] },
    ]);
    expect(error.message).toBe('criterion "c" needs verdicts of criterion "a" that contradict what its other conditions need (false and true): it could never be graded');
    expect(error.field).toBe('criteria[2].when[0]');
  });

  it('refuses unreachable criteria: a label off the scale, labels on a binary parent, a failed hard rule under the gate', () => {
    expect(refusal([{ id: 't', text: 'T', scale: tone }, { id: 'b', text: 'B', when: { criterion: 't', verdict: 'Great' } }])).toMatchObject({
      message: 'label "Great" is not on the scale of criterion "t" ("Poor", "Fair", "Good"): the condition could never hold',
      field: 'criteria[1].when.verdict',
    });
    expect(refusal([{ id: 'a', text: 'A' }, { id: 'b', text: 'B', when: { criterion: 'a', verdict: 'Yes' } }]).message).toBe('criterion "a" is binary: a condition on it takes verdict true or false, not labels');
    const gated = refusal([{ id: 'h', text: 'Safe', kind: 'hard_rule' }, { id: 'b', text: 'B', when: { criterion: 'h', verdict: false } }], { gate: 'hard_rules' });
    expect(gated.message).toContain('applies only when hard rule "h" fails, but under the hard-rule gate a failed hard rule gates the item first');
    const upward = refusal([{ id: 'p', text: 'P' }, { id: 'h', text: 'Safe', kind: 'hard_rule', when: { criterion: 'p', verdict: true } }], { gate: 'hard_rules' });
    expect(upward.message).toContain('hard rule "h" is conditioned on principle "p"');
  });

  it('refuses conditions in a rubric graded per turn, and names the field inside an item', () => {
    expect(refusal([{ id: 'a', text: 'A', turn: 'every' }, { id: 'b', text: 'B', when: { criterion: 'a', verdict: true } }]).message).toContain('cannot have per-turn criteria');
    const item = () => normalizeItem({ id: 'i', prompt: 'p', response: 'r', rubric: { criteria: [{ id: 'a', text: 'A', when: { criterion: 'nope', verdict: true } }] } }, { file: 'items.jsonl', line: 3 });
    expect(item).toThrow(expect.objectContaining({ code: 'INPUT_INVALID', details: expect.objectContaining({ file: 'items.jsonl', line: 3, field: 'rubric.criteria[0].when.criterion' }) }));
  });

  it('refuses a malformed condition through the schema', () => {
    expect(refusal([{ id: 'a', text: 'A' }, { id: 'b', text: 'B', when: { criterion: 'a', verdict: [] } }]).field).toBe('criteria[1].when.verdict');
    expect(refusal([{ id: 'a', text: 'A' }, { id: 'b', text: 'B', when: { criterion: 'a' } }]).field).toMatch(/^criteria\[1\]\.when/);
  });

  it('keeps the hash of a rubric without conditions', () => {
    const plain = normalizeRubric({ criteria: [{ id: 'a', text: 'A' }, { id: 'b', text: 'B' }] });
    const conditional = normalizeRubric({ criteria: [{ id: 'a', text: 'A' }, { id: 'b', text: 'B', when: { criterion: 'a', verdict: true } }] });
    expect(plain.id).not.toBe(conditional.id);
    expect(normalizeRubric({ criteria: [{ id: 'a', text: 'A' }, { id: 'b', text: 'B' }] }).id).toBe(plain.id);
  });
});
