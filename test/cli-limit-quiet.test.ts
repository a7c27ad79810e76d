/**
 * A smoke run (`--limit N`) reads and grades only the first N records, exactly as a full run
 * grades them; `--quiet` has one meaning on every command: only errors and warnings on stderr.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { quietHelp } from '../src/cli/context.js';
import { buildProgram } from '../src/cli/main.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const examples = resolve(projectRoot, 'examples');
const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n');

describe('--limit', { timeout: hangGuard(60_000) }, () => {
  test('grade and compare read only the first N records, graded as in the full run', async ({ tempDir }) => {
    const full = join(tempDir, 'full.jsonl');
    const smoke = join(tempDir, 'smoke.jsonl');
    expect((await runCliInProcess(['grade', '--input', join(examples, 'items.jsonl'), '--judge', 'scripted', '--no-cache', '--quiet', '--out', full])).code).toBe(0);
    const limited = await runCliInProcess(['grade', '--input', join(examples, 'items.jsonl'), '--judge', 'scripted', '--no-cache', '--limit', '2', '--out', smoke]);
    expect(limited.code).toBe(0);
    expect(limited.stderr).toMatch(/^made up: .*\(scripted:mixed\)\n2 items: 2 ok/);
    expect(lines(smoke)).toEqual(lines(full).slice(0, 2));

    const pairs = join(tempDir, 'pairs.jsonl');
    const compared = await runCliInProcess(['compare', '--input', join(examples, 'pairs/pairs.jsonl'), '--judge', 'scripted', '--no-cache', '--quiet', '--limit', '1', '--out', pairs]);
    expect(compared.code).toBe(0);
    expect(lines(pairs).map((line) => JSON.parse(line).id)).toEqual(['pair-1']);
  });
});

describe('--quiet', { timeout: hangGuard(60_000) }, () => {
  test('grade prints nothing when all is well, and only what went wrong otherwise', async ({ tempDir }) => {
    const quiet = await runCliInProcess(['grade', '--format', 'healthbench', '--input', join(examples, 'healthbench/examples.jsonl'), '--responses', join(examples, 'healthbench/responses.jsonl'), '--judge', 'scripted', '--no-cache', '--quiet', '--out', join(tempDir, 'out.jsonl')]);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    const loud = await runCliInProcess(['grade', '--format', 'healthbench', '--input', join(examples, 'healthbench/examples.jsonl'), '--responses', join(examples, 'healthbench/responses.jsonl'), '--judge', 'scripted', '--no-cache', '--out', join(tempDir, 'out.jsonl')]);
    expect(loud.stderr).toMatch(/axis:accuracy/);

    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, `${lines(join(examples, 'items.jsonl'))[0]}\n{"id": "broken"}\n`);
    const failing = await runCliInProcess(['grade', '--input', input, '--judge', 'scripted', '--no-cache', '--quiet', '--out', join(tempDir, 'out.jsonl')]);
    expect(failing.code).toBe(3);
    // What went wrong and how to finish the run, nothing else.
    expect(failing.stderr.split('\n')).toEqual([expect.stringMatching(/^invalid input: .*:2 /), 'errors by code:', expect.stringMatching(/^ {2}INPUT_INVALID ×1: /), expect.stringMatching(/^to finish: fix the invalid input record/)]);
  });

  test('means the same on every command that takes it', async () => {
    const program = await buildProgram({ stdout: () => undefined, stderr: () => undefined, signal: new AbortController().signal, exitCode: 0 });
    const quiet = program.commands.flatMap((command) => command.options.filter((option) => option.long === '--quiet').map((option) => [command.name(), option.description]));
    expect(quiet.map(([name]) => name)).toEqual(expect.arrayContaining(['grade', 'compare', 'convert', 'generate', 'refine', 'meta', 'probe', 'worker']));
    for (const [name, description] of quiet) expect(description, name).toBe(quietHelp);
  });
});
