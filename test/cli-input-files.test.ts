/**
 * Input files as users get them wrong or in other shapes: a file of the wrong type gets one
 * diagnosis naming it and what it looks like (exit 2, nothing written) instead of an error per
 * line; CSV exports are read; `convert` writes rubric-only items that `grade --responses` grades.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { dataPath, haveData } from '../src/testing/data.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const examples = resolve(projectRoot, 'examples');
const itemLines = readFileSync(join(examples, 'items.jsonl'), 'utf8').trim().split('\n');
const items = itemLines.map((line) => JSON.parse(line) as Record<string, unknown>);

function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('error [') || line.startsWith('invalid input'));
}

describe('a file of the wrong type gets one diagnosis', { timeout: hangGuard(120_000) }, () => {
  const cases: Array<{ name: string; file: string; contents: string | Buffer; format?: string; flag?: 'input' | 'responses'; looksLike: RegExp }> = [
    { name: 'a JSON array where JSONL is expected', file: 'items.jsonl', contents: JSON.stringify(items, null, 2), looksLike: /expected JSONL \(one JSON object per line\), but this looks like a JSON array \(one JSON document\); turn it into JSONL with: jq -c '\.\[\]'/ },
    { name: 'a JSON array on one line', file: 'items.jsonl', contents: JSON.stringify(items), looksLike: /looks like a JSON array/ },
    { name: 'a pretty-printed JSON object', file: 'examples.jsonl', format: 'healthbench', contents: JSON.stringify({ examples: items }, null, 2), looksLike: /looks like one pretty-printed JSON document/ },
    { name: 'a CSV export named .jsonl', file: 'items.jsonl', contents: readFileSync(join(examples, 'items.csv')), looksLike: /looks like a CSV file with columns id, prompt, response, rubric, tags; name it \.csv/ },
    { name: 'a gzip-compressed JSONL', file: 'items.jsonl.gz', contents: gzipSync(itemLines.join('\n')), looksLike: /looks like a gzip-compressed file: decompress it first/ },
    { name: 'an SQLite database (the cache)', file: 'cache.sqlite', contents: Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4000, 1)]), looksLike: /looks like an SQLite database/ },
    { name: 'a binary file', file: 'blob.jsonl', contents: Buffer.from(Array.from({ length: 3000 }, (_, index) => (index * 37) % 256)), looksLike: /looks like a binary file/ },
    { name: 'prose', file: 'notes.jsonl', contents: 'These are my notes\nabout the rubric\nand more notes\n', looksLike: /looks like text that is not JSON \(none of its first 3 lines is; line 1: “These are my notes”\)/ },
    { name: 'JSONL where one JSON document is expected', file: 'instances.json', format: 'biggen', contents: itemLines.join('\n'), looksLike: /expected one JSON document, but this looks like JSONL \(one JSON object per line\); turn it into a JSON array with: jq -s \./ },
    { name: 'a JSON array given as the responses file', file: 'responses.jsonl', format: 'healthbench', flag: 'responses', contents: JSON.stringify([{ prompt_id: 'hb-fever', response: 'x' }], null, 2), looksLike: /looks like a JSON array/ },
  ];

  test.for(cases.map((testCase) => [testCase.name, testCase] as const))('%s', async ([, testCase], { tempDir }) => {
    const file = join(tempDir, testCase.file);
    writeFileSync(file, testCase.contents);
    const format = testCase.format ?? 'items';
    const inputs =
      testCase.flag === 'responses'
        ? ['--input', join(examples, 'healthbench/examples.jsonl'), '--responses', file]
        : ['--input', file, ...(format === 'healthbench' ? ['--response-from', 'ideal'] : []), ...(format === 'biggen' ? ['--responses', join(examples, 'biggen/responses.jsonl')] : [])];
    const out = join(tempDir, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--format', format, ...inputs, '--judge', 'none', '--quiet', '--out', out]);
    expect(result.code, result.stderr).toBe(2);
    const errors = errorLines(result.stderr);
    expect(errors).toHaveLength(1);
    expect(errors[0].startsWith(`error [INPUT_WRONG_TYPE]: ${file}: `)).toBe(true);
    expect(errors[0]).toMatch(testCase.looksLike);
    expect(existsSync(out)).toBe(false);
  });

  test('a JSONL file with some bad lines is still JSONL: each bad line is reported and the rest graded', async ({ tempDir }) => {
    const file = join(tempDir, 'items.jsonl');
    writeFileSync(file, [itemLines[0], 'id,prompt,response', '[1, 2]', itemLines[1]].join('\n'));
    const result = await runCliInProcess(['grade', '--input', file, '--judge', 'none', '--quiet', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code).toBe(3);
    expect(errorLines(result.stderr).map((line) => /:(\d+): /.exec(line)?.[1])).toEqual(['2', '3']);
  });
});

describe('CSV and rubric-only inputs', { timeout: hangGuard(120_000) }, () => {
  test('convert writes the ResearchRubrics CSV (Python-literal rubrics) as the JSONL gives it, rubric-only', async ({ tempDir }) => {
    const fromCsv = join(tempDir, 'from-csv.jsonl');
    const fromJsonl = join(tempDir, 'from-jsonl.jsonl');
    const csv = await runCliInProcess(['convert', '--format', 'researchrubrics', '--input', join(examples, 'researchrubrics/tasks.csv'), '--out', fromCsv]);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stderr).toMatch(/wrote 2 records .*\n2 of them have a rubric but no response: grade them with rubricate grade --format items --input .* --responses FILE/);
    expect((await runCliInProcess(['convert', '--format', 'researchrubrics', '--input', join(examples, 'researchrubrics/tasks.jsonl'), '--out', fromJsonl])).code).toBe(0);
    expect(readFileSync(fromCsv, 'utf8')).toBe(readFileSync(fromJsonl, 'utf8'));
    const converted = readFileSync(fromCsv, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; response?: string; rubric: { criteria: Array<{ text: string; points: number }> } });
    expect(converted.map((item) => [item.id, 'response' in item, item.rubric.criteria.length])).toEqual([['rr-1', false, 4], ['rr-2', false, 2]]);
    expect(converted[0].rubric.criteria[3]).toMatchObject({ text: 'Invents regulation numbers', points: -4 });
  });

  test('rubric-only items from convert are graded with --responses, and refused without', async ({ tempDir, fakeJudge }) => {
    const converted = join(tempDir, 'hb-items.jsonl');
    expect((await runCliInProcess(['convert', '--format', 'healthbench', '--input', join(examples, 'healthbench/examples.jsonl'), '--out', converted])).code).toBe(0);
    const responses = join(tempDir, 'responses.jsonl');
    writeFileSync(responses, [{ id: 'hb-fever', response: 'A low-grade fever: rest and fluids.' }, { id: 'hb-cough', response: 'Watch for fast breathing.' }].map((line) => JSON.stringify(line)).join('\n'));
    const judge = ['--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--no-cache', '--quiet'];
    const out = join(tempDir, 'out.jsonl');
    const graded = await runCliInProcess(['grade', '--input', converted, '--responses', responses, ...judge, '--out', out]);
    expect(graded.code, graded.stderr).toBe(0);
    const results = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; status: string; response: string });
    expect(results.map((result) => [result.id, result.status, result.response])).toEqual([
      ['hb-fever', 'ok', 'A low-grade fever: rest and fluids.'],
      ['hb-cough', 'ok', 'Watch for fast breathing.'],
    ]);
    const refused = await runCliInProcess(['grade', '--input', converted, ...judge, '--out', join(tempDir, 'refused.jsonl')]);
    expect(refused.code).toBe(3);
    expect(errorLines(refused.stderr)).toHaveLength(2);
    expect(refused.stderr).toMatch(/hb-items\.jsonl:1 field response: record has no response: give --responses FILE/);
  });

  const realCsv = dataPath('researchrubrics/researchrubrics-sample-100.csv');
  const realJsonl = dataPath('researchrubrics/researchrubrics-sample-100.jsonl');
  test.skipIf(!haveData(realCsv, 'test/cli-input-files.test.ts') || !haveData(realJsonl, 'test/cli-input-files.test.ts'))(
    'the published ResearchRubrics CSV converts to the same 100 items as its JSONL',
    async ({ tempDir }) => {
      const fromCsv = join(tempDir, 'csv.jsonl');
      const fromJsonl = join(tempDir, 'jsonl.jsonl');
      expect((await runCliInProcess(['convert', '--format', 'researchrubrics', '--input', realCsv, '--out', fromCsv])).code).toBe(0);
      expect((await runCliInProcess(['convert', '--format', 'researchrubrics', '--input', realJsonl, '--out', fromJsonl])).code).toBe(0);
      const lines = readFileSync(fromCsv, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(100);
      expect(readFileSync(fromCsv, 'utf8')).toBe(readFileSync(fromJsonl, 'utf8'));
    },
  );
});
