import { describe, expect, it } from 'vitest';
import { runCheck, validateCheck } from './registry.js';

const context = { prompt: '', mode: 'strict' as const };
const passes = (spec: Record<string, unknown>, response: string) => runCheck(spec as { type: string }, response, context).passed;

describe('general checks', () => {
  it('regex: matches by default, mustMatch false inverts, flags apply', () => {
    expect(passes({ type: 'regex', pattern: '\\bID-\\d{4}\\b' }, 'Ticket ID-1234 opened')).toBe(true);
    expect(passes({ type: 'regex', pattern: 'password', flags: 'i', mustMatch: false }, 'No PASSWORD here')).toBe(false);
    expect(passes({ type: 'regex', pattern: '^end$', flags: 'm' }, 'start\nend\nmore')).toBe(true);
    expect(validateCheck({ type: 'regex', pattern: 'x', flags: 'g' }).ok).toBe(false);
  });

  it('contains: case-insensitive by default, all or any for lists', () => {
    expect(passes({ type: 'contains', text: 'Paris' }, 'I love PARIS.')).toBe(true);
    expect(passes({ type: 'contains', text: 'Paris', caseSensitive: true }, 'I love PARIS.')).toBe(false);
    expect(passes({ type: 'contains', text: ['red', 'blue'] }, 'red and green')).toBe(false);
    expect(passes({ type: 'contains', text: ['red', 'blue'], match: 'any' }, 'red and green')).toBe(true);
  });

  it('excludes: all listed texts absent by default, or at least one absent with any', () => {
    expect(passes({ type: 'excludes', text: ['lorem', 'ipsum'] }, 'Dolor sit amet')).toBe(true);
    expect(passes({ type: 'excludes', text: ['lorem', 'ipsum'] }, 'Lorem dolor')).toBe(false);
    expect(passes({ type: 'excludes', text: ['lorem', 'ipsum'], match: 'any' }, 'Lorem dolor')).toBe(true);
    expect(passes({ type: 'excludes', text: ['lorem', 'ipsum'], match: 'any' }, 'Lorem ipsum')).toBe(false);
  });

  it('count: words, sentences, paragraphs, characters and lines with each relation', () => {
    const text = 'First paragraph here. Still first!\n\nSecond paragraph.\n\n\nThird one';
    const count = (unit: string, relation: string, value: number) => passes({ type: 'count', unit, relation, value }, text);
    expect(count('paragraphs', 'exactly', 3)).toBe(true);
    expect(count('sentences', 'exactly', 4)).toBe(true);
    expect(count('words', 'exactly', 9)).toBe(true);
    expect(count('words', 'at_least', 10)).toBe(false);
    expect(count('words', 'at_most', 9)).toBe(true);
    expect(count('words', 'at_most', 8)).toBe(false);
    expect(count('lines', 'exactly', 3)).toBe(true);
    expect(passes({ type: 'count', unit: 'characters', relation: 'exactly', value: 3 }, 'a😀b')).toBe(true);
  });

  it('starts_with / ends_with: ignore surrounding whitespace, case-insensitive by default', () => {
    expect(passes({ type: 'starts_with', text: 'dear team' }, '\n  Dear Team,\nhello')).toBe(true);
    expect(passes({ type: 'starts_with', text: 'dear team', caseSensitive: true }, 'Dear Team,')).toBe(false);
    expect(passes({ type: 'ends_with', text: 'Best regards.' }, 'Thanks.\nbest regards.  \n')).toBe(true);
    expect(passes({ type: 'ends_with', text: 'Best regards.' }, 'Best regards. P.S. hi')).toBe(false);
  });

  it('json: plain or fenced JSON, optional schema validation', () => {
    expect(passes({ type: 'json' }, '{"a": 1}')).toBe(true);
    expect(passes({ type: 'json' }, '```json\n{"a": 1}\n```')).toBe(true);
    expect(passes({ type: 'json', allowFence: false }, '```json\n{"a": 1}\n```')).toBe(false);
    expect(passes({ type: 'json' }, '{"a": 1')).toBe(false);
    const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };
    expect(passes({ type: 'json', schema }, '{"name": "Ada"}')).toBe(true);
    const outcome = runCheck({ type: 'json', schema }, '{"name": 7}', context);
    expect(outcome.passed).toBe(false);
    expect(outcome.detail).toContain('/name');
  });

  it('json: an invalid schema is a CHECK_INVALID on the schema field', () => {
    const result = validateCheck({ type: 'json', schema: { type: 'not-a-type' } });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.details.field).toBe('schema');
  });

  it('language: ISO 639-1 code, zh matches either Chinese profile', () => {
    expect(passes({ type: 'language', language: 'es' }, 'Hoy vamos a la playa con nuestros amigos y comeremos paella.')).toBe(true);
    expect(passes({ type: 'language', language: 'en' }, 'Hoy vamos a la playa con nuestros amigos y comeremos paella.')).toBe(false);
    expect(passes({ type: 'language', language: 'zh' }, '今天天气很好，我们一起去公园散步吧。')).toBe(true);
    expect(passes({ type: 'language', language: 'en' }, '42 + 7')).toBe(false);
  });
});
