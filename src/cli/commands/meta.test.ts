import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { exitCodes } from '../../errors.js';
import { readLlmbarStatistics } from '../../meta/published/llmbar.js';
import type { JudgePairs } from '../../meta/pairwise-run.js';
import type { CommandContext } from '../context.js';
import { runCli } from '../main.js';
import { registerMetaCommand, type PairJudgeSetup } from './meta.js';
import { dataPath, haveData } from '../../testing/data.js';
import { test } from '../../testing/vitest-fixtures.js';
import { captureOutput } from '../in-process.js';

let directory: string;
let resultsFile: string;
let labelsFile: string;
let publishedFile: string;
let datasetFile: string;


async function readJson(file: string): Promise<Record<string, any>> {
  return JSON.parse(await readFile(file, 'utf8')) as Record<string, any>;
}

test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  resultsFile = path.join(directory, 'results.jsonl');
  const criterion = (id: string, met: boolean, tags: string[]) => ({ id, text: id, points: 1, tags, kind: 'principle', source: 'judge', status: 'ok', met });
  await writeFile(
    resultsFile,
    [
      { id: 'r1', status: 'ok', score: 1, criteria: [criterion('c1', true, ['axis:accuracy']), criterion('c2', false, ['axis:tone'])], metadata: { model: 'm1' }, rubricate_version: 't' },
      { id: 'r2', status: 'ok', score: 0, criteria: [criterion('c1', false, ['axis:accuracy']), criterion('c2', true, ['axis:tone'])], metadata: { model: 'm2' }, rubricate_version: 't' },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n'),
  );
  labelsFile = path.join(directory, 'labels.jsonl');
  await writeFile(
    labelsFile,
    [JSON.stringify({ id: 'r1', labels: { c1: true, c2: false } }), JSON.stringify({ id: 'r2', labels: { c1: true, c2: [true, false] } }), 'not json'].join('\n'),
  );
  const judgeFolder = path.join(directory, 'LLMBar', 'Natural', 'evaluators', 'Toy', 'Vanilla');
  await mkdir(judgeFolder, { recursive: true });
  publishedFile = path.join(judgeFolder, 'result.json');
  const verdict = (original: string, swapped: string) => [{ 'swap = False': { winner: original }, 'swap = True': { winner: swapped } }];
  await writeFile(
    publishedFile,
    JSON.stringify([
      { input: 'q1', output_1: 'x', output_2: 'y', label: 1, results: verdict('1', '1') },
      { input: 'q2', output_1: 'x', output_2: 'y', label: 2, results: verdict('1', '2') },
    ]),
  );
  const datasetFolder = path.join(directory, 'LLMBar', 'Adversarial', 'Toy');
  await mkdir(datasetFolder, { recursive: true });
  datasetFile = path.join(datasetFolder, 'dataset.json');
  await writeFile(
    datasetFile,
    JSON.stringify([
      { input: 'Name a fruit.', output_1: 'An apple.', output_2: 'A car.', label: 1 },
      { input: 'Name a colour.', output_1: 'A table.', output_2: 'Blue.', label: 2 },
      { input: 'Name a day.', output_1: 'Monday.', output_2: 'A cloud.', label: 1 },
    ]),
  );
});

