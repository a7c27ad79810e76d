import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { autojImporter } from './autoj.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { dataPath, haveData } from '../testing/data.js';
import { test } from '../testing/vitest-fixtures.js';

async function collect(source: string): Promise<PairwiseImportRecord[]> {
  const records: PairwiseImportRecord[] = [];
  for await (const record of autojImporter.read(source, {})) records.push(record);
  return records;
}

let file: string;

test.beforeAll(async ({ fileTempDir }) => {
  file = path.join(fileTempDir, 'autoj_pairwise.jsonl');
  const rows = [
    { scenario: 'chitchat', label: 0, prompt: 'Hi!', 'response 1': 'Hello!', 'response 2': '...' },
    { scenario: 'planning', label: 1, prompt: 'Plan a day.', 'response 1': 'No.', 'response 2': 'Morning: walk.' },
    { scenario: 'ranking', label: 2, prompt: 'Rank a, b.', 'response 1': 'a, b', 'response 2': 'a then b' },
    { scenario: 'ranking', label: 3, prompt: 'x', 'response 1': 'y', 'response 2': 'z' },
    { scenario: 'ranking', label: 0, prompt: 'x', 'response 1': 'y' },
  ];
  // A blank line and a broken line, as hand-edited files have.
  await writeFile(file, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n\n{"scenario": \n`);
});

describe('autojImporter (fixture)', () => {
  it('maps 0 → A, 1 → B, 2 → tie with the scenario as source', async () => {
    const records = await collect(file);
    expect(records[0]).toEqual({
      kind: 'pair',
      line: 1,
      pair: {
        id: 'autoj-1',
        prompt: [{ role: 'user', content: 'Hi!' }],
        responseA: 'Hello!',
        responseB: '...',
        label: 'A',
        source: 'chitchat',
        metadata: { dataset: 'autoj', line: 1 },
      },
    });
    const labels = records.flatMap((record) => (record.kind === 'pair' ? [[record.pair.label, record.pair.source]] : []));
    expect(labels).toEqual([
      ['A', 'chitchat'],
      ['B', 'planning'],
      ['tie', 'ranking'],
    ]);
  });

  it('reports bad labels, missing responses and broken JSON with their line', async () => {
    const records = await collect(file);
    const invalid = records.flatMap((record) => (record.kind === 'invalid' ? [record] : []));
    expect(invalid.map((record) => [record.line, record.error.details.field])).toEqual([
      [4, 'label'],
      [5, 'response 2'],
      [7, ''],
    ]);
    expect(invalid.every((record) => record.error.code === 'INPUT_INVALID' && record.error.details.file === file)).toBe(true);
  });
});

const realFile = dataPath('prometheus_eval_benchmarks/autoj_pairwise.jsonl');
if (!existsSync(realFile)) console.warn(`Auto-J real-data import test skipped: ${realFile} is absent`);

describe.skipIf(!haveData(realFile, 'src/formats/autoj.test.ts'))('autojImporter (real file)', () => {
  it('reads all 1392 pairs with the published label split', async () => {
    const records = await collect(realFile);
    expect(records).toHaveLength(1392);
    const counts = { A: 0, B: 0, tie: 0 };
    for (const record of records) if (record.kind === 'pair') counts[record.pair.label!] += 1;
    // SOURCES.md: labels 0/1/2 occur 520/499/373 times.
    expect(counts).toEqual({ A: 520, B: 499, tie: 373 });
  });
});
