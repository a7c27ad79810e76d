import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgebenchImporter } from './judgebench.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { dataPath, haveData } from '../testing/data.js';
import { test } from '../testing/vitest-fixtures.js';

async function collect(source: string): Promise<PairwiseImportRecord[]> {
  const records: PairwiseImportRecord[] = [];
  for await (const record of judgebenchImporter.read(source, {})) records.push(record);
  return records;
}

let directory: string;
let file: string;

test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  file = path.join(directory, 'pairs.jsonl');
  const base = { original_id: 7, question: 'What is 2 + 2?', response_model: 'model-x', response_A: '4', response_B: '5' };
  const rows = [
    { pair_id: 'p1', source: 'livebench-math', label: 'A>B', ...base },
    { pair_id: 'p2', source: 'mmlu-pro-law', label: 'B>A', ...base },
    { pair_id: 'p3', source: 'mmlu-pro-law', label: 'A=B', ...base },
    { pair_id: 'p3b', source: 'mmlu-pro-law', label: 'A>>B', ...base },
    { pair_id: 'p4', source: 'mmlu-pro-law', label: 'A>B', ...base, response_B: null },
    { pair_id: 'p5', label: 'A>B', ...base },
  ];
  await writeFile(file, rows.map((row) => JSON.stringify(row)).join('\n'));
});

describe('judgebenchImporter (fixture)', () => {
  it('reads pairs with A>B → A, B>A → B and the source field', async () => {
    const records = await collect(file);
    expect(records[0]).toEqual({
      kind: 'pair',
      line: 1,
      pair: {
        id: 'p1',
        prompt: [{ role: 'user', content: 'What is 2 + 2?' }],
        responseA: '4',
        responseB: '5',
        label: 'A',
        source: 'livebench-math',
        metadata: { dataset: 'judgebench', line: 1, originalId: 7, responseModel: 'model-x' },
      },
    });
    expect(records[1]).toMatchObject({ kind: 'pair', pair: { id: 'p2', label: 'B', source: 'mmlu-pro-law' } });
    expect(records[2]).toMatchObject({ kind: 'pair', pair: { id: 'p3', label: 'tie' } });
  });

  it('rejects rows without a valid label, response or source, keeping the pair id', async () => {
    const records = await collect(file);
    const invalid = records.flatMap((record) => (record.kind === 'invalid' ? [record] : []));
    expect(invalid.map((record) => [record.line, record.id, record.error.details.field])).toEqual([
      [4, 'p3b', 'label'],
      [5, 'p4', 'response_B'],
      [6, 'p5', 'source'],
    ]);
    expect(invalid[0].error.code).toBe('INPUT_INVALID');
  });
});

const realFile = dataPath('judgebench/judgebench_gpt-4o-2024-05-13.jsonl');
if (!existsSync(realFile)) console.warn(`JudgeBench real-data import test skipped: ${realFile} is absent`);

describe.skipIf(!haveData(realFile, 'src/formats/judgebench.test.ts'))('judgebenchImporter (real file)', () => {
  it('reads all 350 GPT-4o pairs with sources from the four JudgeBench families', async () => {
    const records = await collect(realFile);
    expect(records).toHaveLength(350);
    const pairs = records.flatMap((record) => (record.kind === 'pair' ? [record.pair] : []));
    expect(pairs).toHaveLength(350);
    expect(new Set(pairs.map((pair) => pair.id)).size).toBe(350);
    expect(pairs.every((pair) => /^(mmlu-pro|livebench-reasoning|livebench-math|livecodebench)/.test(pair.source!))).toBe(true);
    expect(new Set(pairs.map((pair) => pair.label))).toEqual(new Set(['A', 'B']));
  });
});
