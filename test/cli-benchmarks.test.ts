/**
 * Benchmark packs from the command line: `rubricate benchmarks` on the real data, and
 * `grade --benchmark NAME:SUBSET` end to end (its data file, format, scoring and defaults).
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { BenchmarkListing } from '../src/cli/commands/benchmarks.js';
import { sharedData } from '../src/testing/shared-data.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const consensus = sharedData('healthbench/context_seeking_consensus_hard_104.jsonl', 'the benchmark packs test');
const ifeval = sharedData('ifeval/input_data.jsonl', 'the benchmark packs test');
const records = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

describe('rubricate benchmarks', { timeout: 60_000 }, () => {
  test.skipIf(!consensus.available || !ifeval.available)('lists sizes counted from the data, and the calls and cost of a full run at the default judge', async () => {
    const listed = await runCliInProcess(['benchmarks', 'healthbench:consensus', 'ifeval', '--json']);
    expect(listed.code).toBe(0);
    const [health, instructions] = JSON.parse(listed.stdout) as BenchmarkListing[];
    const examples = records(consensus.path);
    const criteria = examples.reduce((total, example) => total + (example.rubrics as unknown[]).length, 0);
    expect(health).toMatchObject({ benchmark: 'healthbench:consensus', data: 'healthbench/context_seeking_consensus_hard_104.jsonl', judge: 'openai:gpt-4.1-2025-04-14', judge_source: 'reference', size: { items: examples.length, criteria, check_criteria: 0, invalid: 0 } });
    // Per-criterion grading: one call per criterion, priced at the price table's gpt-4.1.
    expect(health.estimate).toMatchObject({ model: 'gpt-4.1-2025-04-14', calls: criteria, price: { input: 2, output: 8 } });
    expect(health.estimate!.input_tokens).toBeGreaterThan(criteria * 300);
    expect(health.estimate!.cost_usd.synchronous).toBeCloseTo((health.estimate!.input_tokens * 2 + health.estimate!.expected_output_tokens * 8) / 1e6, 5);
    // IFEval is checks only: no judge, no call, nothing to pay.
    const prompts = records(ifeval.path);
    expect(instructions).toMatchObject({ benchmark: 'ifeval', judge: 'none', size: { items: prompts.length, criteria: prompts.reduce((total, prompt) => total + (prompt.instruction_id_list as unknown[]).length, 0) }, estimate: { calls: 0, cost_usd: { synchronous: 0 } } });

    const table = await runCliInProcess(['benchmarks', 'healthbench:consensus', 'healthbench:hard']);
    expect(table.stdout).toMatch(new RegExp(`^healthbench:consensus +${examples.length} +${criteria} +${criteria} +openai:gpt-4\\.1-2025-04-14 \\(the reference's\\) +\\$\\d+\\.\\d\\d \\(batch \\$`, 'm'));
    expect(table.stdout).toMatch(/^healthbench:hard +data not present/m);
    expect(table.stdout).toMatch(/cost: rubricate's price table, USD per 1M tokens \(gpt-4\.1-2025-04-14 \$2 in \/ \$8 out\); each response assumed 300 words/);
  });
});

describe('grade --benchmark', { timeout: 60_000 }, () => {
  test.skipIf(!consensus.available)('eval --benchmark samples the pack\'s prompts and grades them with its format and scoring', async ({ tempDir }) => {
    const out = join(tempDir, 'eval.jsonl');
    const run = await runCliInProcess(['eval', '--benchmark', 'healthbench:consensus', '--model', 'scripted', '--judge', 'scripted', '--limit', '2', '--no-cache', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const lines = records(out);
    expect(lines.map((line) => line.id)).toEqual(records(consensus.path).slice(0, 2).map((example) => example.prompt_id));
    expect(lines.every((line) => (line.sampled as { model?: string } | undefined)?.model !== undefined && line.scoring === 'healthbench')).toBe(true);
    const both = await runCliInProcess(['eval', '--benchmark', 'healthbench:consensus', '--input', out, '--model', 'scripted', '--judge', 'scripted', '--out', join(tempDir, 'x.jsonl')]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/leave out --input/);
  });

  test.skipIf(!consensus.available)('healthbench:consensus grades the subset\'s file with HealthBench\'s format and scoring', async ({ tempDir }) => {
    const out = join(tempDir, 'results.jsonl');
    const graded = await runCliInProcess(['grade', '--benchmark', 'healthbench:consensus', '--response-from', 'ideal', '--judge', 'scripted', '--limit', '2', '--no-cache', '--out', out, '--metrics', join(tempDir, 'metrics.json')]);
    expect(graded.code).toBe(0);
    expect(graded.stderr).toMatch(/^2 items: 2 ok/m);
    const lines = records(out);
    expect(lines.map((line) => line.id)).toEqual(records(consensus.path).slice(0, 2).map((example) => example.prompt_id));
    expect(lines.every((line) => (line.judge as { id: string }).id.startsWith('scripted'))).toBe(true);
    expect(JSON.parse(readFileSync(join(tempDir, 'metrics.json'), 'utf8'))).toMatchObject({ scoring: 'healthbench', n: 2 });

    // HealthBench carries no responses: the importer's own error says how to give them.
    const without = await runCliInProcess(['grade', '--benchmark', 'healthbench:consensus', '--judge', 'scripted', '--limit', '2', '--no-cache', '--out', out]);
    expect(without.code).toBe(2);
    expect(without.stderr).toMatch(/healthbench needs responses: --responses FILE/);
  });

  test('is refused beside --input or --format, by name; a pack whose data is absent says how to get it', async ({ tempDir }) => {
    const beside = await runCliInProcess(['grade', '--benchmark', 'ifeval', '--format', 'items', '--judge', 'none', '--out', join(tempDir, 'a.jsonl')]);
    expect(beside.code).toBe(2);
    expect(beside.stderr).toMatch(/field format: --benchmark ifeval gives the input format \(ifeval\): leave out --format/);
    const previous = process.env.RUBRICATE_DATA_DIR;
    process.env.RUBRICATE_DATA_DIR = tempDir;
    try {
      const absent = await runCliInProcess(['grade', '--benchmark', 'ifeval', '--judge', 'none', '--out', join(tempDir, 'b.jsonl')]);
      expect(absent.code).toBe(2);
      expect(absent.stderr).toContain(`benchmark ifeval: its data file (ifeval/input_data.jsonl) is not in the data folder ${tempDir} (RUBRICATE_DATA_DIR); \`npm run data:fetch\` downloads ifeval/input_data.jsonl`);
      const listed = await runCliInProcess(['benchmarks', 'ifeval']);
      expect(listed.stdout).toMatch(/^ifeval +data not present/m);
    } finally {
      if (previous === undefined) delete process.env.RUBRICATE_DATA_DIR;
      else process.env.RUBRICATE_DATA_DIR = previous;
    }
    const neither = await runCliInProcess(['grade', '--judge', 'none', '--out', join(tempDir, 'c.jsonl')]);
    expect(neither.stderr).toMatch(/give the items to grade: --input FILE, or --benchmark NAME/);
  });
});

describe('--benchmark --fetch-data', { timeout: 60_000 }, () => {
  /** A loopback stand-in for the published repository, laid out as /REPO/COMMIT/PATH; `served` counts requests. */
  async function publish(body: Buffer) {
    const manifest = JSON.parse(readFileSync(join(projectRoot, 'scripts/data-sources.json'), 'utf8')) as { files: Array<{ file: string; repo: string; commit: string; path: string }> };
    const entry = manifest.files.find((file) => file.file === 'ifeval/input_data.jsonl')!;
    const served: string[] = [];
    const server = http.createServer((request, response) => {
      served.push(request.url ?? '');
      if (request.url !== `/${entry.repo}/${entry.commit}/${entry.path}`) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { served, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(resolve)) };
  }

  async function withData<T>(directory: string, base: string, body: () => Promise<T>): Promise<T> {
    const previous = { dir: process.env.RUBRICATE_DATA_DIR, base: process.env.RUBRICATE_DATA_BASE_URL };
    process.env.RUBRICATE_DATA_DIR = directory;
    process.env.RUBRICATE_DATA_BASE_URL = base;
    try {
      return await body();
    } finally {
      for (const [name, value] of [['RUBRICATE_DATA_DIR', previous.dir], ['RUBRICATE_DATA_BASE_URL', previous.base]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  }

  test.skipIf(!ifeval.available)('fetches a missing pack file once, checked, then grades; a tampered download is refused and nothing is graded', async ({ tempDir }) => {
    const original = readFileSync(ifeval.path);
    const server = await publish(original);
    try {
      const data = join(tempDir, 'data');
      const out = join(tempDir, 'ifeval.jsonl');
      const run = await withData(data, server.base, () => runCliInProcess(['eval', '--benchmark', 'ifeval', '--fetch-data', '--model', 'scripted', '--no-cache', '--limit', '3', '--out', out]));
      expect(run.code, run.stderr).toBe(0);
      expect(server.served).toHaveLength(1);
      expect(run.stderr).toMatch(/fetched +ifeval\/input_data\.jsonl \(207,111 bytes\)/);
      expect(readFileSync(join(data, 'ifeval/input_data.jsonl')).equals(original)).toBe(true);
      expect(records(out)).toHaveLength(3);
      const again = await withData(data, server.base, () => runCliInProcess(['eval', '--benchmark', 'ifeval', '--fetch-data', '--model', 'scripted', '--no-cache', '--limit', '3', '--out', join(tempDir, 'again.jsonl')]));
      expect(again.code, again.stderr).toBe(0);
      expect(server.served).toHaveLength(1);
    } finally {
      await server.close();
    }

    // The same size, one byte changed: only the content checks can tell.
    const altered = Buffer.from(original);
    altered[altered.indexOf('"prompt"') + 12] ^= 1;
    const tampered = await publish(altered);
    try {
      const data = join(tempDir, 'tampered');
      const out = join(tempDir, 'never.jsonl');
      const run = await withData(data, tampered.base, () => runCliInProcess(['eval', '--benchmark', 'ifeval', '--fetch-data', '--model', 'scripted', '--no-cache', '--out', out]));
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/FAILED +ifeval\/input_data\.jsonl .*blob/);
      expect(run.stderr).toMatch(/benchmark ifeval: fetching ifeval\/input_data\.jsonl into .* failed/);
      expect(existsSync(join(data, 'ifeval/input_data.jsonl'))).toBe(false);
      expect(existsSync(out)).toBe(false);
    } finally {
      await tampered.close();
    }
  });

  test('is refused without --benchmark, by name', async ({ tempDir }) => {
    const run = await runCliInProcess(['grade', '--fetch-data', '--input', join(tempDir, 'x.jsonl'), '--judge', 'none', '--out', join(tempDir, 'y.jsonl')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--fetch-data fetches a benchmark pack's data: give --benchmark NAME with it/);
  });
});
