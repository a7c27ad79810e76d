/**
 * A judge reply that holds two contradictory verdicts (two JSON objects, two tool calls, two
 * `[RESULT]` markers) is unreadable: retried, then reported as JUDGE_UNPARSEABLE, never read as
 * the last (or first) verdict, in every grading mode. The same verdict written twice is one answer.
 * Through the CLI in this process, against loopback judges.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { startFakeAnthropic } from '../src/testing/fake-anthropic.js';
import type { FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const attempts = 2;
const common = ['--no-cache', '--quiet', '--max-attempts', String(attempts)];

interface Line {
  status: string;
  score: number | null;
  criteria: Array<{ id: string; status: string; met: boolean | null; error?: { code: string; message: string } }>;
}

function readLines(path: string): Line[] {
  return readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Line);
}

/** Two items of two binary criteria, and (for Prometheus) one item of a five-level criterion. */
function writeItems(directory: string, fiveLevels = false): string {
  const file = join(directory, 'items.jsonl');
  const criteria = fiveLevels
    ? [{ id: 'c1', text: 'Covers the museum', points: 1, scale: { type: 'ordinal', choices: ['none', 'little', 'some', 'most', 'all'].map((label) => ({ label, description: `Covers ${label} of it.` })) } }]
    : [
        { id: 'c1', text: 'Says hello', points: 2 },
        { id: 'c2', text: 'Says goodbye', points: 1 },
      ];
  const lines = Array.from({ length: fiveLevels ? 1 : 2 }, (_, index) => JSON.stringify({ id: `item-${index}`, prompt: `Question ${index}`, response: `Answer ${index}`, rubric: { criteria } }));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Every criterion of every line is in error with JUDGE_UNPARSEABLE, its reason saying why. */
function expectAllUnparseable(lines: Line[], reason: RegExp): void {
  for (const line of lines) {
    expect(line.status).toBe('error');
    expect(line.score).toBeNull();
    for (const criterion of line.criteria) {
      expect(criterion.met).toBeNull();
      expect(criterion.error?.code).toBe('JUDGE_UNPARSEABLE');
      expect(criterion.error?.message).toMatch(reason);
    }
  }
}

const twoObjects = (first: unknown, second: unknown) => `${JSON.stringify(first)} ${JSON.stringify(second)}`;

describe('a reply holding two contradictory verdicts is refused in every mode', { timeout: hangGuard(60_000) }, () => {
  test('per-criterion: retried, then JUDGE_UNPARSEABLE (exit 3); the input is untouched', async ({ tempDir, startJudge }) => {
    const judge = await startJudge(() => ({ content: twoObjects({ explanation: 'yes', criteria_met: true }, { explanation: 'no', criteria_met: false }) }));
    const input = writeItems(tempDir);
    const before = readFileSync(input, 'utf8');
    const out = join(tempDir, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--input', input, '--out', out, '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, ...common]);
    expect(result.code, result.stderr).toBe(3);
    expectAllUnparseable(readLines(out), /ambiguous reply: it holds 2 different JSON objects/);
    // Each of the 4 criteria was asked `attempts` times: retried, never read as either verdict.
    expect(judge.requests).toHaveLength(4 * attempts);
    expect(result.stderr).toMatch(/JUDGE_UNPARSEABLE ×4/);
    expect(readFileSync(input, 'utf8')).toBe(before);
  });

  test('the same verdict written twice is read as that verdict', async ({ tempDir, startJudge }) => {
    const verdict = { explanation: 'yes', criteria_met: true };
    const judge = await startJudge(() => ({ content: twoObjects(verdict, verdict) }));
    const out = join(tempDir, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--input', writeItems(tempDir), '--out', out, '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, ...common]);
    expect(result.code, result.stderr).toBe(0);
    expect(readLines(out).flatMap((line) => line.criteria.map((criterion) => criterion.met))).toEqual([true, true, true, true]);
    expect(judge.requests).toHaveLength(4);
  });

  test('batched: two "verdicts" objects that disagree', async ({ tempDir, startJudge }) => {
    const verdicts = (request: FakeJudgeRequest, met: boolean) => ({ verdicts: Object.fromEntries(request.criteria.map((criterion) => [criterion.id, { explanation: 'x', criteria_met: met }])) });
    const judge = await startJudge((request) => ({ content: `${JSON.stringify(verdicts(request, true))}\n\nOn second thought:\n${JSON.stringify(verdicts(request, false))}` }));
    const out = join(tempDir, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--input', writeItems(tempDir), '--out', out, '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, '--criteria-per-call', 'all', ...common]);
    expect(result.code, result.stderr).toBe(3);
    expectAllUnparseable(readLines(out), /ambiguous reply/);
    expect(judge.requests).toHaveLength(2 * attempts);
  });

  test('holistic: two Likert answers in two code fences', async ({ tempDir, startJudge }) => {
    const judge = await startJudge(() => ({ content: '```json\n{"explanation": "good", "choice": "9"}\n```\n```json\n{"explanation": "poor", "choice": "2"}\n```' }));
    const out = join(tempDir, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--input', writeItems(tempDir), '--out', out, '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, '--mode', 'holistic', ...common]);
    expect(result.code, result.stderr).toBe(3);
    expectAllUnparseable(readLines(out), /ambiguous reply/);
    expect(judge.requests).toHaveLength(2 * attempts);
  });

  test('pairwise (compare): two winners', async ({ tempDir, startJudge }) => {
    const judge = await startJudge(() => ({ content: twoObjects({ explanation: 'first', winner: '1' }, { explanation: 'second', winner: '2' }) }));
    const pairs = join(tempDir, 'pairs.jsonl');
    writeFileSync(pairs, `${JSON.stringify({ id: 'pair-0', prompt: 'Question', response_a: 'Short', response_b: 'Longer' })}\n`);
    const out = join(tempDir, 'out.jsonl');
    const result = await runCliInProcess(['compare', '--input', pairs, '--out', out, '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, ...common]);
    expect(result.code, result.stderr).toBe(3);
    const text = readFileSync(out, 'utf8');
    expect(text).toContain('JUDGE_UNPARSEABLE');
    expect(text).toContain('ambiguous reply');
    expect(text).not.toMatch(/"winner":"[AB]"/);
    // Both orders of the pair, each asked `attempts` times.
    expect(judge.requests).toHaveLength(2 * attempts);
  });

  test('Prometheus protocol: two different [RESULT] scores', async ({ tempDir, startJudge }) => {
    const judge = await startJudge(() => ({ content: 'Feedback: covers some. [RESULT] 3\nActually it covers all of it. [RESULT] 5' }));
    const out = join(tempDir, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--input', writeItems(tempDir, true), '--out', out, '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, '--judge-protocol', 'prometheus', ...common]);
    expect(result.code, result.stderr).toBe(3);
    expectAllUnparseable(readLines(out), /ambiguous reply: it gives \[RESULT\] 3 and \[RESULT\] 5/);
    expect(judge.requests).toHaveLength(attempts);
  });

  test('anthropic: two calls of the verdict tool with different inputs', async ({ tempDir, closeAfter }) => {
    const anthropic = closeAfter(await startFakeAnthropic(() => ({ input: { explanation: 'yes', criteria_met: true }, moreInputs: [{ explanation: 'no', criteria_met: false }] })));
    const out = join(tempDir, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--input', writeItems(tempDir), '--out', out, '--judge', 'anthropic:claude-sonnet-4-5', '--judge-base-url', anthropic.baseUrl, '--judge-api-key', 'test-anthropic-key', ...common]);
    expect(result.code, result.stderr).toBe(3);
    expectAllUnparseable(readLines(out), /ambiguous reply/);
    expect(anthropic.requests).toHaveLength(4 * attempts);
  });
});
