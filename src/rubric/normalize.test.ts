import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { rubricHash, canonicalRubricJson } from './hashing.js';
import { deriveCriterionId, normalizeItem, normalizeRubric } from './normalize.js';

function errorOf(action: () => unknown): RubricateError {
  try {
    action();
  } catch (error) {
    if (RubricateError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('normalizeRubric', () => {
  it('derives stable criterion ids from the text and fills defaults', () => {
    const rubric = normalizeRubric({ criteria: [{ text: 'Mentions dosage', points: 5 }, { text: 'Is rude', points: -3, tags: ['axis:tone'] }] });
    expect(rubric.criteria[0]).toEqual({ id: deriveCriterionId('Mentions dosage'), text: 'Mentions dosage', points: 5, tags: [], kind: 'principle' });
    expect(rubric.criteria[1].id).toBe(deriveCriterionId('Is rude'));
    expect(rubric.criteria[1].tags).toEqual(['axis:tone']);
    expect(normalizeRubric({ criteria: [{ text: 'Mentions dosage', points: 5 }] }).criteria[0].id).toBe(rubric.criteria[0].id);
  });

  it('suffixes repeated derived ids and rejects repeated explicit ids', () => {
    const rubric = normalizeRubric({ criteria: [{ text: 'Same' }, { text: 'Same' }] });
    expect(rubric.criteria.map((criterion) => criterion.id)).toEqual([deriveCriterionId('Same'), `${deriveCriterionId('Same')}_2`]);
    const error = errorOf(() => normalizeRubric({ criteria: [{ id: 'a', text: 'x' }, { id: 'a', text: 'y' }] }, { file: 'f.jsonl', line: 4, fieldPrefix: 'rubric' }));
    expect(error.code).toBe('INPUT_INVALID');
    expect(error.details).toMatchObject({ file: 'f.jsonl', line: 4, field: 'rubric.criteria[1].id' });
  });

  it('reads null as absent, as a columnar dataset fills the keys other rows have (metadata kept as given)', () => {
    // Arrow's struct column: every criterion has the union of keys, the absent ones null.
    const filled = {
      id: null,
      gate: null,
      criteria: [
        { id: null, text: 'Mentions dosage', points: 5, importance: null, tags: null, kind: null, scale: null, check: null, subchecks: null, metadata: { source: null } },
        { id: 'rude', text: 'Is rude', points: null, importance: 'Pitfall', tags: ['axis:tone'], kind: 'principle', scale: { type: 'ordinal', choices: [{ label: 'no', value: null }, { label: 'yes', value: null }], metThreshold: null }, check: null, subchecks: null, metadata: null },
      ],
    };
    const rubric = normalizeRubric(filled);
    const plain = normalizeRubric({
      criteria: [
        { text: 'Mentions dosage', points: 5, metadata: { source: null } },
        { id: 'rude', text: 'Is rude', importance: 'Pitfall', tags: ['axis:tone'], kind: 'principle', scale: { type: 'ordinal', choices: [{ label: 'no' }, { label: 'yes' }] } },
      ],
    });
    expect(rubric).toEqual(plain);
    expect(rubric.criteria[0].metadata).toEqual({ source: null });
    // A required field that is null is still missing, and named.
    expect(errorOf(() => normalizeRubric({ criteria: [{ text: null, points: 1 }] })).details.field).toBe('criteria[0].text');
    const item = normalizeItem({ id: 'i', prompt: 'q', response: 'r', rubric: filled, rubric_id: null, reference: null, tags: null, metadata: null });
    expect(item.rubric).toEqual(plain);
    expect(item).not.toHaveProperty('reference');
  });

  it('names the field of a NaN weight, an empty rubric and an empty text', () => {
    const nan = errorOf(() => normalizeRubric({ criteria: [{ text: 'a', points: Number.NaN }] }, { file: 'in.jsonl', line: 7 }));
    expect(nan.details.field).toBe('criteria[0].points');
    expect(nan.message).toMatch(/NaN|finite/);
    expect(errorOf(() => normalizeRubric({ criteria: [] })).details.field).toBe('criteria');
    expect(errorOf(() => normalizeRubric({ criteria: [{ text: '   ' }] })).details.field).toBe('criteria[0].text');
  });

  it('keeps ordinal scales and checks, and drops the default binary scale', () => {
    const rubric = normalizeRubric({
      criteria: [
        { text: 'a', scale: { type: 'binary' } },
        { text: 'b', scale: { type: 'ordinal', choices: [{ label: 'no' }, { label: 'yes' }] } },
        { text: 'c', kind: 'hard_rule', check: { type: 'punctuation:no_comma' } },
      ],
    });
    expect(rubric.criteria[0].scale).toBeUndefined();
    expect(rubric.criteria[1].scale?.type).toBe('ordinal');
    expect(rubric.criteria[2].check).toEqual({ type: 'punctuation:no_comma' });
  });
});

describe('rubric hashing', () => {
  it('is independent of key order and of the rubric id, and changes with content', () => {
    const first = normalizeRubric({ id: 'one', criteria: [{ text: 'a', points: 2, tags: ['x'] }] });
    const second = normalizeRubric({ criteria: [{ tags: ['x'], points: 2, text: 'a' }], id: 'two' });
    expect(rubricHash(first)).toBe(rubricHash(second));
    expect(canonicalRubricJson(first)).toBe(canonicalRubricJson(second));
    expect(rubricHash(normalizeRubric({ criteria: [{ text: 'a', points: 3, tags: ['x'] }] }))).not.toBe(rubricHash(first));
    expect(rubricHash(first)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('normalizeItem', () => {
  it('gives a record with a known rubric_id and plain strings the same item as the schema, and the schema its errors', () => {
    const rubric = normalizeRubric({ id: 'r1', criteria: [{ text: 'greets' }] });
    const rubrics = new Map([['r1', rubric], ['7', rubric]]);
    expect(normalizeItem({ id: 3, prompt: 'q', response: 'r', rubric_id: 'r1', reference: '', extra: true }, { rubrics })).toEqual({ id: '3', prompt: [{ role: 'user', content: 'q' }], response: 'r', rubric, reference: '' });
    expect(normalizeItem({ id: 'a', prompt: 'q', response: 'r', rubric_id: 7 }, { rubrics }).rubric).toBe(rubric);
    // The same record with tags goes through the schema: the same item, plus its tags.
    expect(normalizeItem({ id: 'a', prompt: 'q', response: 'r', rubric_id: 'r1', tags: ['t'] }, { rubrics })).toEqual({ id: 'a', prompt: [{ role: 'user', content: 'q' }], response: 'r', rubric, tags: ['t'] });
    expect(errorOf(() => normalizeItem({ id: '', prompt: 'q', response: 'r', rubric_id: 'r1' }, { rubrics })).details.field).toBe('id');
    expect(errorOf(() => normalizeItem({ id: 'a', prompt: 'q', response: 'r', rubric_id: 'nope' }, { rubrics })).message).toMatch(/unknown rubric_id "nope"/);
    expect(errorOf(() => normalizeItem({ id: 'a', prompt: 'q', response: 'r', rubric_id: 'r1', reference: 5 }, { rubrics })).details.field).toBe('reference');
  });

  it('accepts a string prompt or messages with content parts', () => {
    const item = normalizeItem({ id: 3, prompt: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }], response: 'hi', rubric: { criteria: [{ text: 'greets' }] } });
    expect(item.id).toBe('3');
    expect(item.prompt).toEqual([{ role: 'user', content: 'hello' }]);
    expect(normalizeItem({ id: 'a', prompt: 'q', response: 'r', rubric: { criteria: [{ text: 't' }] } }).prompt).toEqual([{ role: 'user', content: 'q' }]);
  });

  it('resolves rubric_id from a rubric table and reports unknown ids', () => {
    const rubric = normalizeRubric({ id: 'r1', criteria: [{ text: 't' }] });
    const item = normalizeItem({ id: 'a', prompt: 'q', response: 'r', rubric_id: 'r1' }, { rubrics: new Map([['r1', rubric]]) });
    expect(item.rubric).toBe(rubric);
    const error = errorOf(() => normalizeItem({ id: 'a', prompt: 'q', response: 'r', rubric_id: 'zz' }, { rubrics: new Map(), file: 'x.jsonl', line: 2 }));
    expect(error.details).toMatchObject({ file: 'x.jsonl', line: 2, field: 'rubric_id' });
  });

  it('names missing and mistyped fields', () => {
    expect(errorOf(() => normalizeItem({ id: 'a', prompt: 'q', rubric: { criteria: [{ text: 't' }] } })).details.field).toBe('response');
    expect(errorOf(() => normalizeItem({ id: 'a', prompt: 'q', response: 5, rubric: { criteria: [{ text: 't' }] } })).message).toMatch(/expected string, got number/);
    expect(errorOf(() => normalizeItem({ id: 'a', prompt: 'q', response: 'r' })).details.field).toBe('rubric');
    expect(errorOf(() => normalizeItem({ id: 'a', prompt: 'q', response: 'r', rubric: { criteria: [{ text: 't', points: 'x' }] } })).details.field).toBe('rubric.criteria[0].points');
  });
});

describe('importance classes', () => {
  it('set points from the scheme (RaR by default), tag the criterion, and honour overrides and explicit points', () => {
    const rar = normalizeRubric({ criteria: [{ text: 'a', importance: 'Essential' }, { text: 'b', importance: 'Pitfall Criteria' }, { text: 'c', importance: 'Optional', points: 2 }] });
    expect(rar.criteria.map((criterion) => criterion.points)).toEqual([5, -2, 2]);
    expect(rar.criteria[0].tags).toEqual(['importance:essential']);
    const profbench = normalizeRubric({ importance_scheme: 'profbench', importance_points: { Minor: 1.5 }, criteria: [{ text: 'a', importance: 'Critical' }, { text: 'b', importance: 'minor' }] });
    expect(profbench.criteria.map((criterion) => criterion.points)).toEqual([4, 1.5]);
    expect(errorOf(() => normalizeRubric({ criteria: [{ text: 'a', importance: 'Vital' }] })).details.field).toBe('criteria[0].importance');
  });
});

describe('normalizeItem on plain records (read without the schema walk)', () => {
  // A key the schema ignores sends a record through the schema: the reference result for the same record.
  const throughSchema = (record: Record<string, unknown>) => normalizeItem({ ...record, unread_field: true }, { file: 'f.jsonl', line: 2 });
  const plainRecords: Array<Record<string, unknown>> = [
    { id: 'q1', prompt: 'P', response: 'R', rubric: { criteria: [{ text: '  Cites a source ', points: 2 }, { id: 7, text: 'Is rude', points: -3, tags: ['axis:tone'], kind: 'hard_rule' }] } },
    { id: 3, prompt: 'P', response: '', reference: 'Ref', tags: ['theme:x'], rubric: { id: 'r9', criteria: [{ text: 'Same' }, { text: 'Same' }, { text: 'Other', points: 0, tags: [] }] } },
    { id: 'q2', prompt: 'P', response: 'R', rubric: { id: 4, criteria: [{ id: 'a', text: 'x', kind: 'principle', points: 1.5 }] } },
  ];

  it('gives exactly the item the schema gives', () => {
    for (const record of plainRecords) {
      const item = normalizeItem(record, { file: 'f.jsonl', line: 2 });
      expect(item).toEqual(throughSchema(record));
      expect(JSON.stringify(item)).toBe(JSON.stringify(throughSchema(record)));
      expect(rubricHash(item.rubric)).toBe(rubricHash(throughSchema(record).rubric));
    }
  });

  it('refuses what the schema refuses, with the schema\'s error', () => {
    const base = { id: 'q', prompt: 'P', response: 'R' };
    const refused: Array<Record<string, unknown>> = [
      { ...base, rubric: { criteria: [{ text: '   ' }] } },
      { ...base, rubric: { criteria: [] } },
      { ...base, rubric: { criteria: [{ text: 'x', points: Number.POSITIVE_INFINITY }] } },
      { ...base, rubric: { criteria: [{ text: 'x', tags: ['__proto__'] }] } },
      { ...base, rubric: { criteria: [{ text: 'x', kind: 'rule' }] } },
      { ...base, rubric: { criteria: [{ id: '', text: 'x' }] } },
      { ...base, rubric: { criteria: [{ id: 'a', text: 'x' }, { id: 'a', text: 'y' }] } },
      { ...base, tags: ['ok', 5], rubric: { criteria: [{ text: 'x' }] } },
      { ...base, id: '', rubric: { criteria: [{ text: 'x' }] } },
    ];
    for (const record of refused) {
      const error = errorOf(() => normalizeItem(record, { file: 'f.jsonl', line: 2 }));
      const reference = errorOf(() => throughSchema(record));
      expect(error.code).toBe('INPUT_INVALID');
      expect({ message: error.message, details: error.details }).toEqual({ message: reference.message, details: reference.details });
    }
  });
});
