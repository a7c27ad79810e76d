import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { readPreferencePairs } from '../generation/contrastive.js';
import { test } from '../testing/vitest-fixtures.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { pairsImporter } from './pairs.js';

async function read(file: string) {
  const warnings: string[] = [];
  const records: PairwiseImportRecord[] = [];
  for await (const record of pairsImporter.read(file, { onWarning: (message) => warnings.push(message) })) records.push(record);
  return { records, warnings };
}

const prompt = 'Name a prime number between 10 and 20.';

describe('--format pairs: one shape for compare, meta and generate', () => {
  test('{prompt, chosen, rejected} is the older spelling of the same pair, named once per file', async ({ tempDir }) => {
    const current = join(tempDir, 'current.jsonl');
    writeFileSync(current, [{ id: 'p1', prompt, response_a: '13', response_b: '15', label: 'A' }, { id: 'p2', prompt, response_a: '14', response_b: '17', label: 'B' }].map((line) => JSON.stringify(line)).join('\n'));
    const older = join(tempDir, 'older.jsonl');
    writeFileSync(older, [{ id: 'p1', prompt, chosen: '13', rejected: '15' }, { id: 'p2', prompt, chosen: '17', rejected: '14' }].map((line) => JSON.stringify(line)).join('\n'));

    const fromCurrent = await read(current);
    expect(fromCurrent.warnings).toEqual([]);
    const fromOlder = await read(older);
    expect(fromOlder.warnings).toHaveLength(1);
    expect(fromOlder.warnings[0]).toContain('{chosen, rejected} is the older spelling of --format pairs');
    expect(fromOlder.records.map((record) => record.kind === 'pair' && [record.pair.id, record.pair.responseA, record.pair.responseB, record.pair.label])).toEqual([
      ['p1', '13', '15', 'A'],
      ['p2', '17', '14', 'A'],
    ]);
    // generate reads both files as the same preference pairs (the gold winner is chosen).
    const pairsOf = async (file: string) => (await readPreferencePairs(file, 'pairs')).pairs.map(({ id, chosen, rejected }) => ({ id, chosen, rejected }));
    expect(await pairsOf(current)).toEqual([{ id: 'p1', chosen: '13', rejected: '15' }, { id: 'p2', chosen: '17', rejected: '14' }]);
    expect(await pairsOf(older)).toEqual(await pairsOf(current));
  });

  test('a pair without an id is named by its line; a pair missing a response is invalid, naming the field', async ({ tempDir }) => {
    const file = join(tempDir, 'pairs.jsonl');
    writeFileSync(file, `${JSON.stringify({ prompt, response_a: '13', response_b: '15' })}\n${JSON.stringify({ id: 'x', prompt, response_a: '13' })}\n`);
    const { records } = await read(file);
    expect(records[0]).toMatchObject({ kind: 'pair', pair: { id: 'pair-1' } });
    expect(records[1]).toMatchObject({ kind: 'invalid', line: 2 });
    expect(records[1].kind === 'invalid' && records[1].error.details.field).toBe('response_b');
  });
});
