import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { exitCodes } from '../../errors.js';
import { binaryVerdict, type FakeJudge } from '../../testing/fake-judge.js';
import { test as base } from '../../testing/vitest-fixtures.js';
import { runCli } from '../main.js';
import { captureOutput } from '../in-process.js';

let directory: string;
let itemsFile: string;

const facts = [
  { word: 'zebrafish', sentence: 'The zebrafish is a small freshwater fish.', criterion: 'Says the zebrafish is a freshwater fish' },
  { word: 'saxophone', sentence: 'A saxophone uses a single reed.', criterion: 'Says the saxophone has a single reed' },
  { word: 'tungsten', sentence: 'Tungsten has a very high melting point.', criterion: 'Gives the high melting point of tungsten' },
  { word: 'platypus', sentence: 'The platypus is a mammal that lays eggs.', criterion: 'Notes that the platypus lays eggs' },
];


/** `fake`: a judge that reads the content but also obeys "mark every criterion" instructions. */
const test = base.extend<{ fake: FakeJudge }>({
  fake: async ({ startJudge }, use) => {
    await use(
      await startJudge((request) => {
        const response = request.response ?? '';
        const fact = facts.find((entry) => request.criteria[0].text.includes(entry.word))!;
        return { content: binaryVerdict(response.includes(fact.word) || /mark every criterion/i.test(response)) };
      }),
    );
  },
});

test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  itemsFile = path.join(directory, 'items.jsonl');
  const lines = Array.from({ length: 10 }, (_, index) => {
    const covered = facts.filter((_, position) => (index + position) % 3 !== 0);
    return JSON.stringify({
      id: `q${index}`,
      prompt: 'Tell me some facts.',
      response: covered.map((fact) => fact.sentence).join(' '),
      rubric: { criteria: facts.map((fact) => ({ text: fact.criterion, points: 2 })) },
    });
  });
  await writeFile(itemsFile, `${[...lines, '{"id": "broken"}'].join('\n')}\n`);
});

describe('rubricate probe', () => {
  test('grades originals and perturbations with the judge, writes the report and prints the table', async ({ fake }) => {
    const out = path.join(directory, 'probe.json');
    const cache = path.join(directory, 'cache.sqlite');
    const { output, context } = captureOutput();
    const argv = [
      'probe',
      '--input',
      itemsFile,
      '--judge',
      'openai:fake-judge',
      '--judge-base-url',
      fake.baseUrl,
      '--cache',
      cache,
      '--out',
      out,
      '--probes',
      'padding,injection,deletion',
      '--items',
      '8',
      '--probe-seed',
      '2',
      '--bootstrap-resamples',
      '200',
      '--quiet',
    ];
    const code = await runCli(argv, context);
    // The broken input line is reported and makes the exit status say so.
    expect(code).toBe(exitCodes.itemsFailed);
    const stderr = output.stderr.join('\n');
    expect(stderr).toMatch(/invalid input: .*items\.jsonl:11/);
    const report = JSON.parse(await readFile(out, 'utf8'));
    expect(report.kind).toBe('probes');
    expect(report.items).toMatchObject({ probed: 8, originalOk: 8 });
    expect(report.judge).toMatchObject({ id: 'openai:fake-judge', model: 'fake-judge' });
    expect(report.input).toEqual({ format: 'items', file: itemsFile, invalidRecords: 1 });
    expect(report.probes.map((result: { probe: string }) => result.probe)).toEqual(['padding', 'injection', 'deletion']);
    const [padding, injection, deletion] = report.probes;
    expect(padding.flagged).toBe(false);
    expect(injection.flagged).toBe(true);
    expect(injection.byVariant['injection:direct'].flips.notMetToMet.rate).toBe(1);
    expect(injection.byVariant['injection:fake-verdict'].flips.notMetToMet.count).toBe(0);
    expect(deletion.target.rate).toBe(1);
    expect(stderr).not.toMatch(/Robustness probes/); // --quiet: no table

    // Same command again: every verdict comes from the cache, the report is the same.
    const callsBefore = fake.requests.length;
    const again = captureOutput();
    expect(await runCli(argv, again.context)).toBe(exitCodes.itemsFailed);
    expect(fake.requests.length).toBe(callsBefore);
    const second = JSON.parse(await readFile(out, 'utf8'));
    expect(second.probes).toEqual(report.probes);
    expect(second.usage.calls).toBe(0);
  });

  test('prints the table with the weaknesses it found', async ({ fake }) => {
    const out = path.join(directory, 'probe-table.json');
    const { output, context } = captureOutput();
    await runCli(
      ['probe', '--input', itemsFile, '--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', out, '--probes', 'injection', '--bootstrap-resamples', '100'],
      context,
    );
    const stderr = output.stderr.join('\n');
    expect(stderr).toMatch(/Robustness probes: judge openai:fake-judge/);
    expect(stderr).toMatch(/injection:direct/);
    expect(stderr).toMatch(/Weaknesses found:\n- injection: /);
    expect(existsSync(`${out}.journal.sqlite`)).toBe(false);
  });

  test('rejects unknown probes and --judge none', async () => {
    const { output, context } = captureOutput();
    const out = path.join(directory, 'never.json');
    expect(await runCli(['probe', '--input', itemsFile, '--judge', 'none', '--out', out], context)).toBe(exitCodes.usage);
    expect(output.stderr.join('\n')).toMatch(/--judge none has nothing to probe/);
    expect(await runCli(['probe', '--input', itemsFile, '--judge', 'none', '--out', out, '--probes', 'length'], context)).toBe(exitCodes.usage);
    expect(output.stderr.join('\n')).toMatch(/unknown probe "length"/);
    expect(existsSync(out)).toBe(false);
  });
});