describe('rubricate meta --format results', () => {
  it('writes the binary report with breakdowns and the bias index, prints the table, and reports the bad labels line', async () => {
    const out = path.join(directory, 'results-meta.json');
    const { output, context } = captureOutput();
    const code = await runCli(
      ['meta', '--format', 'results', '--input', resultsFile, '--labels', labelsFile, '--out', out, '--group-by', 'axis,criterion', '--source-field', 'metadata.model', '--bootstrap-resamples', '100'],
      context,
    );
    expect(code, output.stderr.join("\n")).toBe(exitCodes.itemsFailed);
    const report = await readJson(out);
    expect(report.kind).toBe('binary');
    // r1: c1 TP, c2 TN; r2: c1 FN, c2 TP and FP (two raters).
    expect(report.overall.confusion).toEqual({ truePositive: 2, falsePositive: 1, falseNegative: 1, trueNegative: 1 });
    expect(Object.keys(report.groups)).toEqual(['axis', 'criterion', 'source']);
    // m2: (0 − 1) + (1 − 1) + (1 − 0) over 3 pairs.
    expect(report.biasIndex.bySource).toEqual({ m1: { pairs: 2, meanError: 0 }, m2: { pairs: 3, meanError: 0 } });
    expect(report.join).toMatchObject({ joined: 4, invalidLabelLines: 1 });
    expect(report.inputs.labels).toBe(labelsFile);
    const stderr = output.stderr.join('\n');
    expect(stderr).toMatch(/invalid input: .*labels\.jsonl:3: not valid JSON/);
    expect(stderr).toMatch(/balanced F1 \(HealthBench\)/);
    expect(stderr).toMatch(/bias index \(ProfBench\)/);
    expect(stderr).toMatch(/joined 4 labelled verdicts/);
  });

  it('keeps every group in the report but only the largest in the table', async () => {
    const manyResults = path.join(directory, 'many.jsonl');
    const manyLabels = path.join(directory, 'many-labels.jsonl');
    const ids = Array.from({ length: 30 }, (_, index) => `k${index}`);
    await writeFile(manyResults, JSON.stringify({ id: 'big', status: 'ok', score: 0, criteria: ids.map((id, index) => ({ id, text: id, points: 1, tags: [], kind: 'principle', source: 'judge', status: 'ok', met: index % 2 === 0 })), rubricate_version: 't' }));
    await writeFile(manyLabels, JSON.stringify({ id: 'big', labels: Object.fromEntries(ids.map((id) => [id, true])) }));
    const out = path.join(directory, 'many.json');
    const { output, context } = captureOutput();
    expect(await runCli(['meta', '--format', 'results', '--input', manyResults, '--labels', manyLabels, '--out', out, '--group-by', 'criterion', '--bootstrap-resamples', '0'], context)).toBe(exitCodes.success);
    expect(Object.keys((await readJson(out)).groups.criterion)).toHaveLength(30);
    const stderr = output.stderr.join('\n');
    expect(stderr).toMatch(/by criterion: the 25 largest of 30 groups shown/);
    expect(stderr.match(/^k\d+ /gm)).toHaveLength(25);
  });

  it('needs --labels', async () => {
    const { output, context } = captureOutput();
    const code = await runCli(['meta', '--format', 'results', '--input', resultsFile, '--out', path.join(directory, 'x.json')], context);
    expect(code).toBe(exitCodes.usage);
    expect(output.stderr.join('\n')).toMatch(/CONFIG_INVALID.*needs --labels/);
  });
});

describe('rubricate meta on published judge outputs', () => {
  it('re-scores an LLMBar result.json without a judge', async () => {
    const out = path.join(directory, 'published.json');
    const { output, context } = captureOutput();
    const code = await runCli(['meta', '--format', 'llmbar', '--input', publishedFile, '--out', out, '--bootstrap-resamples', '50'], context);
    expect(code).toBe(exitCodes.success);
    const report = await readJson(out);
    expect(report.published).toMatchObject({ format: 'llmbar', judge: 'Toy', strategy: 'Vanilla', records: 2 });
    expect(report.overall.accuracy).toMatchObject({ original: 0.5, swapped: 1 });
    expect(output.stderr.join('\n')).toMatch(/llmbar judge Toy\/Vanilla/);
  });

  const realResult = dataPath('llmbar/LLMBar/Natural/evaluators/GPT-4/Vanilla_NoRules/result.json');
  if (!existsSync(realResult)) console.warn(`skipping the published LLMBar check: ${realResult} is absent`);
  it.skipIf(!haveData(realResult, 'src/cli/commands/meta.test.ts'))('reproduces LLMBar\u2019s own statistics for its published GPT-4 judge', async () => {
    const out = path.join(directory, 'llmbar-real.json');
    const { context } = captureOutput();
    expect(await runCli(['meta', '--format', 'llmbar', '--input', realResult, '--out', out, '--bootstrap-resamples', '0', '--quiet'], context)).toBe(exitCodes.success);
    const report = await readJson(out);
    const statistics = await readLlmbarStatistics(path.join(path.dirname(realResult), 'statistics.json'));
    expect(report.overall.counts.correctOriginal).toBe(statistics.correctFalse.count);
    expect(report.overall.counts.correctSwapped).toBe(statistics.correctTrue.count);
    expect(report.overall.counts.equal).toBe(statistics.equal.count);
    expect(100 * report.overall.accuracy.average).toBeCloseTo(statistics.correctAverage, 10);
    expect(report.overall.llmbarKappa.agreement).toBeCloseTo(statistics.kappaAgreement!, 12);
  });
});

