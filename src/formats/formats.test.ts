import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeRubric } from '../rubric/normalize.js';
import { getItemImporter, itemImporters } from './index.js';
import type { ImportOptions } from './types.js';
import type { ImportRecord } from '../rubric/records.js';
import { dataDirectory, haveData } from '../testing/data.js';
import { test } from '../testing/vitest-fixtures.js';

const fixtures = resolve(__dirname, 'fixtures');
const data = dataDirectory();
const haveSharedData = haveData(data, 'real-data importer tests (src/formats/formats.test.ts)');
if (!haveSharedData) console.warn(`skipping importer tests on real data: ${data} not found`);

/** Where `writeResponses` puts its files: the file's shared temporary folder. */
let responsesDirectory: string;
test.beforeAll(({ fileTempDir }) => {
  responsesDirectory = fileTempDir;
});

async function collect(format: string, file: string, options: ImportOptions = {}): Promise<{ items: Extract<ImportRecord, { kind: 'item' }>[]; invalid: Extract<ImportRecord, { kind: 'invalid' }>[]; warnings: string[] }> {
  const warnings: string[] = [];
  const items: Extract<ImportRecord, { kind: 'item' }>[] = [];
  const invalid: Extract<ImportRecord, { kind: 'invalid' }>[] = [];
  for await (const record of getItemImporter(format).read(file, { ...options, onWarning: (message) => warnings.push(message) })) {
    if (record.kind === 'item') items.push(record);
    else invalid.push(record);
  }
  return { items, invalid, warnings };
}

describe('importer registry', () => {
  it('registers every item format by name and refuses unknown ones', () => {
    expect(itemImporters.names()).toEqual(expect.arrayContaining(['items', 'healthbench', 'researchrubrics', 'rar', 'rubrichub', 'drb2', 'advancedif', 'biggen']));
    expect(() => getItemImporter('nope')).toThrow(/unknown input format "nope"/);
  });
});

describe('items', () => {
  it('streams valid items and reports bad lines with file, line and field', async () => {
    const rubrics = new Map([['greeting', normalizeRubric({ id: 'greeting', criteria: [{ text: 'Greets back' }] })]]);
    const file = join(fixtures, 'items.jsonl');
    const { items, invalid } = await collect('items', file, { rubrics });
    expect(items.map((record) => record.item.id)).toEqual(['a', 'b']);
    expect(items[1].item.rubric.id).toBe('greeting');
    expect(items[0].item.rubric.criteria[1].id).toBe('rude');
    expect(invalid.map((record) => [record.line, record.error.details.field])).toEqual([
      [3, undefined],
      [4, 'response'],
      [5, 'rubric.criteria'],
    ]);
    expect(invalid[0].error.message).toMatch(/not valid JSON/);
    expect(invalid.every((record) => record.error.details.file === file)).toBe(true);
  });
});

