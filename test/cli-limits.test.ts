/**
 * Bounded work from untrusted size on the command line: a count that multiplies every item's
 * judge calls (`--repeats`, `--samples`, `--best-of`, `--variants`) over `--max-repeats` exits 2
 * naming both flags, before any call; a listwise or tournament group over `--max-group-size` is
 * LIMIT_EXCEEDED for each of its items (exit 3), the other groups graded, never held whole.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { redisTest } from '../src/testing/redis-fixture.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

function writeItems(file: string, groups: Array<{ prompt: string; responses: string[] }>): void {
  const lines = groups.flatMap(({ prompt, responses }, group) =>
    responses.map((response, index) => JSON.stringify({ id: `g${group}/${index}`, prompt, response, rubric: { criteria: [{ id: 'fruit', text: 'Names a fruit', points: 1 }] } })),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
}

describe('bounds on the command line', () => {
  test('--repeats, --samples, --best-of and --variants over --max-repeats exit 2 naming the count and the bound, with no judge call', async ({ startJudge, tempDir }) => {
    const fake = await startJudge();
    const input = join(tempDir, 'items.jsonl');
    writeItems(input, [{ prompt: 'Name a fruit.', responses: ['apple'] }]);
    const judge = ['--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet'];
    const runs: Array<[string, string[]]> = [
      ['--repeats', ['grade', '--input', input, '--out', join(tempDir, 'a.jsonl'), '--repeats', '1e9']],
      ['--samples', ['grade', '--input', input, '--out', join(tempDir, 'b.jsonl'), '--samples', '1000', '--temperature', '1']],
      ['--best-of', ['improve', '--input', input, '--out', join(tempDir, 'c.jsonl'), '--best-of', '1e9', '--generator', 'openai:fake', '--generator-base-url', fake.baseUrl]],
      ['--variants', ['probe', '--input', input, '--out', join(tempDir, 'd.json'), '--variants', '5000']],
      ['--max-attempts', ['grade', '--input', input, '--out', join(tempDir, 'g.jsonl'), '--max-attempts', '1e9']],
    ];
    for (const [flag, args] of runs) {
      const result = await runCliInProcess([...args, ...judge]);
      expect(result.code, `${flag}: ${result.stderr}`).toBe(2);
      expect(result.stderr, flag).toMatch(new RegExp(`${flag} \\d+ is over the bound of 100 \\(--max-repeats\\)`));
    }
    // A bound raised on purpose is honoured.
    const raised = await runCliInProcess(['grade', '--input', input, '--out', join(tempDir, 'e.jsonl'), '--repeats', '150', '--max-repeats', '99', ...judge]);
    expect(raised.code).toBe(2);
    expect(raised.stderr).toContain('--repeats 150 is over the bound of 99 (--max-repeats)');
    expect(fake.requests).toHaveLength(0);
    const within = await runCliInProcess(['grade', '--input', input, '--out', join(tempDir, 'f.jsonl'), '--repeats', '3', ...judge]);
    expect(within.code, within.stderr).toBe(0);
    expect(fake.requests).toHaveLength(3);
  });

  test('a tournament group over --max-group-size: its items are LIMIT_EXCEEDED in their place (exit 3), the next group is graded', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(() => ({ content: { explanation: 'compared', winner: 'tie' } }));
    const input = join(tempDir, 'items.jsonl');
    const out = join(tempDir, 'results.jsonl');
    writeItems(input, [
      { prompt: 'Name a fruit.', responses: ['apple', 'pear', 'plum', 'fig', 'date'] },
      { prompt: 'Name a colour.', responses: ['red', 'blue'] },
    ]);
    const result = await runCliInProcess(['grade', '--input', input, '--out', out, '--mode', 'tournament', '--max-group-size', '3', '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet']);
    expect(result.code, result.stderr).toBe(3);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.id, line.status])).toEqual([
      ['g0/0', 'error'],
      ['g0/1', 'error'],
      ['g0/2', 'error'],
      ['g0/3', 'error'],
      ['g0/4', 'error'],
      ['g1/0', 'ok'],
      ['g1/1', 'ok'],
    ]);
    expect(lines[0].criteria[0].error).toMatchObject({ code: 'LIMIT_EXCEEDED', message: expect.stringContaining('the group has more than 3 responses, over the bound of 3 (--max-group-size)') });
    // Only the colours were compared: one pair, both orders.
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests.every((request) => request.responses.map((response) => response.text).sort().join() === 'blue,red')).toBe(true);
  });

  redisTest('a queued run stops at a group over --max-group-size before sending it: a group is one chunk, so no chunk of any size is made', async ({ redis, startJudge, tempDir }) => {
    const fake = await startJudge(() => ({ content: { explanation: 'compared', winner: 'tie' } }));
    const input = join(tempDir, 'items.jsonl');
    writeItems(input, [{ prompt: 'Name a fruit.', responses: ['apple', 'pear', 'plum', 'fig'] }]);
    const queued = await runCliInProcess(['grade', '--input', input, '--out', join(tempDir, 'queued.jsonl'), '--queue', `${redis.url.replace(/\/$/, '')}/1`, '--mode', 'tournament', '--max-group-size', '3', '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--quiet']);
    expect(queued.code, queued.stderr).toBe(3);
    expect(queued.stderr).toMatch(/the group has more than 3 responses, over the bound of 3 \(--max-group-size\)/);
    expect(fake.requests).toHaveLength(0);
  });
});
