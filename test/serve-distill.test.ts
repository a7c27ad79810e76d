/**
 * Rubric distillation through the server: `serve --generator` answers `POST /v1/rubrics/distill`
 * with the rubric and report `generate --distill` writes for the same labelled pairs (the scripted
 * generator and judge on both sides, labelled as made up), and refuses a request over a bound with
 * its code before any call.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const pairsFile = join(projectRoot, 'examples/distill/pairs.jsonl');
const pairs = readFileSync(pairsFile, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as Record<string, unknown>);

/** The report without its usage: the CLI prices usage (`cost_usd`), the server answers it unpriced. */
function withoutUsage(report: Record<string, unknown>): Record<string, unknown> {
  const { usage: _usage, ...rest } = report;
  return rest;
}

describe('POST /v1/rubrics/distill', () => {
  test('answers the rubric and report generate --distill writes for the same pairs, labelled as made up; refuses a request over a bound', async ({ startServe, tempDir }) => {
    const out = join(tempDir, 'distilled.jsonl');
    const summary = join(tempDir, 'distill.json');
    const cli = await runCliInProcess(['generate', '--distill', '--format', 'pairs', '--input', pairsFile, '--generator', 'scripted', '--judge', 'scripted', '--no-cache', '--quiet', '--out', out, '--summary', summary]);
    expect(cli.code).toBe(0);
    const written = JSON.parse(readFileSync(out, 'utf8'));
    const report = JSON.parse(readFileSync(summary, 'utf8'));

    const serve = await startServe(['--no-cache', '--judge', 'scripted', '--generator', 'scripted', '--deadline', '600']);
    expect(serve.lines[0].routes).toContain('/v1/rubrics/distill');
    const post = (body: unknown) => fetch(`${serve.url}/v1/rubrics/distill`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const answered = await post({ pairs });
    expect(answered.status).toBe(200);
    const answer = (await answered.json()) as { scripted?: boolean; rubric: { criteria: Array<{ id: string; text: string; points: number }> }; summary: Record<string, unknown> & { usage: { judge: { calls: number } } } };
    expect(answer.scripted).toBe(true);
    expect(answer.rubric.criteria.length).toBeGreaterThan(0);
    expect(answer.rubric.criteria.map((criterion: { id: string; text: string; points: number }) => [criterion.id, criterion.text, criterion.points])).toEqual(
      written.criteria.map((criterion: { id: string; text: string; points: number }) => [criterion.id, criterion.text, criterion.points]),
    );
    // Provenance and figures as the CLI writes them, criterion by criterion, and the whole report.
    expect(answer.rubric).toEqual(written);
    expect(withoutUsage(answer.summary)).toEqual(withoutUsage(report));
    expect(answer.summary.usage.judge.calls).toBe(report.usage.judge.calls);

    // Over the CLI's --distill-pairs default: refused whole with its code, before admission or any call.
    const over = await post({ pairs, limits: { pairs: 41 } });
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ error: { code: 'LIMIT_EXCEEDED', message: expect.stringContaining('limits.pairs: 41 is over the bound of 40') } });
    const unlabelled = await post({ pairs: [{ prompt: 'q', response_a: 'a', response_b: 'b', label: 'tie' }] });
    expect(unlabelled.status).toBe(400);
    expect(await unlabelled.json()).toMatchObject({ error: { code: 'INPUT_INVALID' } });
  });
});
