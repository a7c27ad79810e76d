import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { JsonLinesWriter } from '../util/files.js';
import { rubricateVersion } from '../version.js';
import { fixtureLines } from './fixtures/graded-records.js';
import { readResults, toResultRecord, type ResultReadRecord } from './results.js';
import { normalizeItem } from '../rubric/normalize.js';
import { emptyUsage } from '../engine/usage.js';
import { weightedMeanScoring } from '../scoring/registry.js';

const fixture = join(import.meta.dirname, 'fixtures/results.jsonl');

async function readAll(file: string): Promise<ResultReadRecord[]> {
  const records: ResultReadRecord[] = [];
  for await (const record of readResults(file)) records.push(record);
  return records;
}

function linesFile(directory: string, name: string, lines: unknown[]): string {
  const file = join(directory, name);
  writeFileSync(file, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
  return file;
}

const okLine = { id: 'a', status: 'ok', score: 1, criteria: [{ id: 'c', text: 'T', points: 1, tags: [], kind: 'principle', source: 'judge', status: 'ok', met: true }], rubricate_version: '0.1.0' };

describe('the results line', () => {
  test('a results file read through the schema and written back is byte-identical', async ({ tempDir }) => {
    const records = await readAll(fixture);
    expect(records.map((record) => record.kind)).toEqual(['result', 'result', 'result', 'result', 'result']);
    const copy = join(tempDir, 'copy.jsonl');
    const writer = new JsonLinesWriter(copy);
    for (const record of records) if (record.kind === 'result') await writer.write(record.record);
    await writer.close();
    expect(readFileSync(copy, 'utf8')).toBe(readFileSync(fixture, 'utf8'));
  });

  test('the writer still writes the fixture byte for byte from the same graded records', () => {
    const expected = readFileSync(fixture, 'utf8').replaceAll('"rubricate_version":"0.1.0"', JSON.stringify({ rubricate_version: rubricateVersion }).slice(1, -1));
    expect(fixtureLines(toResultRecord).join('\n') + '\n').toBe(expected);
  });

  test('reads every field typed as written', async () => {
    const [full, failed, gated, invalid] = (await readAll(fixture)).map((record) => (record.kind === 'result' ? record.record : undefined));
    expect(full?.judge?.model).toBe('judge-model');
    expect(full?.criteria[0].votes?.map((vote) => vote.met)).toEqual([true, false]);
    expect(full?.criteria[1]).toMatchObject({ value: 0.5, label: 'fair' });
    expect(full?.criteria[4].subchecks?.map((subcheck) => subcheck.met)).toEqual([false, true]);
    expect(full?.usage?.batch?.calls).toBe(1);
    expect(failed?.error?.code).toBe('JUDGE_UNPARSEABLE');
    expect(gated).toMatchObject({ gated: true, score: 0 });
    expect(gated?.response).toBeUndefined();
    expect(gated?.criteria[1].skip_reason).toBe('gated');
    expect(invalid).toMatchObject({ id: 'broken', status: 'invalid', line: 5 });
  });

  test('fills what a foreign line may leave out, and keeps fields it does not know', async ({ tempDir }) => {
    const file = linesFile(tempDir, 'foreign.jsonl', [{ id: 'x', status: 'ok', extra: { kept: true }, criteria: [{ id: 'c', points: 2, status: 'ok', met: false }] }]);
    const [read] = await readAll(file);
    expect(read.kind).toBe('result');
    if (read.kind !== 'result') return;
    expect(read.record.score).toBeNull();
    expect(read.record.criteria[0]).toMatchObject({ tags: [], kind: 'principle', source: 'judge' });
    expect(read.record.extra).toEqual({ kept: true });
  });

  test('refuses lines that would be counted as something they are not, naming line and field', async ({ tempDir }) => {
    const criterion = okLine.criteria[0];
    const file = linesFile(tempDir, 'bad.jsonl', [
      okLine,
      { ...okLine, criteria: [{ ...criterion, met: null }] },
      { ...okLine, criteria: [{ ...criterion, value: 1.5 }] },
      { ...okLine, status: 'done' },
      { ...okLine, judge: { id: 'openai:x' } },
      { ...okLine, criteria: [{ ...criterion, votes: [{ judge: 'a', met: 'yes' }] }] },
      '{"id": "cut',
    ]);
    const records = await readAll(file);
    expect(records[0].kind).toBe('result');
    const errors = records.slice(1).map((record) => (record.kind === 'invalid' ? `${record.line} ${String(record.error.details.field)}` : 'accepted'));
    expect(errors).toEqual(['2 criteria[0].met', '3 criteria[0].value', '4 status', '5 judge.model', '6 criteria[0].votes[0].met', '7 undefined']);
  });

  test('a line of group judging carries its group after the tags, and reads back byte for byte', async ({ tempDir }) => {
    const item = normalizeItem({ id: 'q/1', prompt: 'p', response: 'r', tags: ['t'], rubric: { criteria: [{ id: 'c', text: 'T', points: 1 }] } });
    const criterion = item.rubric.criteria[0];
    const record = toResultRecord(
      {
        kind: 'graded',
        line: 2,
        graded: { item, status: 'ok', gated: false, usage: emptyUsage(), criteria: [{ criterion, source: 'judge', status: 'ok', verdict: { met: true, value: 1, source: 'judge' } }], group: { id: 'g1', members: 4, index: 1, positionConsistency: 0.75, bradleyTerry: null } },
      },
      { scoring: weightedMeanScoring },
    );
    expect(Object.keys(record).slice(0, 7)).toEqual(['id', 'status', 'score', 'criteria', 'rubricate_version', 'tags', 'group']);
    expect(record.group).toEqual({ id: 'g1', members: 4, index: 1, position_consistency: 0.75, bradley_terry: null });
    const file = linesFile(tempDir, 'group.jsonl', [record]);
    const [read] = await readAll(file);
    expect(read.kind === 'result' && JSON.stringify(read.record)).toBe(JSON.stringify(record));
  });
});
