import { describe, expect, it } from 'vitest';
import { checkCatalogue, renderCheckCatalogue, resolveProposedCheck } from './check-catalogue.js';
import { buildRubric, convertCriteria, importanceOf, readCriteriaAnswer } from './criteria.js';
import { defaultImportancePoints, parseImportancePoints } from './importance.js';

const criterion = (text: string, importance = 'Important', kind = 'principle', check: unknown = null) => ({ text, importance, kind, check });

describe('parseImportancePoints', () => {
  it('overrides the levels given and keeps the rest', () => {
    expect(parseImportancePoints('Essential=10, pitfall=-5')).toEqual({ Essential: 10, Important: 3, Optional: 1, Pitfall: -5 });
  });

  it('refuses unknown levels, bad syntax and signs that would flip the meaning of "met"', () => {
    expect(() => parseImportancePoints('Critical=4')).toThrow(/unknown level "Critical"/);
    expect(() => parseImportancePoints('Essential:4')).toThrow(/LEVEL=NUMBER/);
    expect(() => parseImportancePoints('Pitfall=2')).toThrow(/Pitfall must be negative/);
    expect(() => parseImportancePoints('Optional=0')).toThrow(/Optional must be positive/);
  });
});

describe('readCriteriaAnswer', () => {
  const bounds = { minItems: 2, maxItems: 3 };

  it('accepts a schema-valid answer, tolerating case in enums', () => {
    const read = readCriteriaAnswer({ criteria: [criterion('A.', 'essential', 'Hard_Rule'), criterion('B.', 'Pitfall')] }, bounds);
    expect(read.ok).toBe(true);
    if (read.ok) expect(read.value.map((entry) => [entry.importance, entry.kind, entry.check])).toEqual([['Essential', 'hard_rule', null], ['Pitfall', 'principle', null]]);
  });

  it('rejects answers that break the schema, naming the field', () => {
    const wrongLevel = readCriteriaAnswer({ criteria: [criterion('A.', 'Critical'), criterion('B.')] }, bounds);
    expect(wrongLevel).toMatchObject({ ok: false });
    if (!wrongLevel.ok) expect(wrongLevel.reason).toMatch(/criteria\.0\.importance/);
    const empty = readCriteriaAnswer({ criteria: [criterion('  '), criterion('B.')] }, bounds);
    if (!empty.ok) expect(empty.reason).toMatch(/criteria\.0\.text: criterion text is empty/);
    expect(empty.ok).toBe(false);
    expect(readCriteriaAnswer({ rubric: [] }, bounds).ok).toBe(false);
    expect(readCriteriaAnswer([criterion('A.')], bounds).ok).toBe(false);
  });

  it('drops exact duplicates before counting against the bounds', () => {
    const read = readCriteriaAnswer({ criteria: [criterion('Same thing.'), criterion('same  THING')] }, bounds);
    expect(read).toEqual({ ok: false, reason: 'answer has 1 distinct criteria; at least 2 are required' });
    const tooMany = readCriteriaAnswer({ criteria: ['A', 'B', 'C', 'D'].map((text) => criterion(text)) }, bounds);
    expect(tooMany).toEqual({ ok: false, reason: 'answer has 4 criteria; at most 3 are allowed' });
  });
});

