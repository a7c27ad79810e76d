import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCheck } from '../checks/registry.js';
import { RubricateError } from '../errors.js';
import { ifevalImporter } from './ifeval.js';
import type { ImportRecord } from '../rubric/records.js';
import { dataPath, haveData } from '../testing/data.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const inputFile = path.join(fixtures, 'ifeval-input.jsonl');
const responsesFile = path.join(fixtures, 'ifeval-responses.jsonl');

async function readAll(source: string, responses: string): Promise<ImportRecord[]> {
  const records: ImportRecord[] = [];
  for await (const record of ifevalImporter.read(source, { responses })) records.push(record);
  return records;
}

describe('ifeval importer (fixture)', () => {
  it('turns each prompt into an item with one hard-rule criterion per instruction', async () => {
    const records = await readAll(inputFile, responsesFile);
    const items = records.flatMap((record) => (record.kind === 'item' ? [record.item] : []));
    expect(items.map((item) => item.id)).toEqual(['11', '12']);

    const [sunrise, french] = items;
    expect(sunrise.prompt).toEqual([{ role: 'user', content: expect.stringContaining('Describe a sunrise') }]);
    expect(sunrise.response).toContain('Soft light');
    expect(sunrise.rubric.criteria.map((criterion) => criterion.id)).toEqual([
      'punctuation:no_comma',
      'keywords:frequency',
      'keywords:frequency#2',
    ]);
    const third = sunrise.rubric.criteria[2];
    expect(third).toMatchObject({
      kind: 'hard_rule',
      points: 1,
      tags: ['instruction:keywords:frequency', 'instruction_group:keywords'],
      // The null kwarg is dropped from the check.
      check: { type: 'keywords:frequency', relation: 'less than', keyword: 'sky', frequency: 3 },
      text: 'The word "sky" should appear fewer than 3 times.',
    });
    expect(third.check).not.toHaveProperty('num_words');

    // The criteria decide the item: no commas, "light" twice, "sky" once.
    const context = { prompt: sunrise.prompt[0].content, mode: 'strict' as const };
    expect(sunrise.rubric.criteria.map((criterion) => runCheck(criterion.check!, sunrise.response, context).passed)).toEqual([
      true,
      true,
      true,
    ]);
    // Joined by key rather than by prompt text.
    expect(french.response).toContain("l'automne");
  });

  it('reports each bad line as an invalid record naming file, line and field, and carries on', async () => {
    const records = await readAll(inputFile, responsesFile);
    const invalid = records.flatMap((record) => (record.kind === 'invalid' ? [record] : []));
    const summary = invalid.map((record) => ({
      file: path.basename(record.error.details.file ?? ''),
      line: record.line,
      field: record.error.details.field,
      id: record.id,
    }));
    expect(summary).toEqual([
      { file: 'ifeval-responses.jsonl', line: 4, field: 'prompt', id: undefined },
      { file: 'ifeval-input.jsonl', line: 3, field: 'instruction_id_list[0]', id: '13' },
      { file: 'ifeval-input.jsonl', line: 4, field: undefined, id: undefined },
      { file: 'ifeval-input.jsonl', line: 5, field: 'response', id: '15' },
      { file: 'ifeval-input.jsonl', line: 7, field: 'kwargs[0].relation', id: '16' },
      { file: 'ifeval-input.jsonl', line: 8, field: 'kwargs', id: '17' },
    ]);
    for (const record of invalid) {
      expect(record.error).toBeInstanceOf(RubricateError);
      expect(record.error.code).toBe('INPUT_INVALID');
    }
    expect(invalid[1].error.message).toContain('detectable_format:haiku');
    expect(invalid[2].error.message).toContain('not valid JSON');
  });

  it('needs a responses file', async () => {
    await expect(readAll(inputFile, '')).rejects.toMatchObject({ code: 'CONFIG_INVALID', details: { field: 'responses' } });
  });

  it('reports a missing responses file as INPUT_UNREADABLE naming it', async () => {
    const missing = path.join(fixtures, 'no-such-file.jsonl');
    await expect(readAll(inputFile, missing)).rejects.toMatchObject({ code: 'INPUT_UNREADABLE', details: { file: missing } });
  });
});

const dataFolder = dataPath('ifeval');
const realInput = path.join(dataFolder, 'input_data.jsonl');
const realResponses = path.join(dataFolder, 'input_response_data_gpt4_20231107_145030.jsonl');
const realAvailable = haveData(realInput, 'ifeval importer (src/formats/ifeval.test.ts)') && haveData(realResponses, 'ifeval importer (src/formats/ifeval.test.ts)');
if (!realAvailable) console.log(`ifeval importer real-data test skipped: ${dataFolder} not found`);

describe.skipIf(!realAvailable)('ifeval importer (IFEval data)', () => {
  it('imports all 541 prompts with their 834 instructions and no invalid record', async () => {
    const records = await readAll(realInput, realResponses);
    expect(records.filter((record) => record.kind === 'invalid')).toEqual([]);
    expect(records).toHaveLength(541);
    const criteria = records.flatMap((record) => (record.kind === 'item' ? record.item.rubric.criteria : []));
    expect(criteria).toHaveLength(834);
    expect(new Set(criteria.map((criterion) => criterion.check!.type)).size).toBe(25);
    expect(criteria.every((criterion) => criterion.text.length > 0 && !criterion.text.includes('\n'))).toBe(true);
  });
});
