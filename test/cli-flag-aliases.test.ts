/**
 * Renamed flags: the old names still work for one minor version, each use printing one line
 * that names the new flag. Each case makes the command stop at a check that names the flag the
 * value went to, which shows where the alias led. (The full generate and refine runs with the
 * old names are in src/generation/cli.test.ts.)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const noModels = ['--generator', 'openai:none', '--judge', 'none'];
const deprecationLines = (stderr: string) => stderr.split('\n').filter((line) => line.includes('is deprecated'));

describe('deprecated flag names', { timeout: hangGuard(120_000) }, () => {
  test('generate --pairs FILE is --input FILE --format pairs', async ({ tempDir }) => {
    const result = await runCliInProcess(['generate', '--pairs', join(tempDir, 'absent.jsonl'), '--out', join(tempDir, 'out.jsonl'), ...noModels]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/error \[INPUT_UNREADABLE\]: .*absent\.jsonl field input: cannot read --input/);
    expect(deprecationLines(result.stderr)).toEqual(['warning: --pairs is deprecated: use --input FILE --format pairs (the old name stops working in the next minor version)']);
  });

  test('generate --pairs-format is --format, and its old value jsonl is pairs', async ({ tempDir }) => {
    const pairs = join(tempDir, 'pairs.jsonl');
    writeFileSync(pairs, '');
    const unknown = await runCliInProcess(['generate', '--input', pairs, '--pairs-format', 'nope', '--out', join(tempDir, 'out.jsonl'), ...noModels]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown pairwise format "nope"/);
    expect(deprecationLines(unknown.stderr)).toHaveLength(1);
    // Both names at once, disagreeing: refused rather than one silently winning.
    const both = await runCliInProcess(['generate', '--input', pairs, '--format', 'llmbar', '--pairs-format', 'pandalm', '--out', join(tempDir, 'out.jsonl'), ...noModels]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/error \[CONFIG_INVALID\]: field pairs-format: --pairs-format is the old name of --format/);
  });

  test('generate and refine --report FILE is --summary FILE', async ({ tempDir }) => {
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, `${JSON.stringify({ id: 'q', prompt: 'Write a poem.' })}\n`);
    for (const command of ['generate', 'refine']) {
      const result = await runCliInProcess([command, '--input', input, '--report', input, '--out', join(tempDir, 'out.jsonl'), ...noModels]);
      expect(result.code, command).toBe(2);
      expect(result.stderr).toMatch(/error \[OUTPUT_CONFLICT\]: .* field summary:/);
      expect(deprecationLines(result.stderr)).toEqual(['warning: --report is deprecated: use --summary (the old name stops working in the next minor version)']);
    }
  });

  test('refine --responses-file FILE is --responses FILE, and --responses N is --responses-per-prompt N', async ({ tempDir }) => {
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, `${JSON.stringify({ id: 'q', prompt: 'Write a poem.' })}\n`);
    const file = await runCliInProcess(['refine', '--input', input, '--responses-file', join(tempDir, 'absent.jsonl'), '--out', join(tempDir, 'out.jsonl'), ...noModels]);
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(/absent\.jsonl field responses: cannot read --responses/);
    expect(deprecationLines(file.stderr)).toHaveLength(1);

    const count = await runCliInProcess(['refine', '--input', input, '--responses', '8', '--out', input, ...noModels]);
    expect(count.code).toBe(2);
    expect(count.stderr).toMatch(/error \[OUTPUT_CONFLICT\]/);
    expect(deprecationLines(count.stderr)).toEqual(['warning: --responses 8 is deprecated: use --responses-per-prompt 8 (the old form stops working in the next minor version)']);
    const twice = await runCliInProcess(['refine', '--input', input, '--responses', '8', '--responses-per-prompt', '4', '--out', join(tempDir, 'out.jsonl'), ...noModels]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/give only --responses-per-prompt/);
  });

  test('the current names print no notice', async ({ tempDir }) => {
    const result = await runCliInProcess(['generate', '--input', join(tempDir, 'absent.jsonl'), '--format', 'pairs', '--summary', join(tempDir, 's.json'), '--out', join(tempDir, 'out.jsonl'), ...noModels]);
    expect(result.code).toBe(2);
    expect(deprecationLines(result.stderr)).toEqual([]);
  });
});
