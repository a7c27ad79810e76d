import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { fruitRubric, ruleScript } from '../../server/test-support.js';
import { test } from '../../testing/vitest-fixtures.js';
import { runCliCaptured } from '../in-process.js';

describe('rubricate rubric-reward', () => {
  test('writes each candidate rubric’s reward in input order; a bad line is reported, named and the run goes on', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(ruleScript);
    const input = join(tempDir, 'rubrics.jsonl');
    const lines = [
      { id: 'pairs', prompt: 'Name some fruit.', rubric: fruitRubric, pairs: [{ chosen: 'apples', rejected: 'pears' }, { chosen: 'pears', rejected: 'apples' }] },
      { id: 'broken', prompt: 'Name some fruit.', rubric: fruitRubric, responses: [{ response: 'apples', score: 'high' }, { response: 'pears', score: 1 }] },
      { id: 'experts', prompt: 'Name some fruit.', rubric: JSON.stringify(fruitRubric), responses: [{ response: 'apples', score: 2 }, { response: 'pears', score: 1 }, { response: 'rotten', score: 0 }] },
    ];
    writeFileSync(input, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    const out = join(tempDir, 'rewards.jsonl');
    const result = await runCliCaptured(['rubric-reward', '--input', input, '--out', out, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`${input}:2`);
    expect(result.stderr).toContain('responses.0.score');
    const written = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(written.map((line) => [line.id ?? null, line.status, line.reward ?? null])).toEqual([
      ['pairs', 'ok', 0.5],
      [null, 'invalid', null],
      ['experts', 'ok', 1],
    ]);
    expect(written[2]).toMatchObject({ reward_from: 'spearman', ranking: { n: 3, graded: 3, spearman: 1, kendall: 1 } });
  });

  test('a line with more responses than --max-group-size is an error naming the bound, graded by nobody; the others are graded', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(ruleScript);
    const input = join(tempDir, 'rubrics.jsonl');
    const many = ['apples', 'pears', 'rotten', 'figs', 'plums'].map((response, index) => ({ response, score: 5 - index }));
    const lines = [
      { id: 'too-many', prompt: 'Name some fruit.', rubric: fruitRubric, responses: many },
      { id: 'fits', prompt: 'Name some fruit.', rubric: fruitRubric, responses: many.slice(0, 2) },
    ];
    writeFileSync(input, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    const out = join(tempDir, 'rewards.jsonl');
    const result = await runCliCaptured(['rubric-reward', '--input', input, '--out', out, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--max-group-size', '4']);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/over the bound of 4 \(--max-group-size\)/);
    const written = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(written.map((line) => [line.line, line.status, (line.error as { code?: string } | undefined)?.code ?? null])).toEqual([
      [1, 'error', 'LIMIT_EXCEEDED'],
      [2, 'ok', null],
    ]);
    // Only the line that fits reached the judge (the over-bound line's last response never did).
    expect(fake.requests.every((request) => !JSON.stringify(request).includes('plums'))).toBe(true);
  });
});