describe('rubricate meta with --judge on a pairwise dataset', () => {
  function program(createJudgePairs: (setup: PairJudgeSetup) => JudgePairs) {
    const { output, context } = captureOutput();
    const full: CommandContext = { ...context, exitCode: 0 };
    const command = new Command().exitOverride();
    registerMetaCommand(command, full, { createJudgePairs });
    return { command, output, full };
  }

  it('judges every labelled pair in both orders through the injected pair judge and scores it', async () => {
    const out = path.join(directory, 'pairwise.json');
    const seen: PairJudgeSetup[] = [];
    const { command, output, full } = program((setup) => {
      seen.push(setup);
      // A stand-in that always prefers the response it is shown second.
      return async (pairs) => pairs.map((entry) => ({ id: entry.id, original: 'B', swapped: 'A' }));
    });
    await command.parseAsync(
      ['meta', '--format', 'llmbar', '--input', datasetFile, '--judge', 'openai:stand-in', '--judge-base-url', 'http://127.0.0.1:9/v1', '--no-cache', '--out', out, '--bootstrap-resamples', '50'],
      { from: 'user' },
    );
    expect(full.exitCode).toBe(exitCodes.success);
    expect(seen[0].judge.provenance.id).toBe('openai:stand-in');
    const report = await readJson(out);
    expect(report.run).toMatchObject({ format: 'llmbar', judged: 3, judge: { id: 'openai:stand-in', model: 'stand-in' } });
    expect(report.overall.accuracy.original).toBeCloseTo(1 / 3, 12);
    expect(report.overall.positionalAgreement).toBe(0);
    expect(report.verdicts).toHaveLength(3);
    expect(output.stderr.join('\n')).toMatch(/judge openai:stand-in on 3 labelled pairs/);
    // --no-cache keeps a journal only while the run lasts.
    expect(existsSync(`${out}.journal.sqlite`)).toBe(false);
  });

  it('says plainly that datasets need --judge and that a format must be known', async () => {
    const { output, context } = captureOutput();
    const out = path.join(directory, 'unwired.json');
    expect(await runCli(['meta', '--format', 'pandalm', '--input', datasetFile, '--out', out], context)).toBe(exitCodes.usage);
    expect(output.stderr.join('\n')).toMatch(/pairwise dataset: name the judge/);
    expect(await runCli(['meta', '--format', 'nonsense', '--input', datasetFile, '--out', out], context)).toBe(exitCodes.usage);
    expect(output.stderr.join('\n')).toMatch(/unknown meta format "nonsense"/);
  });
});

describe('the rubricate binary', () => {
  it('runs meta end to end in a child process', async () => {
    const out = path.join(directory, 'spawned.json');
    const child = spawn(process.execPath, ['bin/rubricate.js', 'meta', '--format', 'results', '--input', resultsFile, '--labels', labelsFile, '--out', out, '--bootstrap-resamples', '20'], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(exitCodes.itemsFailed);
    expect(stderr).toMatch(/Binary judge agreement: 4 records, 5 \(prediction, label\) pairs/);
    expect((await readJson(out)).overall.records).toBe(4);
  });
});
