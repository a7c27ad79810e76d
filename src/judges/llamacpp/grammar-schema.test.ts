import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toGrammarJsonSchema } from './grammar-schema.js';

describe('toGrammarJsonSchema', () => {
  it('keeps the verdict schema and drops what the grammar generator misreads', () => {
    const schema = z.toJSONSchema(z.object({ explanation: z.string(), criteria_met: z.boolean() }));
    expect(schema.$schema).toBeDefined();
    expect(schema.additionalProperties).toBe(false);
    expect(toGrammarJsonSchema(schema)).toEqual({
      type: 'object',
      properties: { explanation: { type: 'string' }, criteria_met: { type: 'boolean' } },
      required: ['explanation', 'criteria_met'],
    });
  });

  it('turns anyOf (zod unions and nullable objects) into oneOf and keeps type lists', () => {
    const schema = z.toJSONSchema(
      z.object({ score: z.number().nullable(), detail: z.object({ note: z.string() }).nullable(), label: z.union([z.literal('yes'), z.literal('no')]) }),
    );
    const converted = toGrammarJsonSchema(schema) as { properties: Record<string, unknown> };
    expect(converted.properties.score).toEqual({ type: ['number', 'null'] });
    expect(converted.properties.detail).toEqual({ oneOf: [{ type: 'object', properties: { note: { type: 'string' } }, required: ['note'] }, { type: 'null' }] });
    expect(converted.properties.label).toEqual({ oneOf: [{ const: 'yes' }, { const: 'no' }] });
  });

  it('keeps enums and only the string formats the generator supports', () => {
    const schema = z.toJSONSchema(z.object({ grade: z.enum(['A', 'B']), when: z.iso.date(), contact: z.email(), note: z.string().min(2).max(5) }));
    const converted = toGrammarJsonSchema(schema) as { properties: Record<string, Record<string, unknown>> };
    expect(converted.properties.grade).toEqual({ enum: ['A', 'B'] });
    expect(converted.properties.when).toEqual({ type: 'string', format: 'date' });
    // An unsupported format would force the empty string, so it becomes a plain string.
    expect(converted.properties.contact).toEqual({ type: 'string' });
    expect(converted.properties.note).toEqual({ type: 'string', minLength: 2, maxLength: 5 });
  });

  it('makes "any value" schemas explicit instead of letting them collapse to null', () => {
    const converted = toGrammarJsonSchema({ type: 'object', properties: { anything: {}, extra: true } }) as { properties: Record<string, { oneOf?: unknown[] }> };
    expect(converted.properties.anything.oneOf).toHaveLength(3);
    expect(converted.properties.extra.oneOf).toHaveLength(3);
    const record = toGrammarJsonSchema(z.toJSONSchema(z.record(z.string(), z.number())));
    expect(record).toMatchObject({ type: 'object', additionalProperties: { type: 'number' } });
  });

  it('rewrites draft-07 references, merges allOf and splits mixed container types', () => {
    const converted = toGrammarJsonSchema({
      definitions: { item: { type: 'integer', minimum: 0 } },
      allOf: [{ type: 'object', properties: { a: { $ref: '#/definitions/item' } }, required: ['a'] }, { properties: { b: { type: ['object', 'null'], properties: { c: { type: 'string' } } } }, required: ['b'] }],
    });
    expect(converted).toEqual({
      $defs: { item: { type: 'integer' } },
      type: 'object',
      properties: {
        a: { $ref: '#/$defs/item' },
        b: { oneOf: [{ type: 'object', properties: { c: { type: 'string' } } }, { type: 'null' }] },
      },
      required: ['a', 'b'],
    });
  });

  it('closes tuples and leaves the input untouched', () => {
    const schema = z.toJSONSchema(z.tuple([z.string(), z.number()]));
    const before = JSON.stringify(schema);
    const converted = toGrammarJsonSchema(schema);
    expect(converted).toMatchObject({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] });
    expect(JSON.stringify(schema)).toBe(before);
  });
});
