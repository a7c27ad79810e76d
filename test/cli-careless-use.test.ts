/**
 * What a careless user meets, each a clear error with the exit code the README's table gives and
 * nothing written, or (re-grading a results file) the same bytes back: a cache export of a cache
 * that does not exist, a --group-by field no item has, a report --labels file without labels, and
 * `grade --format results` with the same judge and cache.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { exitCodes } from '../src/errors.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

const rubric = { criteria: [{ id: 'a', text: 'Says it is a low-grade fever' }, { id: 'b', text: 'Mentions fluids' }] };

function writeItems(directory: string, metadata: Array<Record<string, unknown> | undefined>): string {
  const file = join(directory, 'items.jsonl');
  const lines = metadata.map((entry, index) => JSON.stringify({ id: `q${index}`, prompt: 'Is 38°C a fever?', response: `Answer ${index}: yes, a low-grade one.`, rubric, ...(entry ? { metadata: entry } : {}) }));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('careless use', () => {
  test('cache export of a missing cache: exit 2 naming --cache, and no file made', async ({ tempDir }) => {
    const missing = join(tempDir, 'missing.sqlite');
    // The store is never reached: the cache is checked first.
    const result = await runCliInProcess(['cache', 'export', '--cache', missing, '--store', 'redis://127.0.0.1:1']);
    expect(result.code).toBe(exitCodes.usage);
    expect(result.stderr).toMatch(/error \[INPUT_UNREADABLE\]: .*missing\.sqlite field cache: cannot read --cache: no such file/);
    expect(existsSync(missing)).toBe(false);
    expect(readdirSync(tempDir)).toEqual([]);
  });

  test('--group-by naming a field no item has: exit 2 and nothing written; an item without it is invalid, never a group of one', async ({ tempDir }) => {
    const input = writeItems(tempDir, [{ prompt_id: 'p1' }, { prompt_id: 'p1' }, undefined]);
    const out = join(tempDir, 'results.jsonl');
    const grade = (field: string) => runCliInProcess(['grade', '--input', input, '--out', out, '--judge', 'scripted:met', '--mode', 'listwise', '--group-by', field, '--cache', join(tempDir, 'cache.sqlite'), '--quiet']);
    const typo = await grade('metadata.promptid');
    expect(typo.code).toBe(exitCodes.usage);
    expect(typo.stderr).toMatch(/error \[CONFIG_INVALID\]: field group-by: --group-by metadata\.promptid: no item of the 3 in the input has this field/);
    expect(readdirSync(tempDir)).toEqual(['items.jsonl']);

    const graded = await grade('metadata.prompt_id');
    expect(graded.code).toBe(exitCodes.itemsFailed);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; status: string; group?: { id: string }; error?: { code: string; message: string; details: Record<string, unknown> } });
    expect(lines.map((line) => [line.id, line.status, line.group?.id ?? null])).toEqual([
      ['q0', 'ok', 'p1'],
      ['q1', 'ok', 'p1'],
      ['q2', 'invalid', null],
    ]);
    expect(lines[2].error).toMatchObject({ code: 'INPUT_INVALID', details: { file: input, line: 3, field: 'metadata.prompt_id' } });
    expect(graded.stderr).toContain(`${input}:3 field metadata.prompt_id: item q2 has no metadata.prompt_id`);
    expect(lines[2].error?.message).toMatch(/item q2 has no metadata\.prompt_id, the field --group-by names/);
  });

  test('report --labels with an empty labels file, or one of only invalid lines: a clear error, and no report', async ({ tempDir }) => {
    const input = writeItems(tempDir, [undefined, undefined]);
    const results = join(tempDir, 'results.jsonl');
    expect((await runCliInProcess(['grade', '--input', input, '--out', results, '--judge', 'scripted:met', '--no-cache', '--quiet'])).code).toBe(exitCodes.success);
    const empty = join(tempDir, 'labels.jsonl');
    writeFileSync(empty, '');
    const report = join(tempDir, 'report.html');
    const refused = await runCliInProcess(['report', '--input', results, '--labels', empty, '--out', report]);
    expect(refused.code).toBe(exitCodes.itemsFailed);
    expect(refused.stderr).toMatch(/error \[INPUT_INVALID\]: .*labels\.jsonl field labels: the labels file has no labels \(it is empty\)/);
    writeFileSync(empty, '{"bad": 1}\n');
    const invalid = await runCliInProcess(['report', '--input', results, '--labels', empty, '--out', report]);
    expect(invalid.code).toBe(exitCodes.itemsFailed);
    expect(invalid.stderr).toMatch(/the labels file has no labels \(its 1 line is invalid\)/);
    expect(existsSync(report)).toBe(false);
    expect(readdirSync(tempDir).sort()).toEqual(['items.jsonl', 'labels.jsonl', 'results.jsonl']);
  });

  test('grade --format results with the same judge and cache gives its input back byte for byte, usage included', async ({ tempDir }) => {
    const input = writeItems(tempDir, [undefined, undefined, undefined]);
    const cache = join(tempDir, 'cache.sqlite');
    const first = join(tempDir, 'first.jsonl');
    const judge = ['--judge', 'scripted:mixed', '--cache', cache, '--quiet'];
    expect((await runCliInProcess(['grade', '--input', input, '--out', first, ...judge])).code).toBe(exitCodes.success);
    const again = join(tempDir, 'again.jsonl');
    const regraded = await runCliInProcess(['grade', '--format', 'results', '--input', first, '--out', again, ...judge, '--metrics', join(tempDir, 'metrics.json')]);
    expect(regraded.code, regraded.stderr).toBe(exitCodes.success);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(first, 'utf8'));
    // What this run spent is counted apart: nothing, every reply from the cache.
    const metrics = JSON.parse(readFileSync(join(tempDir, 'metrics.json'), 'utf8')) as { usage: { calls: number; cache_hits: number } };
    expect(metrics.usage).toMatchObject({ calls: 0, cache_hits: 6 });
    // --limit still applies: the first line, as it was.
    const limited = join(tempDir, 'limited.jsonl');
    expect((await runCliInProcess(['grade', '--format', 'results', '--input', first, '--out', limited, '--limit', '1', ...judge])).code).toBe(exitCodes.success);
    expect(readFileSync(limited, 'utf8')).toBe(`${readFileSync(first, 'utf8').split('\n')[0]}\n`);
  });
});