describe('convertCriteria', () => {
  it('maps importance to points and a tag, and keeps checks the registry accepts', () => {
    const generated = [
      { text: 'The response has at most 120 words.', importance: 'Essential' as const, kind: 'principle' as const, check: { type: 'count', parameters_json: '{"unit":"words","relation":"at_most","value":120}' } },
      { text: 'The response explains scattering.', importance: 'Important' as const, kind: 'principle' as const, check: null },
      { text: 'The response claims the sky reflects the sea.', importance: 'Pitfall' as const, kind: 'hard_rule' as const, check: null },
      { text: 'Optional flourish.', importance: 'Optional' as const, kind: 'principle' as const, check: null },
    ];
    const conversion = convertCriteria(generated, { importancePoints: defaultImportancePoints });
    expect(conversion.criteria.map((entry) => entry.points)).toEqual([5, 3, -2, 1]);
    expect(conversion.criteria[0]).toMatchObject({ kind: 'hard_rule', check: { type: 'count', unit: 'words', relation: 'at_most', value: 120 }, tags: ['importance:essential'] });
    // A Pitfall can never gate an item: its "met" is the bad outcome.
    expect(conversion.criteria[2].kind).toBe('principle');
    expect(conversion.checks).toEqual({ proposed: 1, kept: 1, rejected: 0 });
    expect(conversion.warnings).toEqual([]);
  });

  it('keeps a criterion whose check is invalid as a judged hard rule, with a warning', () => {
    const conversion = convertCriteria(
      [
        { text: 'Uses no commas.', importance: 'Essential', kind: 'principle', check: { type: 'no_such_check', parameters_json: '{}' } },
        { text: 'Under 50 words.', importance: 'Important', kind: 'hard_rule', check: { type: 'count', parameters_json: '{"unit":"words"}' } },
        { text: 'Says hello.', importance: 'Important', kind: 'hard_rule', check: { type: 'contains', parameters_json: 'not json' } },
        { text: 'Uses the word "awesome".', importance: 'Pitfall', kind: 'principle', check: { type: 'contains', parameters_json: '{"text":"awesome"}' } },
      ],
      { importancePoints: defaultImportancePoints },
    );
    expect(conversion.criteria.map((entry) => entry.check)).toEqual([undefined, undefined, undefined, undefined]);
    expect(conversion.criteria.slice(0, 3).map((entry) => entry.kind)).toEqual(['hard_rule', 'hard_rule', 'hard_rule']);
    expect(conversion.checks).toEqual({ proposed: 4, kept: 0, rejected: 4 });
    expect(conversion.warnings).toHaveLength(4);
    expect(conversion.warnings[0]).toMatch(/unknown check type "no_such_check"/);
    expect(conversion.warnings[1]).toMatch(/parameter "relation"/);
    expect(conversion.warnings[2]).toMatch(/not valid JSON/);
    expect(conversion.warnings[3]).toMatch(/Pitfalls are judged/);
  });

  it('builds a normalised rubric with ids derived from the text', () => {
    const built = buildRubric([{ text: 'A.', importance: 'Essential', kind: 'principle', check: null }], { importancePoints: defaultImportancePoints, gate: true, metadata: { generation: { prompt_version: 'generate/v1' } } });
    expect(built.rubric.id).toMatch(/^r_[0-9a-f]{12}$/);
    expect(built.rubric.criteria[0].id).toMatch(/^c_[0-9a-f]{10}$/);
    expect(built.rubric.gate).toBe('hard_rules');
    expect(built.rubric.metadata).toEqual({ generation: { prompt_version: 'generate/v1' } });
  });
});

describe('importanceOf', () => {
  it('reads the declared level, else the tag, else the nearest points', () => {
    expect(importanceOf({ points: 1, tags: [], metadata: { importance: 'Essential' } }, defaultImportancePoints)).toBe('Essential');
    expect(importanceOf({ points: 1, tags: ['importance:optional'] }, defaultImportancePoints)).toBe('Optional');
    expect(importanceOf({ points: 4.5, tags: [] }, defaultImportancePoints)).toBe('Essential');
    expect(importanceOf({ points: -10, tags: [] }, defaultImportancePoints)).toBe('Pitfall');
  });
});

describe('check catalogue', () => {
  it('lists every registered check with its parameter names, from the zod schemas', () => {
    const catalogue = checkCatalogue();
    const count = catalogue.find((entry) => entry.type === 'count');
    expect(count?.parameters.map((parameter) => parameter.name)).toEqual(['unit', 'relation', 'value']);
    expect(count?.parameters[0].type).toContain('"words"');
    const words = catalogue.find((entry) => entry.type === 'length_constraints:number_words');
    expect(words?.parameters.map((parameter) => [parameter.name, parameter.required])).toEqual([['num_words', true], ['relation', true]]);
    const rendered = renderCheckCatalogue(catalogue);
    expect(rendered).toContain('- regex: ');
    expect(rendered).toMatch(/flags\? \(string\)/);
    expect(rendered.split('\n')).toHaveLength(catalogue.length);
  });

  it('resolves parameters given as a JSON string or an object, and reports the registry error otherwise', () => {
    expect(resolveProposedCheck({ type: 'starts_with', parameters_json: '{"text": "Dear"}' })).toEqual({ ok: true, check: { type: 'starts_with', text: 'Dear' } });
    expect(resolveProposedCheck({ type: 'starts_with', parameters: { text: 'Dear' } })).toEqual({ ok: true, check: { type: 'starts_with', text: 'Dear' } });
    expect(resolveProposedCheck({ type: 'punctuation:no_comma', parameters_json: '' })).toEqual({ ok: true, check: { type: 'punctuation:no_comma' } });
    const bad = resolveProposedCheck({ type: 'starts_with', parameters_json: '["Dear"]' });
    expect(bad).toEqual({ ok: false, reason: 'check "starts_with": parameters must be a JSON object' });
    const unknownParameter = resolveProposedCheck({ type: 'starts_with', parameters_json: '{"text": "Dear", "colour": "red"}' });
    expect(unknownParameter.ok).toBe(false);
  });
});
