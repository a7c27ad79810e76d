/**
 * Input read the wrong way gets one diagnosis, not a message per record: a file of another format
 * names the `--format` that fits (exit 2, nothing written); records that all fail show a few and
 * one summary; unmatched response keys come with samples of both sides; and the default output
 * never replaces the results of another run (the same command again still resumes into it).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const examples = resolve(projectRoot, 'examples');
const invalidLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('invalid input'));

describe('input read the wrong way', { timeout: hangGuard(60_000) }, () => {
  test('a HealthBench file graded as items names --format healthbench and grades nothing', async ({ tempDir }) => {
    const out = join(tempDir, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--input', join(examples, 'healthbench/examples.jsonl'), '--responses', join(examples, 'healthbench/responses.jsonl'), '--judge', 'scripted', '--no-cache', '--quiet', '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error \[INPUT_WRONG_TYPE\]: .*examples\.jsonl field format: read as --format items, but its records look like HealthBench \(keys prompt_id, prompt, rubrics.*\): give --format healthbench$/);
    expect(invalidLines(result.stderr)).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });

  test('an LLMBar JSON list compared as pairs names --format llmbar beside what the file is', async ({ tempDir }) => {
    const result = await runCliInProcess(['compare', '--input', join(examples, 'llmbar/dataset.json'), '--judge', 'scripted', '--no-cache', '--quiet', '--out', join(tempDir, 'compare.jsonl')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("looks like a JSON array (one JSON document); turn it into JSONL with: jq -c '.[]'");
    expect(result.stderr).toContain('its records look like LLMBar (keys input, output_1, output_2, label): give --format llmbar');
  });

  test('records that all fail alike: the first three, then one diagnosis', async ({ tempDir }) => {
    const items = readFileSync(join(examples, 'items.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const rubricOnly = Array.from({ length: 7 }, (_, index) => ({ ...items[0], id: `q${index}`, response: undefined }));
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, rubricOnly.map((item) => JSON.stringify(item)).join('\n'));
    const result = await runCliInProcess(['grade', '--input', input, '--judge', 'scripted', '--no-cache', '--quiet', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code).toBe(3);
    expect(invalidLines(result.stderr)).toHaveLength(3);
    expect(result.stderr).toContain(`no record of ${input} could be read as --format items: 7 invalid, all the same way:\n  record has no response: give --responses FILE`);
    expect(result.stderr).toContain('(4 not shown above; each is a line of the output with status "invalid")');

    // Once a record is good, every bad one is shown again, with a count of those held back.
    writeFileSync(input, [...rubricOnly.slice(0, 5), items[0], rubricOnly[5]].map((item) => JSON.stringify(item)).join('\n'));
    const mixed = await runCliInProcess(['grade', '--input', input, '--judge', 'scripted', '--no-cache', '--quiet', '--out', join(tempDir, 'out.jsonl')]);
    expect(mixed.code).toBe(3);
    expect(invalidLines(mixed.stderr)).toHaveLength(4);
    expect(mixed.stderr).toContain('… and 2 more invalid record(s) before the first good one');
    expect(mixed.stderr).not.toContain('no record of');
  });

  test('responses that match no example show samples of their keys and of the examples', async ({ tempDir }) => {
    const responses = join(tempDir, 'responses.jsonl');
    writeFileSync(responses, ['hb-fever', 'fever-2', 'cough-2'].map((key) => JSON.stringify({ prompt_id: key, response: 'Rest.' })).join('\n'));
    const result = await runCliInProcess(['grade', '--format', 'healthbench', '--input', join(examples, 'healthbench/examples.jsonl'), '--responses', responses, '--judge', 'scripted', '--no-cache', '--quiet', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/warning: 2 response line\(s\) in .* match no example in .*: their keys \(prompt_id\) are "fever-2", "cough-2"; the examples' are "hb-fever", "hb-cough"/);
    expect(result.stderr).toMatch(/no response for "hb-cough" in .*responses\.jsonl \(its keys are "hb-fever", "fever-2", "cough-2"\)/);
  });
});

describe('the default --out', { timeout: hangGuard(60_000) }, () => {
  test('is rewritten by the same command (a resume) but never replaces another run without --force', async ({ tempDir }) => {
    const saved = process.cwd();
    process.chdir(tempDir);
    try {
      const first = ['grade', '--input', join(examples, 'items.jsonl'), '--judge', 'scripted', '--quiet', '--cache', 'cache.sqlite'];
      expect((await runCliInProcess(first)).code).toBe(0);
      const written = readFileSync('results.jsonl', 'utf8');
      // The rerun resumes: the same verdicts, all from the cache.
      const rerun = await runCliInProcess(first);
      expect(rerun.code).toBe(0);
      const verdicts = (text: string) => text.trim().split('\n').map((line) => JSON.parse(line) as { id: string; criteria: Array<{ met: boolean }>; usage: { calls: number } });
      expect(verdicts(readFileSync('results.jsonl', 'utf8')).map(({ id, criteria }) => [id, criteria.map((criterion) => criterion.met)])).toEqual(verdicts(written).map(({ id, criteria }) => [id, criteria.map((criterion) => criterion.met)]));
      expect(verdicts(readFileSync('results.jsonl', 'utf8')).every((result) => result.usage.calls === 0)).toBe(true);
      const resumed = readFileSync('results.jsonl', 'utf8');

      const other = ['grade', '--format', 'healthbench', '--input', join(examples, 'healthbench/examples.jsonl'), '--response-from', 'ideal', '--judge', 'scripted', '--quiet', '--cache', 'cache.sqlite'];
      const refused = await runCliInProcess(other);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('error [OUTPUT_CONFLICT]: results.jsonl field out: the default --out holds the output of another run (first record "fever", judge scripted:mixed; this run: first record "hb-fever", judge scripted:mixed)');
      expect(readFileSync('results.jsonl', 'utf8')).toBe(resumed);
      // Another judge on the same input is another run too.
      expect((await runCliInProcess([...first.slice(0, 3), '--judge', 'scripted:met', '--quiet', '--cache', 'cache.sqlite'])).code).toBe(2);
      // Its own --out, or --force, and it runs.
      expect((await runCliInProcess([...other, '--out', 'healthbench.jsonl'])).code).toBe(0);
      expect((await runCliInProcess([...other, '--force'])).code).toBe(0);
      expect(readFileSync('results.jsonl', 'utf8')).not.toBe(resumed);
    } finally {
      process.chdir(saved);
    }
  });
});
