import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import { test } from '../testing/vitest-fixtures.js';
import { answer, fencedBlocks, generatorAndJudge, mentions, type FakeCriterion } from './fixtures/fake-generator.js';

const prompts = resolve(__dirname, 'fixtures/prompts.jsonl');

/** p1: a contradictory pair (the later one is dropped); p2: only pitfalls (no drop can fix it); p3: sound. */
function flawedRubric(requestText: string): FakeCriterion[] {
  const sound = ['because', 'example', 'first', 'second', 'summary'].map((word) => mentions(word));
  if (requestText.includes('sky is blue')) return [mentions('scattering'), ...sound, { text: 'The response does not mention "scattering".', importance: 'Important', kind: 'principle', check: null }];
  if (requestText.includes('baking soda')) return ['bleach', 'vinegar', 'ammonia', 'acid', 'fire', 'poison', 'mold'].map((word) => mentions(word, 'Pitfall'));
  return [mentions('rain'), mentions('autumn'), ...sound];
}

describe('generate --lint', () => {
  test('drops the criteria lint errors name, refuses a rubric no drop fixes, and says each', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(generatorAndJudge((request) => ({ content: answer(flawedRubric(fencedBlocks(request, 'request')[0] ?? '')) })));
    const out = join(tempDir, 'items.jsonl');
    const summary = join(tempDir, 'summary.json');
    const flags = ['--input', prompts, '--generator', 'openai:writer', '--generator-base-url', fake.baseUrl, '--cache', join(tempDir, 'cache.sqlite'), '--summary', summary];
    const run = await runCliCaptured(['generate', ...flags, '--out', out, '--lint']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('lint: id p1: dropped criterion');
    expect(run.stderr).toContain('[contradictory-criteria]');
    expect(run.stderr).toContain('failed: id p2: [RUBRIC_LINT_FAILED]');
    expect(run.stderr).toContain('[weights-unreachable]');
    const items = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; rubric: { criteria: Array<{ text: string }> } });
    expect(items.map((item) => item.id)).toEqual(['p1', 'p3']);
    expect(items[0].rubric.criteria.map((criterion) => criterion.text)).toEqual(['scattering', 'because', 'example', 'first', 'second', 'summary'].map((word) => `The response mentions "${word}".`));
    expect(items[1].rubric.criteria).toHaveLength(7);
    expect(JSON.parse(readFileSync(summary, 'utf8'))).toMatchObject({ rubrics: 2, failed: 1, lint: { criteria_dropped: 1, rubrics_refused: 1 } });

    const plain = await runCliCaptured(['generate', ...flags, '--out', join(tempDir, 'plain.jsonl')]);
    expect(plain.code).toBe(0);
    expect(readFileSync(join(tempDir, 'plain.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
  });
});
