/**
 * The progress bar's total is the number of results lines the run writes, for every input
 * format: a JSON document (BiGGen, τ-bench) is counted in records, not lines; a CSV row that
 * spans lines counts once; a join counts responses; HealthBench's ideal completions count only
 * the examples that have one; a shard counts its share.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { getItemImporter } from '../formats/index.js';
import type { ImportOptions } from '../formats/types.js';
import { dataPath, haveData } from '../testing/data.js';
import { test } from '../testing/vitest-fixtures.js';
import { countInputRecords } from './input-count.js';
import { runCli } from './main.js';
import { shardOf } from './queue-options.js';
import { hangGuard } from '../testing/hang-guard.js';

const examples = resolve(__dirname, '../../examples');

interface Case {
  format: string;
  input: string;
  options?: ImportOptions;
  shard?: { index: number; count: number };
}

const cases: Case[] = [
  { format: 'items', input: join(examples, 'items.jsonl') },
  { format: 'items', input: join(examples, 'items.csv') },
  { format: 'items', input: join(examples, 'rubric-only/items.jsonl'), options: { responses: join(examples, 'rubric-only/responses.jsonl') } },
  { format: 'items', input: join(examples, 'items.jsonl'), shard: { index: 1, count: 2 } },
  { format: 'healthbench', input: join(examples, 'healthbench/examples.jsonl'), options: { responses: join(examples, 'healthbench/responses.jsonl') } },
  { format: 'healthbench', input: join(examples, 'healthbench/examples.jsonl'), options: { responseFrom: 'ideal' } },
  { format: 'researchrubrics', input: join(examples, 'researchrubrics/tasks.csv'), options: { responses: join(examples, 'researchrubrics/responses.jsonl') } },
  { format: 'biggen', input: join(examples, 'biggen/instances.json'), options: { responses: join(examples, 'biggen/responses.jsonl') } },
  { format: 'tau-bench', input: join(examples, 'tau-bench/trajectories.json') },
  { format: 'profbench', input: join(examples, 'profbench/reports.jsonl') },
  { format: 'ifeval', input: join(examples, 'ifeval/input_data.jsonl'), options: { responses: join(examples, 'ifeval/responses.jsonl') } },
];

function count(testCase: Case): Promise<number> {
  const importer = getItemImporter(testCase.format);
  return countInputRecords({
    format: testCase.format,
    input: testCase.input,
    responses: testCase.options?.responses,
    shard: testCase.shard,
    read: () => shardOf(importer.read(testCase.input, testCase.options ?? {}), testCase.shard),
  });
}

function flagsOf(testCase: Case): string[] {
  return [
    ...(testCase.options?.responses ? ['--responses', testCase.options.responses] : []),
    ...(testCase.options?.responseFrom ? ['--response-from', testCase.options.responseFrom] : []),
    ...(testCase.shard ? ['--shard', `${testCase.shard.index}/${testCase.shard.count}`] : []),
  ];
}

describe('the progress total', { timeout: hangGuard(120_000) }, () => {
  const named = (testCase: Case) => [testCase.format, ...[testCase.input, ...flagsOf(testCase)].map((part) => part.replace(`${examples}/`, 'examples/'))].join(' ');
  test.for(cases.map((testCase) => [named(testCase), testCase] as const))(
    'equals the results lines of %s',
    async ([, testCase], { tempDir }) => {
      const out = join(tempDir, 'out.jsonl');
      const code = await runCli(['grade', '--format', testCase.format, '--input', testCase.input, ...flagsOf(testCase), '--judge', 'none', '--quiet', '--out', out], {
        stdout: () => undefined,
        stderr: () => undefined,
        signal: new AbortController().signal,
      });
      expect([0, 3]).toContain(code);
      const written = readFileSync(out, 'utf8').trim().split('\n').filter((line) => line !== '').length;
      expect(written).toBeGreaterThan(0);
      expect(await count(testCase)).toBe(written);
    },
  );

  test('counts a CSV row that spans lines once, and a pretty-printed JSON document by its records', async ({ tempDir }) => {
    const csv = join(tempDir, 'items.csv');
    writeFileSync(csv, 'id,prompt,response,rubric\nq1,"Line one\nline two\nline three","An answer\nover lines","{""criteria"": [{""text"": ""t""}]}"\n');
    expect(await count({ format: 'items', input: csv })).toBe(1);
    const json = readFileSync(join(examples, 'biggen/instances.json'), 'utf8');
    expect(json.split('\n').length).toBeGreaterThan(20);
    expect(await count({ format: 'biggen', input: join(examples, 'biggen/instances.json'), options: { responses: join(examples, 'biggen/responses.jsonl') } })).toBe(2);
  });

  const biggen = dataPath('biggen_bench/sample_responses.json');
  test.skipIf(!haveData(biggen, 'src/cli/input-count.test.ts'))('counts the 765 instances of the published BiGGen-Bench file (14,537 lines)', async () => {
    expect(await count({ format: 'biggen', input: biggen })).toBe(765);
  });
});
