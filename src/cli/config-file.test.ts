/**
 * `--config FILE` (keys are long flag names; typed flags win; unknown keys refused by name), the
 * published JSON Schema (current with the commands' options), and `rubricate init`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { buildProgram } from './main.js';
import { runCliCaptured } from './in-process.js';
import { configCommands, configSchemaPath, configSchemaText } from './config-schema.js';
import { withConfigFlags } from './config-file.js';

const projectRoot = join(import.meta.dirname, '..', '..');

function writeItems(directory: string): string {
  const input = join(directory, 'items.jsonl');
  const items = [0, 1, 2].map((index) => JSON.stringify({ id: `q${index}`, prompt: `Question ${index}?`, rubric: { criteria: [{ text: 'Answers', points: 2 }, { text: 'Is polite', points: 1 }] } }));
  writeFileSync(input, `${items.join('\n')}\n`);
  return input;
}

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('--config', { concurrent: true }, () => {
  test('rubricate init writes a starter per job whose every key, commented or not, is a flag of the job; it never replaces a file', async ({ tempDir }) => {
    for (const job of configCommands) {
      const program = await buildProgram({ stdout: () => undefined, stderr: () => undefined, signal: new AbortController().signal, exitCode: 0 }, [job]);
      const out = join(tempDir, `${job}.yaml`);
      const written = await runCliCaptured(['init', '--for', job, '--out', out]);
      expect(written.code).toBe(0);
      // Every commented setting uncommented: each key must still be one the job reads.
      const uncommented = join(tempDir, `${job}-all.yaml`);
      writeFileSync(uncommented, readFileSync(out, 'utf8').replace(/^# ([a-z-]+): /gm, '$1: '));
      expect(withConfigFlags(program, [job], uncommented).length).toBeGreaterThan(readFileSync(out, 'utf8').split('\n').filter((line) => /^[a-z]/.test(line)).length * 2);
      const again = await runCliCaptured(['init', '--for', job, '--out', out]);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain('init never replaces a file');
    }
    // The eval starter runs as written, offline (its output sent elsewhere).
    const run = await runCliCaptured(['eval', '--config', join(tempDir, 'eval.yaml'), '--out', join(tempDir, 'starter-results.jsonl'), '--no-cache', '--quiet']);
    expect(run.code).toBe(0);
    expect(lines(join(tempDir, 'starter-results.jsonl')).length).toBeGreaterThan(0);
  });

  test('eval --config gives the same results as the same settings as flags; the results record the resolved config', async ({ tempDir }) => {
    const input = writeItems(tempDir);
    const config = join(tempDir, 'eval.yaml');
    writeFileSync(config, ['# the same run as the flags below', 'model: scripted', 'judge: scripted:mixed', `input: ${input}`, `out: ${join(tempDir, 'from-config.jsonl')}`, 'samples-per-prompt: 2', 'modelTemperature: 0.4', 'cache: false', ''].join('\n'));
    const fromConfig = await runCliCaptured(['eval', '--config', config, '--quiet']);
    expect(fromConfig.stderr).toBe('note: --model scripted: the responses are made up (no model was asked); each is labelled "scripted" in the results');
    expect(fromConfig.code).toBe(0);
    const fromFlags = await runCliCaptured(['eval', '--model', 'scripted', '--judge', 'scripted:mixed', '--input', input, '--out', join(tempDir, 'from-flags.jsonl'), '--samples-per-prompt', '2', '--model-temperature', '0.4', '--no-cache', '--quiet']);
    expect(fromFlags.code).toBe(0);
    const configured = lines(join(tempDir, 'from-config.jsonl'));
    expect(configured).toHaveLength(6);
    const withoutConfig = configured.map(({ config: _config, ...line }) => line);
    // Responses are sampled when asked: only their time differs between two runs that make their calls.
    const untimed = (line: Record<string, unknown>) => ({ ...line, sampled: { ...(line.sampled as object), sampled_at: undefined, latency_ms: undefined } });
    expect(withoutConfig.map(untimed)).toEqual(lines(join(tempDir, 'from-flags.jsonl')).map(untimed));
    expect(configured[0].config).toEqual({
      file: config,
      settings: { input, model: ['scripted'], 'model-temperature': 0.4, 'samples-per-prompt': 2, out: join(tempDir, 'from-config.jsonl'), judge: ['scripted:mixed'], cache: false, quiet: true },
    });
  });

  test('a flag on the command line replaces the file\'s value (a repeatable one too)', async ({ tempDir }) => {
    const input = writeItems(tempDir);
    const config = join(tempDir, 'eval.json');
    writeFileSync(config, JSON.stringify({ model: 'scripted', judge: 'scripted:met', input, out: join(tempDir, 'ignored.jsonl'), 'no-cache': true, limit: 1 }));
    const out = join(tempDir, 'typed.jsonl');
    const result = await runCliCaptured(['eval', '--config', config, '--judge', 'scripted:unmet', '--out', out, '--quiet']);
    expect(result.code).toBe(0);
    expect(existsSync(join(tempDir, 'ignored.jsonl'))).toBe(false);
    const [line] = lines(out);
    expect((line.judge as { id: string }).id).toBe('scripted:unmet');
    expect((line.config as { settings: Record<string, unknown> }).settings).toMatchObject({ judge: ['scripted:unmet'], out, limit: 1 });
  });

  test('a key the command does not read is refused by name, with the nearest one; a bad value names the flag', async ({ tempDir }) => {
    const config = join(tempDir, 'eval.yaml');
    writeFileSync(config, 'model: scripted\nsamples-per-promt: 2\n');
    const typo = await runCliCaptured(['eval', '--config', config, '--input', 'x.jsonl']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(`${config}: "samples-per-promt" is not a setting of rubricate eval (did you mean "samples-per-prompt"?)`);
    writeFileSync(config, 'port: 8000\n');
    const other = await runCliCaptured(['grade', '--config', config, '--input', 'x.jsonl']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('"port" is not a setting of rubricate grade');
    writeFileSync(config, 'model: scripted\nsamples-per-prompt: 0\n');
    const invalid = await runCliCaptured(['eval', '--config', config, '--input', 'x.jsonl']);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('--samples-per-prompt must be a positive integer, got "0"');
    writeFileSync(config, '- model\n');
    const notMapping = await runCliCaptured(['eval', '--config', config]);
    expect(notMapping.code).toBe(2);
    expect(notMapping.stderr).toContain('a config file is a mapping of flag names to values');
  });

  test('the published JSON Schema is the one the commands\' options give', async () => {
    const program = await buildProgram({ stdout: () => undefined, stderr: () => undefined, signal: new AbortController().signal, exitCode: 0 });
    const published = readFileSync(join(projectRoot, configSchemaPath), 'utf8');
    expect(published, 'run npm run config-schema').toBe(configSchemaText(program));
    const schema = JSON.parse(published) as { properties: Record<string, { description: string }> };
    expect(schema.properties['samples-per-prompt'].description).toMatch(/^eval: /);
    expect(schema.properties.judge.description).toMatch(/^eval, grade, serve: /);
  });
});
