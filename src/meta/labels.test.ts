import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { indexLabels, loadLabels, parseLabelLine, readLabels } from './labels.js';
import { test } from '../testing/vitest-fixtures.js';

let directory: string;

test.beforeAll(({ fileTempDir }) => {
  directory = fileTempDir;
});

async function file(name: string, lines: string[]): Promise<string> {
  const target = path.join(directory, name);
  await writeFile(target, `${lines.join('\n')}\n`);
  return target;
}

describe('readLabels', () => {
  it('reads both line shapes, numeric ids and several raters', async () => {
    const labels = await file('good.jsonl', [
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: true }),
      JSON.stringify({ id: 7, criterion_id: 3, label: [true, false, true] }),
      '',
      JSON.stringify({ id: 'b', labels: { c1: false, c2: [false, false] } }),
    ]);
    const records = [];
    for await (const record of readLabels(labels)) records.push(record);
    expect(records).toEqual([
      { kind: 'label', label: { id: 'a', criterionId: 'c1', labels: [true], line: 1 } },
      { kind: 'label', label: { id: '7', criterionId: '3', labels: [true, false, true], line: 2 } },
      { kind: 'label', label: { id: 'b', criterionId: 'c1', labels: [false], line: 4 } },
      { kind: 'label', label: { id: 'b', criterionId: 'c2', labels: [false, false], line: 4 } },
    ]);
  });

  it('reports each bad line with its file, line and field, and goes on', async () => {
    const labels = await file('bad.jsonl', [
      '{not json',
      JSON.stringify({ criterion_id: 'c1', label: true }),
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: 'yes' }),
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: [true, 1] }),
      JSON.stringify({ id: 'a', label: true }),
      JSON.stringify({ id: 'a', labels: { c1: true, c2: null } }),
      JSON.stringify({ id: 'a', labels: {} }),
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: true, labels: { c2: true } }),
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: [] }),
      JSON.stringify({ id: 'a' }),
      '[1, 2]',
      JSON.stringify({ id: 'ok', criterion_id: 'c9', label: false }),
    ]);
    const invalid: Array<{ line: number; field: unknown; message: string }> = [];
    const good = [];
    for await (const record of readLabels(labels)) {
      if (record.kind === 'invalid') {
        expect(record.error).toBeInstanceOf(RubricateError);
        expect(record.error.code).toBe('INPUT_INVALID');
        expect(record.error.details.file).toBe(labels);
        invalid.push({ line: record.line, field: record.error.details.field, message: record.error.message });
      } else good.push(record.label);
    }
    expect(invalid.map((entry) => [entry.line, entry.field])).toEqual([
      [1, undefined],
      [2, 'id'],
      [3, 'label'],
      [4, 'label[1]'],
      [5, 'criterion_id'],
      [6, 'labels.c2'],
      [7, 'labels'],
      [8, 'labels'],
      [9, 'label'],
      [10, 'label'],
      [11, ''],
    ]);
    expect(invalid[0].message).toMatch(/not valid JSON/);
    expect(good).toEqual([{ id: 'ok', criterionId: 'c9', labels: [false], line: 12 }]);
  });

  it('reads cannot_assess as a rater apart from met / not met, and keeps reviewer, time and note', async () => {
    const labels = await file('review.jsonl', [
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: 'cannot_assess', reviewer: 'ana', time: '2025-03-01T12:00:00Z', note: 'the answer is cut off' }),
      JSON.stringify({ id: 'a', labels: { c2: [true, 'cannot_assess'], c3: false }, reviewer: 'bo', time: '2025-03-02' }),
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: true, reviewer: '' }),
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: true, time: 'yesterday' }),
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: true, note: 3 }),
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: 'unsure' }),
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: [true, 'unsure'] }),
    ]);
    const records = [];
    for await (const record of readLabels(labels)) records.push(record.kind === 'label' ? record.label : [record.line, record.error.details.field]);
    expect(records).toEqual([
      { id: 'a', criterionId: 'c1', labels: [], cannotAssess: 1, reviewer: 'ana', time: '2025-03-01T12:00:00Z', note: 'the answer is cut off', line: 1 },
      { id: 'a', criterionId: 'c2', labels: [true], cannotAssess: 1, reviewer: 'bo', time: '2025-03-02', line: 2 },
      { id: 'a', criterionId: 'c3', labels: [false], reviewer: 'bo', time: '2025-03-02', line: 2 },
      [3, 'reviewer'],
      [4, 'time'],
      [5, 'note'],
      [6, 'label'],
      [7, 'label[1]'],
    ]);
    const index = await loadLabels(labels);
    expect(index.byItem.get('a')).toEqual(
      new Map([
        ['c2', [true]],
        ['c3', [false]],
      ]),
    );
    expect(index.cannotAssess.get('a')).toEqual(
      new Map([
        ['c1', 1],
        ['c2', 1],
      ]),
    );
    expect(index).toMatchObject({ pairs: 2, ratings: 2, cannotAssessRatings: 2, pooled: 0 });
    expect(index.notes.get('a')).toEqual(new Map([['c1', ['the answer is cut off']]]));
  });

  it('fails clearly on a missing file', async () => {
    await expect(loadLabels(path.join(directory, 'missing.jsonl'))).rejects.toMatchObject({ code: 'INPUT_UNREADABLE', message: 'file not found' });
  });
});

describe('loadLabels', () => {
  it('indexes by item and criterion, pools repeated pairs as extra raters, and collects bad lines', async () => {
    const labels = await file('pooled.jsonl', [
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: true }),
      JSON.stringify({ id: 'a', criterion_id: 'c1', label: false }),
      JSON.stringify({ id: 'a', labels: { c2: [true, true] } }),
      'oops',
    ]);
    const heard: number[] = [];
    const index = await loadLabels(labels, { onInvalid: (error) => heard.push(error.details.line as number) });
    expect(index.byItem.get('a')).toEqual(
      new Map([
        ['c1', [true, false]],
        ['c2', [true, true]],
      ]),
    );
    expect(index).toMatchObject({ pairs: 2, ratings: 4, pooled: 1 });
    expect(index.invalid).toHaveLength(1);
    expect(heard).toEqual([4]);
  });

  it('indexLabels builds the same index from memory', () => {
    const parsed = parseLabelLine({ id: 'x', labels: { c: [true, false] } }, { line: 1 });
    expect(parsed).not.toBeInstanceOf(RubricateError);
    const index = indexLabels(parsed as Exclude<typeof parsed, RubricateError>);
    expect(index.byItem.get('x')?.get('c')).toEqual([true, false]);
    expect(index.ratings).toBe(2);
  });
});
