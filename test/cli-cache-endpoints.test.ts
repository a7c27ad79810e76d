/**
 * Cached replies belong to the endpoint that gave them: the same model name on another server
 * is asked again, unless the runs share a `--cache-namespace`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const items = [
  { id: 'q1', prompt: 'Is 38°C a fever?', response: 'Yes, a low-grade one.', rubric: { criteria: [{ text: 'Says it is a low-grade fever', points: 5 }, { text: 'Mentions fluids', points: 2 }] } },
  { id: 'q2', prompt: 'Is 36.6°C a fever?', response: 'No.', rubric: { criteria: [{ text: 'Says it is normal', points: 5 }] } },
];

describe('the reply cache and the endpoint', { timeout: hangGuard(180_000) }, () => {
  test('switching endpoints with the same model name asks the new endpoint; a shared --cache-namespace reuses the replies', async ({ tempDir, startJudge }) => {
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, items.map((item) => JSON.stringify(item)).join('\n'));
    const first = await startJudge();
    const second = await startJudge();
    const grade = (endpoint: string, cache: string, ...extra: string[]) =>
      runCliInProcess(['grade', '--input', input, '--judge', 'openai:same-model', '--judge-base-url', endpoint, '--cache', join(tempDir, cache), '--out', join(tempDir, `${cache}.out.jsonl`), ...extra]);

    expect((await grade(first.baseUrl, 'a.sqlite')).code).toBe(0);
    expect(first.requests).toHaveLength(3);
    const moved = await grade(second.baseUrl, 'a.sqlite');
    expect(moved.code).toBe(0);
    expect(second.requests).toHaveLength(3);
    expect(moved.stderr).toMatch(/judge: 3 calls, 0 cache hits/);
    // The same endpoint again: every reply from the cache.
    expect((await grade(second.baseUrl, 'a.sqlite')).stderr).toMatch(/judge: 0 calls, 3 cache hits/);
    expect(second.requests).toHaveLength(3);

    expect((await grade(first.baseUrl, 'shared.sqlite', '--cache-namespace', 'same-weights')).code).toBe(0);
    expect(first.requests).toHaveLength(6);
    const sharing = await grade(second.baseUrl, 'shared.sqlite', '--cache-namespace', 'same-weights');
    expect(sharing.stderr).toMatch(/judge: 0 calls, 3 cache hits/);
    expect(second.requests).toHaveLength(3);
  });
});
