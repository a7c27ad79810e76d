import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { describe, expect } from 'vitest';
import { applyBenchmark, addBenchmarkOption } from '../cli/benchmark-options.js';
import { itemImporters } from '../formats/index.js';
import { getScoring } from '../scoring/registry.js';
import { test } from '../testing/vitest-fixtures.js';
import { benchmarkDataFile, benchmarkPacks, findBenchmark, packSettings } from './benchmark-packs.js';

const projectRoot = resolve(import.meta.dirname, '../..');
const dataSources = JSON.parse(readFileSync(join(projectRoot, 'scripts/data-sources.json'), 'utf8')) as { files: Array<{ file: string }> };

describe('benchmark packs', () => {
  test('each names a registered importer and scoring, and a file data:fetch fetches is in its list', () => {
    const fetchable = new Set(dataSources.files.map((entry) => entry.file));
    for (const pack of benchmarkPacks.values()) {
      expect(itemImporters.has(pack.format), pack.name).toBe(true);
      expect(getScoring(pack.scoring).name).toBe(pack.scoring);
      for (const file of [...pack.files, ...Object.values(pack.subsets ?? {}).flat()]) {
        if (file.fetch === true) expect(fetchable.has(file.path), file.path).toBe(true);
      }
    }
  });

  test('a pack and a subset resolve to the first of their files present in RUBRICATE_DATA_DIR', ({ tempDir }) => {
    const environment = { RUBRICATE_DATA_DIR: tempDir };
    mkdirSync(join(tempDir, 'healthbench'));
    writeFileSync(join(tempDir, 'healthbench/oss_eval_first100.jsonl'), '');
    const whole = findBenchmark('healthbench', environment);
    expect(whole.file).toBe(join(tempDir, 'healthbench/oss_eval_first100.jsonl'));
    expect(whole.candidate?.sample).toMatch(/first 100/);
    // The full file, once present, comes first.
    writeFileSync(join(tempDir, 'healthbench/2025-05-07-06-14-12_oss_eval.jsonl'), '');
    expect(findBenchmark('healthbench', environment).file).toBe(join(tempDir, 'healthbench/2025-05-07-06-14-12_oss_eval.jsonl'));
    writeFileSync(join(tempDir, 'healthbench/context_seeking_consensus_hard_104.jsonl'), '');
    const consensus = findBenchmark('healthbench:consensus', environment);
    expect(consensus.label).toBe('healthbench:consensus');
    expect(packSettings(consensus)).toEqual({ input: join(tempDir, 'healthbench/context_seeking_consensus_hard_104.jsonl'), format: 'healthbench', defaults: { judge: ['openai:gpt-4.1-2025-04-14'], scoring: 'healthbench' } });
  });

  test('a missing data file is an error saying where it goes and how to get it; unknown names list the known ones', ({ tempDir }) => {
    const environment = { RUBRICATE_DATA_DIR: tempDir };
    expect(() => benchmarkDataFile(findBenchmark('ifeval', environment))).toThrow(expect.objectContaining({ code: 'INPUT_UNREADABLE', message: expect.stringMatching(/ifeval\/input_data\.jsonl.*`npm run data:fetch` downloads/) }));
    expect(() => benchmarkDataFile(findBenchmark('healthbench:hard', environment))).toThrow(/not in `npm run data:fetch`'s list: get openai\/simple-evals .*save it as healthbench\/hard_2025-05-08-21-00-10\.jsonl/);
    expect(() => findBenchmark('healthbench:easy', environment)).toThrow(/no subset "easy" \(its subsets: hard, consensus\)/);
    expect(() => findBenchmark('ifevl', environment)).toThrow(/unknown benchmark "ifevl" \(did you mean "ifeval"\?/);
    expect(() => findBenchmark('ifeval:a:b', environment)).toThrow(/NAME or NAME:SUBSET/);
  });

  test('applyBenchmark sets the input and format, and only the defaults the user left unset', async ({ tempDir }) => {
    mkdirSync(join(tempDir, 'biggen_bench'));
    writeFileSync(join(tempDir, 'biggen_bench/sample_responses.json'), '{}');
    const previous = process.env.RUBRICATE_DATA_DIR;
    process.env.RUBRICATE_DATA_DIR = tempDir;
    try {
      const parse = async (args: string[]) => {
        const command = addBenchmarkOption(new Command('grade').exitOverride().option('--input <file>').option('--format <name>', 'format', 'items').option('--judge <spec>').option('--scoring <name>').option('--judge-protocol <name>'));
        command.parse(args, { from: 'user' });
        await applyBenchmark(command);
        return command.opts();
      };
      await expect(parse(['--benchmark', 'biggen'])).resolves.toMatchObject({ input: join(tempDir, 'biggen_bench/sample_responses.json'), format: 'biggen', judge: ['openai:gpt-4.1'], scoring: 'biggen', judgeProtocol: 'prometheus' });
      await expect(parse(['--benchmark', 'biggen', '--judge', 'scripted', '--scoring', 'weighted_mean'])).resolves.toMatchObject({ format: 'biggen', judge: 'scripted', scoring: 'weighted_mean', judgeProtocol: 'prometheus' });
      await expect(parse(['--benchmark', 'biggen', '--input', 'mine.jsonl'])).rejects.toThrow(/leave out --input, or leave out --benchmark/);
      await expect(parse(['--benchmark', 'biggen', '--format', 'items'])).rejects.toThrow(expect.objectContaining({ details: expect.objectContaining({ field: 'format' }) }));
    } finally {
      if (previous === undefined) delete process.env.RUBRICATE_DATA_DIR;
      else process.env.RUBRICATE_DATA_DIR = previous;
    }
  });
});
