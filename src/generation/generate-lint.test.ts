import { readFileSync, writeFileSync } from 'node:fs';
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

describe('--lint on contrastive generation and refinement', () => {
  const contradiction = (word: string): FakeCriterion[] => [mentions(word), { text: `The response does not mention "${word}".`, importance: 'Important', kind: 'principle', check: null }];

  test('generate --format pairs --lint drops the contradictory criterion before the rubric is graded on its pair, saying so', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(generatorAndJudge(() => ({ content: answer(contradiction('primary')) })));
    const out = join(tempDir, 'kept.jsonl');
    const summary = join(tempDir, 'summary.json');
    const flags = ['--format', 'pairs', '--input', resolve(__dirname, 'fixtures/pairs.jsonl'), '--limit', '1', '--min-criteria', '1', '--generator', 'openai:writer', '--generator-base-url', fake.baseUrl];
    const run = await runCliCaptured(['generate', ...flags, '--judge', 'openai:grader', '--judge-base-url', fake.baseUrl, '--cache', join(tempDir, 'cache.sqlite'), '--out', out, '--summary', summary, '--lint']);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/lint: pair pair-1 attempt 1: dropped criterion c_\w+ \[contradictory-criteria\]/);
    const [kept] = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { rubric: { criteria: Array<{ text: string }> } });
    expect(kept.rubric.criteria.map((criterion) => criterion.text)).toEqual(['The response mentions "primary".']);
    expect(JSON.parse(readFileSync(summary, 'utf8'))).toMatchObject({ generation: { kept: 1 }, lint: { criteria_dropped: 1, rubrics_refused: 0 } });
  });

  test('refine --lint drops what each refinement breaks, and a refinement no drop fixes stops the rounds with the rule named', async ({ startJudge, tempDir }) => {
    let refinements = 0;
    const fake = await startJudge(
      generatorAndJudge((_request, task) => {
        if (task !== 'refine') return { status: 500, body: { error: { message: `unexpected task ${task}` } } };
        refinements += 1;
        // Round 1: a contradiction (the later criterion dropped); round 2: only a pitfall (no positive points: refused).
        return { content: answer(refinements === 1 ? [mentions('apple'), ...contradiction('pear')] : [mentions('apple', 'Pitfall')]) };
      }),
    );
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, JSON.stringify({ id: 'fruit', prompt: 'Name fruit.', rubric: { criteria: [{ text: 'The response mentions "apple".', points: 3 }] } }));
    const responses = join(tempDir, 'responses.jsonl');
    writeFileSync(responses, JSON.stringify({ id: 'fruit', responses: ['apple', 'apple pear', 'apple pear fig'] }));
    const out = join(tempDir, 'refined.jsonl');
    const flags = ['--input', input, '--responses', responses, '--iterations', '2', '--min-criteria', '1', '--generator', 'openai:writer', '--generator-base-url', fake.baseUrl, '--judge', 'openai:grader', '--judge-base-url', fake.baseUrl];
    const run = await runCliCaptured(['refine', ...flags, '--cache', join(tempDir, 'cache.sqlite'), '--out', out, '--lint']);
    expect(run.stderr).toMatch(/lint: id fruit round 1: dropped criterion c_\w+ \[contradictory-criteria\]/);
    expect(run.stderr).toMatch(/lint: id fruit round 2: \[RUBRIC_LINT_FAILED\] refused: \[weights-unreachable\]/);
    expect(run.stderr).toContain('stopped: [RUBRIC_LINT_FAILED]');
    const [line] = readFileSync(out, 'utf8').trim().split('\n').map((text) => JSON.parse(text) as { rubric: { criteria: Array<{ text: string }> } });
    // The rubric graded last stands: round 1's, without the dropped contradiction.
    expect(line.rubric.criteria.map((criterion) => criterion.text)).toEqual(['The response mentions "apple".', 'The response mentions "pear".']);
  });
});
