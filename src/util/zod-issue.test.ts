import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { fieldPath, zodIssueError } from './zod-issue.js';

const failure = (schema: z.ZodType, value: unknown): z.ZodError => {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('expected the value to be refused');
  return parsed.error;
};

const settings = z.strictObject({ plan: z.strictObject({ rows: z.array(z.object({ n: z.number() })) }) });

describe('zodIssueError', () => {
  it('names the first issue by its path, dotted or indexed, with the caller wording around it', () => {
    const error = failure(settings, { plan: { rows: [{ n: 1 }, { n: 'two' }] } });
    const plain = zodIssueError(error);
    expect(plain).toBeInstanceOf(RubricateError);
    expect(plain.code).toBe('INPUT_INVALID');
    expect(plain.message).toBe('Invalid input: expected number, received string');
    expect(plain.details).toEqual({ field: 'plan.rows.1.n' });
    const worded = zodIssueError(error, { code: 'CONFIG_INVALID', prefix: 'spec: ', suffix: ' (see the docs)', pathInMessage: true, indexed: true, under: ['run'], details: { file: 'a.json', line: 3 } });
    expect(worded.code).toBe('CONFIG_INVALID');
    expect(worded.message).toBe('spec: run.plan.rows[1].n: Invalid input: expected number, received string (see the docs)');
    expect(worded.details).toEqual({ file: 'a.json', line: 3, field: 'run.plan.rows[1].n' });
    expect(zodIssueError(error, { field: 'step' }).details).toEqual({ field: 'step' });
  });

  it('says which keys are not settings, as a list or by the first key as the field', () => {
    const error = failure(settings, { plan: { rows: [], extra: 1, more: 2 } });
    expect(zodIssueError(error, { unknownKeys: 'list' }).message).toBe('not a setting (extra, more)');
    const first = zodIssueError(error, { prefix: 'plan: ', pathInMessage: true, unknownKeys: 'first' });
    expect(first.message).toBe('plan: plan.extra: not a setting');
    expect(first.details).toEqual({ field: 'plan.extra' });
  });

  it('an issue without a path: no field, an empty or a fallback one, as the caller asks', () => {
    const error = failure(z.strictObject({}), { stray: true });
    expect(Object.keys(zodIssueError(error, { unknownKeys: 'list', omitEmptyField: true }).details)).toEqual([]);
    expect(zodIssueError(error, { unknownKeys: 'list', fieldWhenEmpty: '' }).details).toEqual({ field: '' });
    expect(zodIssueError(error, { fieldWhenEmpty: 'calibration' }).details).toEqual({ field: 'calibration' });
    expect(Object.keys(zodIssueError(error).details)).toEqual(['field']);
  });

  it('a record: the closest shape of a union, wrong types in plain words, the further problems counted', () => {
    const item = z.object({ prompt: z.union([z.string(), z.array(z.object({ role: z.string(), content: z.string() }))]), id: z.string() });
    const error = failure(item, { prompt: [{ role: 'user', content: 3 }] });
    const record = zodIssueError(error, { record: true, indexed: true, under: ['rubric'], details: { file: 'items.jsonl', line: 2 } });
    expect(record.message).toBe('expected string, got number (and 1 more problem)');
    expect(record.details).toEqual({ file: 'items.jsonl', line: 2, field: 'rubric.prompt[0].content' });
    expect(zodIssueError(failure(item, { prompt: 'hi' }), { record: true }).message).toBe('missing required field (expected string)');
  });

  it('fieldPath writes positions as the field paths of error messages do', () => {
    expect(fieldPath(['criteria', 0, 'id'])).toBe('criteria[0].id');
    expect(fieldPath([0, 'content'])).toBe('[0].content');
    expect(fieldPath(['criteria', 0, 'id'], false)).toBe('criteria.0.id');
  });
});