describe('healthbench', () => {
  const examples = join(fixtures, 'healthbench-examples.jsonl');
  it('joins responses by prompt_id (several per prompt) and keeps tags and points', async () => {
    const { items, invalid, warnings } = await collect('healthbench', examples, { responses: join(fixtures, 'healthbench-responses.jsonl') });
    expect(items.map((record) => record.item.id)).toEqual(['p1', 'p2#1', 'p2#2']);
    expect(items[0].item.tags).toEqual(['theme:communication']);
    expect(items[0].item.rubric.criteria.map((criterion) => criterion.points)).toEqual([6, -8]);
    expect(items[0].item.rubric.criteria[0].tags).toEqual(['level:example', 'axis:completeness']);
    expect(invalid.map((record) => [record.line, record.error.details.field])).toEqual([
      [3, 'rubrics[0].points'],
      [4, undefined],
    ]);
    expect(warnings.join()).toMatch(/1 response line\(s\).*match no example/);
  });

  it('grades ideal completions with --response-from ideal, skipping examples without one', async () => {
    const { items, warnings } = await collect('healthbench', examples, { responseFrom: 'ideal' });
    expect(items.map((record) => [record.item.id, record.item.response])).toEqual([['p1', 'Acetaminophen 500 mg is usually fine.']]);
    expect(warnings.join()).toMatch(/1 example\(s\).*no ideal completion/);
  });

  it('needs a source of responses', async () => {
    await expect(collect('healthbench', examples)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it.skipIf(!haveSharedData)('reads the 100 real examples (1,157 rubric items, 342 negative)', async () => {
    const file = join(data, 'healthbench/oss_eval_first100.jsonl');
    const ids = readFileSync(file, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { prompt_id: string }).prompt_id);
    const responses = writeResponses(ids.map((id) => ({ prompt_id: id, response: 'ok' })));
    const { items, invalid } = await collect('healthbench', file, { responses });
    expect(invalid).toEqual([]);
    expect(items).toHaveLength(100);
    const criteria = items.flatMap((record) => record.item.rubric.criteria);
    expect(criteria).toHaveLength(1157);
    expect(criteria.filter((criterion) => criterion.points < 0)).toHaveLength(342);
  });
});

describe('researchrubrics', () => {
  it('keeps signed weights, axes and the ternary scale', async () => {
    const { items } = await collect('researchrubrics', join(fixtures, 'researchrubrics.jsonl'), { responses: writeResponses([{ sample_id: 's1', response: 'Plants use light.' }]) });
    const [criterion, penalty] = items[0].item.rubric.criteria;
    expect(criterion).toMatchObject({ text: 'Mentions chlorophyll', points: 5, tags: ['axis:Explicit Criteria'] });
    expect(criterion.scale).toMatchObject({ type: 'ordinal', metThreshold: 1 });
    expect(penalty.points).toBe(-3);
  });

  it.skipIf(!haveSharedData)('reads the real 100-row sample, every weight kept with its sign', async () => {
    const file = join(data, 'researchrubrics/researchrubrics-sample-100.jsonl');
    const { items, invalid } = await collect('researchrubrics', file, { responses: writeResponses(readIds(file, 'sample_id').map((id) => ({ sample_id: id, response: 'r' }))) });
    expect(invalid).toEqual([]);
    const weights = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .flatMap((line) => (JSON.parse(line) as { rubrics: Array<{ weight: number }> }).rubrics.map((rubricItem) => rubricItem.weight));
    const criteria = items.flatMap((record) => record.item.rubric.criteria);
    expect(criteria.map((criterion) => criterion.points)).toEqual(weights);
    expect(criteria.length).toBeGreaterThan(2500);
    expect(criteria.filter((criterion) => criterion.points < 0).length).toBeGreaterThan(300);
  });
});

describe('advancedif', () => {
  it('decodes JSON inside JSON strings and names the bad field', async () => {
    const { items, invalid } = await collect('advancedif', join(fixtures, 'advancedif.jsonl'));
    expect(items).toHaveLength(1);
    expect(items[0].item.response).toBe('*silence*');
    expect(items[0].item.prompt).toHaveLength(3);
    expect(items[0].item.rubric.criteria.map((criterion) => criterion.text)).toEqual(['Did the model stay silent?', 'Did the model avoid answering?']);
    expect(invalid[0].error.details).toMatchObject({ line: 2, field: 'conversation_history' });
  });

  it.skipIf(!haveSharedData)('reads all 30 real rows', async () => {
    const { items, invalid } = await collect('advancedif', join(data, 'advancedif/sample_data.jsonl'));
    expect(invalid).toEqual([]);
    expect(items).toHaveLength(30);
  });
});

describe('biggen', () => {
  it('keeps the 1–5 rubric as one ordinal criterion and the reference answer', async () => {
    const { items } = await collect('biggen', join(fixtures, 'biggen.json'), { responses: writeResponses([{ id: 'planning_trip_0', response: 'See the Colosseum.' }]) });
    const { item } = items[0];
    expect(item.reference).toBe('Colosseum, lunch, Vatican.');
    expect(item.prompt[0]).toEqual({ role: 'system', content: 'You are a travel agent.' });
    const scale = item.rubric.criteria[0].scale;
    expect(scale?.type === 'ordinal' && scale.choices.map((choice) => choice.label)).toEqual(['1', '2', '3', '4', '5']);
    expect(item.tags).toEqual(['capability:planning', 'task:trip']);
  });

  it.skipIf(!haveSharedData)('reads all 765 real instances', async () => {
    const { items, invalid } = await collect('biggen', join(data, 'biggen_bench/sample_responses.json'));
    expect(invalid).toEqual([]);
    expect(items).toHaveLength(765);
  });
});

describe('drb2', () => {
  it('one three-way criterion (blocked / not satisfied / satisfied) per rubric string, tagged by dimension', async () => {
    const { items } = await collect('drb2', join(fixtures, 'drb2.jsonl'), { responses: writeResponses([{ id: 'task1', response: 'Report.' }]) });
    expect(items[0].item.rubric.criteria.map((criterion) => criterion.tags[0])).toEqual(['dimension:info_recall', 'dimension:analysis', 'dimension:presentation']);
    const scale = items[0].item.rubric.criteria[0].scale;
    expect(scale?.type === 'ordinal' && scale.choices.map((choice) => [choice.label, choice.value])).toEqual([
      ['blocked', 0],
      ['not satisfied', 0],
      ['satisfied', 1],
    ]);
  });

  it.skipIf(!haveSharedData)('reads the 132 real tasks (9,415 criteria)', async () => {
    const file = join(data, 'deepresearch_bench_ii/tasks_and_rubrics.jsonl');
    const { items, invalid } = await collect('drb2', file, { responses: writeResponses(readIds(file, 'id').map((id) => ({ id, response: 'r' }))) });
    expect(invalid).toEqual([]);
    expect(items).toHaveLength(132);
    expect(items.reduce((total, record) => total + record.item.rubric.criteria.length, 0)).toBeGreaterThan(9000);
  });
});

describe('rar', () => {
  it('reads question, reference and importance tags', async () => {
    const { items } = await collect('rar', join(fixtures, 'rar.jsonl'), { responses: writeResponses([{ id: 'q1', response: 'Lack of vitamin C.' }]) });
    expect(items[0].item.reference).toBe('Vitamin C deficiency.');
    expect(items[0].item.rubric.criteria.map((criterion) => [criterion.points, criterion.tags])).toEqual([
      [5, ['importance:essential']],
      [-2, ['importance:pitfall']],
    ]);
  });
});

describe('rubrichub', () => {
  it('rule verifiers without a matching check fall back to the judge, with a warning', async () => {
    const { items, warnings } = await collect('rubrichub', join(fixtures, 'rubrichub.jsonl'), { responses: writeResponses([{ id: 'Instruction_Following-1', response: 'paris' }]) });
    expect(items[0].item.rubric.criteria.map((criterion) => criterion.kind)).toEqual(['hard_rule', 'principle']);
    expect(items[0].item.prompt[0].content).toMatch(/capital of France/);
    if (!items[0].item.rubric.criteria[0].check) expect(warnings.join()).toMatch(/no matching deterministic check/);
  });

  it.skipIf(!haveSharedData)('reads the real samples', async () => {
    const file = join(data, 'rubrichub/rurl-medical-sample-100.jsonl');
    const ids = readFileSync(file, 'utf8').trim().split('\n').map((_, index) => `Medical-${index + 1}`);
    const { items, invalid } = await collect('rubrichub', file, { responses: writeResponses(ids.map((id) => ({ id, response: 'r' }))) });
    expect(invalid).toEqual([]);
    expect(items).toHaveLength(100);
  });
});

let responsesWritten = 0;

/** A responses file of these lines (a new file each call). */
function writeResponses(lines: object[]): string {
  responsesWritten += 1;
  const file = join(responsesDirectory, `responses-${responsesWritten}.jsonl`);
  writeFileSync(file, lines.map((line) => JSON.stringify(line)).join('\n'));
  return file;
}

function readIds(file: string, field: string): string[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => String((JSON.parse(line) as Record<string, unknown>)[field]));
}
