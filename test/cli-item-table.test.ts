/**
 * The terminal's per-item table after `grade --table` (as promptfoo prints one), made-up verdicts
 * labelled; and the judge summary's retries by reason.
 */
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { binaryVerdict } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const items = resolve(projectRoot, 'examples/items.jsonl');

describe('grade --table', () => {
  test('a scripted run: a row per item, each labelled made up, then the summary', async ({ tempDir }) => {
    const result = await runCliInProcess(['grade', '--input', items, '--judge', 'scripted', '--no-cache', '--table', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stderr.split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['item', 'score', 'met/total', 'errors', 'verdicts']);
    expect(lines[2]).toMatch(/^fever\s+\d\.\d{4}\s+\d\/4\s+0\s+made up$/);
    expect(lines[3]).toMatch(/^cough\s+\d\.\d{4}\s+\d\/3\s+0\s+made up$/);
    expect(lines[4]).toMatch(/^made up: 2 of 2 items have verdicts no model gave/);
    // The run summary that follows opens with the made-up line, as every summary of made-up verdicts does.
    expect(lines[5]).toMatch(/^made up: these verdicts come from a scripted judge, not a model \(scripted:mixed\)$/);
    expect(lines[6]).toBe('2 items: 2 ok, 0 error, 0 invalid');
    // Off a terminal and not asked: no table.
    const plain = await runCliInProcess(['grade', '--input', items, '--judge', 'scripted', '--no-cache', '--out', join(tempDir, 'plain.jsonl')]);
    expect(plain.stderr).not.toMatch(/^item\s+score/m);
  });

  test('a judge that fails a call once: its row is not made up, and the summary gives the retry its reason', async ({ tempDir, fakeJudge }) => {
    let failed = false;
    fakeJudge.setScript(() => {
      if (!failed) {
        failed = true;
        // Retry-After 0: asked again at once.
        return { status: 503, body: { error: { message: 'try again' } }, headers: { 'retry-after': '0' } };
      }
      return { content: binaryVerdict(true) };
    });
    const result = await runCliInProcess(['grade', '--input', items, '--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--concurrency', '1', '--no-cache', '--table', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^fever\s+\d\.\d{4}\s+4\/4\s+0$/m);
    expect(result.stderr).not.toContain('made up');
    expect(result.stderr).toMatch(/^judge: \d+ calls, 0 cache hits, 1 retries \(JUDGE_SERVER_ERROR ×1\), /m);
  });
});
