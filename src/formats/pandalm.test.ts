import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pandalmImporter, pandalmMajority } from './pandalm.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { dataPath, haveData } from '../testing/data.js';
import { test } from '../testing/vitest-fixtures.js';

async function collect(source: string): Promise<PairwiseImportRecord[]> {
  const records: PairwiseImportRecord[] = [];
  for await (const record of pandalmImporter.read(source, {})) records.push(record);
  return records;
}

const row = (idx: number, votes: [unknown, unknown, unknown], extra: Record<string, unknown> = {}) => ({
  idx,
  motivation_app: 'Grammarly',
  cmp_key: 'model-a_model-b',
  instruction: 'Fix the grammar.',
  input: idx % 2 === 0 ? 'he go home' : '',
  response1: 'He goes home.',
  response2: 'He go home.',
  annotator1: votes[0],
  annotator2: votes[1],
  annotator3: votes[2],
  ...extra,
});

let directory: string;
let file: string;

test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  file = path.join(directory, 'testset.json');
  await writeFile(
    file,
    JSON.stringify([
      row(0, [1, 1, 1]),
      row(1, [2, 1, 2]),
      row(2, [0, 0, 1]),
      row(3, [0, 1, 2]),
      row(4, [1, 3, 1]),
      row(5, [1, 1, 1], { response2: true }),
      row(6, [1, 1, 1], { response1: ['not', 'text'] }),
    ]),
  );
});

describe('pandalmMajority', () => {
  it.each([
    [[1, 1, 1], 'A', 'majority'],
    [[2, 1, 2], 'B', 'majority'],
    [[0, 0, 2], 'tie', 'majority'],
    [[1, 2, 0], 'tie', 'three-way split'],
  ] as const)('%j → %s (%s)', (votes, label, rule) => {
    expect(pandalmMajority(votes)).toEqual({ label, rule });
  });
});

describe('pandalmImporter (fixture)', () => {
  it('joins instruction and input into the prompt and labels by majority', async () => {
    const records = await collect(file);
    const pairs = records.flatMap((record) => (record.kind === 'pair' ? [record.pair] : []));
    expect(pairs[0]).toEqual({
      id: 'pandalm-0',
      prompt: [{ role: 'user', content: 'Fix the grammar.\n\nhe go home' }],
      responseA: 'He goes home.',
      responseB: 'He go home.',
      label: 'A',
      source: 'Grammarly',
      metadata: {
        dataset: 'pandalm',
        record: 1,
        idx: 0,
        comparedModels: 'model-a_model-b',
        instruction: 'Fix the grammar.',
        input: 'he go home',
        annotators: [1, 1, 1],
        labelRule: 'majority',
      },
    });
    expect(pairs[1].prompt[0].content).toBe('Fix the grammar.');
    expect(pairs.map((pair) => pair.label)).toEqual(['A', 'B', 'tie', 'tie', 'A']);
    expect(pairs[3].metadata?.labelRule).toBe('three-way split');
  });

  it('restores boolean responses as the words Python would print, and flags them', async () => {
    const records = await collect(file);
    const coerced = records.find((record) => record.kind === 'pair' && record.pair.id === 'pandalm-5');
    expect(coerced).toMatchObject({ pair: { responseB: 'True', metadata: { coercedResponses: ['response2'] } } });
  });

  it('rejects bad votes and non-text responses with the record number and field', async () => {
    const records = await collect(file);
    const invalid = records.flatMap((record) => (record.kind === 'invalid' ? [record] : []));
    expect(invalid.map((record) => [record.line, record.error.details.field, record.id])).toEqual([
      [5, 'annotator2', 'pandalm-4'],
      [7, 'response1', 'pandalm-6'],
    ]);
    expect(invalid[0].error.code).toBe('INPUT_INVALID');
    expect(invalid[0].error.details.file).toBe(file);
  });
});

const realFile = dataPath('pandalm/testset-v1.json');
if (!existsSync(realFile)) console.warn(`PandaLM real-data import test skipped: ${realFile} is absent`);

describe.skipIf(!haveData(realFile, 'src/formats/pandalm.test.ts'))('pandalmImporter (real test set)', () => {
  it('reads all 999 pairs with majority labels', async () => {
    const records = await collect(realFile);
    expect(records).toHaveLength(999);
    const pairs = records.flatMap((record) => (record.kind === 'pair' ? [record.pair] : []));
    expect(pairs).toHaveLength(999);
    const counts = { A: 0, B: 0, tie: 0 };
    for (const pair of pairs) counts[pair.label!] += 1;
    // Majority-of-three counts over the published annotations (no three-way splits occur).
    expect(counts).toEqual({ A: 422, B: 472, tie: 105 });
    expect(pairs.filter((pair) => pair.metadata?.coercedResponses).length).toBe(6);
  });
});
