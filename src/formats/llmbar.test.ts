import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { llmbarImporter } from './llmbar.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { dataPath, haveData } from '../testing/data.js';
import { test } from '../testing/vitest-fixtures.js';

async function collect(source: string): Promise<PairwiseImportRecord[]> {
  const records: PairwiseImportRecord[] = [];
  for await (const record of llmbarImporter.read(source, {})) records.push(record);
  return records;
}

let directory: string;
let naturalFile: string;

test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  const natural = path.join(directory, 'Dataset', 'LLMBar', 'Natural');
  const manual = path.join(directory, 'Dataset', 'LLMBar', 'Adversarial', 'Manual');
  await mkdir(path.join(natural, 'evaluators', 'Judge', 'Vanilla'), { recursive: true });
  await mkdir(manual, { recursive: true });
  naturalFile = path.join(natural, 'dataset.json');
  await writeFile(
    naturalFile,
    JSON.stringify([
      { input: 'Name a colour.', output_1: 'Blue.', output_2: 'Seven.', label: 1 },
      { input: 'Count to two.', output_1: 'One.', output_2: 'One, two.', label: 2 },
      { input: 'Bad label.', output_1: 'x', output_2: 'y', label: 0 },
      { input: 'Missing output.', output_1: 'x', label: 1 },
    ]),
  );
  await writeFile(path.join(manual, 'dataset.json'), JSON.stringify([{ input: 'Tricky.', output_1: '', output_2: 'z', label: 2 }]));
  // A judge's result file must not be read as a dataset.
  await writeFile(path.join(natural, 'evaluators', 'Judge', 'Vanilla', 'dataset.json'), JSON.stringify([{ input: 'no' }]));
});

describe('llmbarImporter (fixture)', () => {
  it('reads rows into pairs with labels and the subset as source', async () => {
    const records = await collect(naturalFile);
    expect(records[0]).toEqual({
      kind: 'pair',
      line: 1,
      pair: {
        id: 'LLMBar/Natural/1',
        prompt: [{ role: 'user', content: 'Name a colour.' }],
        responseA: 'Blue.',
        responseB: 'Seven.',
        label: 'A',
        source: 'LLMBar/Natural',
        metadata: { dataset: 'llmbar', record: 1 },
      },
    });
    expect(records[1]).toMatchObject({ kind: 'pair', pair: { label: 'B', responseB: 'One, two.' } });
  });

  it('turns bad rows into INPUT_INVALID records naming file, record and field', async () => {
    const records = await collect(naturalFile);
    const invalid = records.filter((record) => record.kind === 'invalid');
    expect(invalid.map((record) => [record.line, record.kind === 'invalid' && record.error.details.field])).toEqual([
      [3, 'label'],
      [4, 'output_2'],
    ]);
    for (const record of invalid) {
      if (record.kind !== 'invalid') continue;
      expect(record.error.code).toBe('INPUT_INVALID');
      expect(record.error.details.file).toBe(naturalFile);
      expect(record.error.details.line).toBe(record.line);
    }
  });

  it('reads every dataset.json under a folder, skipping evaluators', async () => {
    const records = await collect(path.join(directory, 'Dataset'));
    const pairs = records.flatMap((record) => (record.kind === 'pair' ? [record.pair] : []));
    expect(pairs.map((pair) => pair.source)).toEqual(['LLMBar/Adversarial/Manual', 'LLMBar/Natural', 'LLMBar/Natural']);
    expect(pairs[0].responseA).toBe('');
    expect(records).toHaveLength(5);
  });

  it('fails clearly on a missing path or a file that is not an array', async () => {
    await expect(collect(path.join(directory, 'missing.json'))).rejects.toMatchObject({ code: 'INPUT_INVALID' });
    const objectFile = path.join(directory, 'object.json');
    await writeFile(objectFile, '{"input": "x"}');
    await expect(collect(objectFile)).rejects.toMatchObject({ code: 'INPUT_INVALID', details: { file: objectFile } });
  });
});

const realFolder = dataPath('llmbar');
if (!existsSync(realFolder)) console.warn(`LLMBar real-data import test skipped: ${realFolder} is absent`);

describe.skipIf(!haveData(realFolder, 'src/formats/llmbar.test.ts'))('llmbarImporter (real LLMBar data)', () => {
  it('reads the Natural set: 100 valid pairs with both labels', async () => {
    const records = await collect(path.join(realFolder, 'LLMBar', 'Natural', 'dataset.json'));
    expect(records).toHaveLength(100);
    expect(records.every((record) => record.kind === 'pair' && record.pair.source === 'LLMBar/Natural')).toBe(true);
    const labels = new Set(records.map((record) => record.kind === 'pair' && record.pair.label));
    expect(labels).toEqual(new Set(['A', 'B']));
  });

  it('reads every subset of the folder without errors', async () => {
    const records = await collect(realFolder);
    expect(records.some((record) => record.kind === 'invalid')).toBe(false);
    const sources = new Set(records.map((record) => record.kind === 'pair' && record.pair.source));
    expect(sources.has('LLMBar/Adversarial/GPTInst')).toBe(true);
    expect(sources.has('Processed/MT-Bench')).toBe(true);
  });
});
