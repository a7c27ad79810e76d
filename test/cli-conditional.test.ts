/**
 * Conditional criteria through `rubricate grade`, on the example rubric and the scripted judge
 * (made-up verdicts): not-applicable criteria are written as such, never scored, and cost no call.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

interface Line {
  id: string;
  score: number | null;
  criteria: Array<{ id: string; status: string; met: boolean | null; skip_reason?: string; when?: unknown }>;
  usage: { calls: number };
}

describe('rubricate grade with conditional criteria', () => {
  test('writes not-applicable criteria, scores without them, and asks only the applicable ones', async ({ tempDir }) => {
    const out = join(tempDir, 'results.jsonl');
    const run = await runCliInProcess(['grade', '--format', 'items', '--input', join(projectRoot, 'examples/conditional/items.jsonl'), '--judge', 'scripted', '--scoring', 'healthbench', '--out', out, '--cache', join(tempDir, 'cache.sqlite'), '--quiet']);
    expect(run.code).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Line);
    const verdicts = lines.map((line) => Object.fromEntries(line.criteria.map((criterion) => [criterion.id, criterion.status === 'skipped' ? criterion.skip_reason : criterion.met])));
    // The scripted judge met the diagnosis of the first response, not of the second (which asks a question).
    expect(verdicts[0]).toMatchObject({ diagnosis: true, asks: 'not_applicable', duration: 'not_applicable' });
    expect(verdicts[1]).toMatchObject({ diagnosis: false, explains: 'not_applicable' });
    expect(lines[1].criteria.find((criterion) => criterion.id === 'duration')!.when).toEqual([{ criterion: 'asks', verdict: true }]);
    // Hand-computed from the written verdicts: Σ points met ÷ Σ positive points of the applicable criteria.
    for (const line of lines) {
      let met = 0;
      let positive = 0;
      const points: Record<string, number> = { diagnosis: 5, explains: 3, asks: 4, duration: 2, tone: 2, condescending: -2 };
      for (const criterion of line.criteria) {
        if (criterion.status !== 'ok') continue;
        if (points[criterion.id] > 0) positive += points[criterion.id];
        if (criterion.id === 'tone') met += 2 * ((criterion as { value?: number }).value ?? (criterion.met ? 1 : 0));
        else if (criterion.met) met += points[criterion.id];
      }
      expect(line.score).toBeCloseTo(met / positive, 12);
      expect(line.usage.calls).toBe(line.criteria.filter((criterion) => criterion.status === 'ok').length);
    }
  });

  test('--dry-run counts every conditional criterion (no call is answered): an upper bound, never fewer than a real run makes', async ({ tempDir }) => {
    const input = join(projectRoot, 'examples/conditional/items.jsonl');
    const items = readFileSync(input, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { rubric: { criteria: Array<{ check?: unknown }> } });
    const judged = items.reduce((total, item) => total + item.rubric.criteria.filter((criterion) => criterion.check === undefined).length, 0);
    const dry = await runCliInProcess(['grade', '--format', 'items', '--input', input, '--judge', 'openai:gpt-4.1', '--judge-api-key', 'sk-dry-run', '--dry-run', '--out', join(tempDir, 'dry.jsonl')]);
    expect(dry.code, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as { judge_calls: number }).judge_calls).toBe(judged);
    const out = join(tempDir, 'results.jsonl');
    expect((await runCliInProcess(['grade', '--format', 'items', '--input', input, '--judge', 'scripted', '--out', out, '--no-cache', '--quiet'])).code).toBe(0);
    const calls = readFileSync(out, 'utf8').trim().split('\n').reduce((total, line) => total + (JSON.parse(line) as Line).usage.calls, 0);
    expect(calls).toBeLessThan(judged);
  });
});
