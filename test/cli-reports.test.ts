/**
 * Reports from the command line: `report` writes beside its input when no `--out` is given, and
 * refuses an input that is no results, compare or meta file (exit 2, nothing written); `compare`
 * and `meta` take `--report` as `grade` does.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const examples = resolve(projectRoot, 'examples');
const isHtmlReport = (file: string) => readFileSync(file, 'utf8').startsWith('<!doctype html>');

describe('reports', { timeout: hangGuard(60_000) }, () => {
  test('report writes beside its input by default; compare and meta take --report', async ({ tempDir }) => {
    const results = join(tempDir, 'run.jsonl');
    expect((await runCliInProcess(['grade', '--input', join(examples, 'items.jsonl'), '--judge', 'scripted', '--no-cache', '--quiet', '--out', results])).code).toBe(0);
    const report = await runCliInProcess(['report', '--input', results]);
    expect(report.code, report.stderr).toBe(0);
    expect(isHtmlReport(join(tempDir, 'run.html'))).toBe(true);
    expect((await runCliInProcess(['report', '--input', results, '--format', 'md'])).code).toBe(0);
    expect(readFileSync(join(tempDir, 'run.md'), 'utf8')).toMatch(/^# /);

    const compared = await runCliInProcess(['compare', '--input', join(examples, 'pairs/pairs.jsonl'), '--judge', 'scripted', '--no-cache', '--quiet', '--out', join(tempDir, 'pairs.jsonl'), '--report', join(tempDir, 'pairs.html')]);
    expect(compared.code, compared.stderr).toBe(0);
    expect(isHtmlReport(join(tempDir, 'pairs.html'))).toBe(true);
    const meta = await runCliInProcess(['meta', '--format', 'results', '--input', results, '--labels', join(examples, 'labels/items-labels.jsonl'), '--quiet', '--out', join(tempDir, 'meta.json'), '--report', join(tempDir, 'meta.html')]);
    expect(meta.code, meta.stderr).toBe(0);
    expect(isHtmlReport(join(tempDir, 'meta.html'))).toBe(true);
  });

  test('an input that is no results, compare or meta file is refused, as every command refuses one', async ({ tempDir }) => {
    const list = join(tempDir, 'list.jsonl');
    writeFileSync(list, JSON.stringify([{ id: 'a' }]));
    const result = await runCliInProcess(['report', '--input', list, '--out', join(tempDir, 'list.html')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error \[INPUT_WRONG_TYPE\]: .*list\.jsonl: expected a results or compare file \(JSON lines\) or a meta-evaluation report \(one JSON object\), but this looks like a JSON array/);
    expect(existsSync(join(tempDir, 'list.html'))).toBe(false);
  });
});
