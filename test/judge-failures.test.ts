/**
 * A judge that cannot work stops the run early (exit 4) with the reason, instead of failing
 * every call of every item: the three cases of the hardening issue, through the real CLI, the
 * real HTTP client and loopback fakes. Before the circuit breaker these made 1,325, 265 and
 * 1,325 calls and exited 3 with "20 error". Also: the end-of-run summary names the error codes,
 * and a Retry-After of a day no longer holds the run. The CLI's entry point runs in this process
 * (no start-up per command); exit codes through a real process are exit-codes.test.ts's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { binaryVerdict, startFakeJudge } from '../src/testing/fake-judge.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';


/** `count` items of `criteria` criteria each: 1,000 calls' worth of work when nothing stops it. */
function itemsFile(directory: string, count = 100, criteria = 10): string {
  const file = join(directory, 'items.jsonl');
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({
      id: `item-${index}`,
      prompt: `Question ${index}`,
      response: `Answer ${index}`,
      rubric: { criteria: Array.from({ length: criteria }, (_, criterion) => ({ id: `c${criterion}`, text: `Criterion ${criterion} of item ${index}`, points: 1 })) },
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}


const common = ['--no-cache', '--quiet', '--concurrency', '4', '--max-attempts', '3'];

// Each test has its judge and folder, and the retried calls wait out their backoff: side by side.
describe('a judge that cannot work stops the run', { timeout: hangGuard(120_000), concurrent: true }, () => {
  test('an unreachable judge: exit 4 after a bounded number of calls, naming the endpoint and what to check', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-breaker-');
    const closed = await startFakeJudge(() => ({ content: 'unused' }));
    const url = closed.baseUrl;
    await closed.close();
    const result = await runCliInProcess(['grade', '--input', itemsFile(directory), '--out', join(directory, 'out.jsonl'), '--judge', 'openai:m', '--judge-base-url', url, ...common]);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('JUDGE_CIRCUIT_OPEN');
    expect(result.stderr).toContain(`${url}/chat/completions`);
    expect(result.stderr).toMatch(/JUDGE_CONNECTION ×20/);
    expect(result.stderr).toMatch(/Check: that the judge server is running/);
  });

  test('a judge that cannot be reached at all, on an input too small for the breaker: still exit 4, not 3', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-unreachable-');
    const closed = await startFakeJudge(() => ({ content: 'unused' }));
    const url = closed.baseUrl;
    await closed.close();
    const input = itemsFile(directory, 2, 3);
    const before = readFileSync(input, 'utf8');
    const out = join(directory, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--input', input, '--out', out, '--judge', 'openai:m', '--judge-base-url', url, ...common]);
    expect(result.code, result.stderr).toBe(4);
    // Fewer calls than the breaker's threshold: it never opened, the run ended with every criterion in error.
    expect(result.stderr).not.toContain('JUDGE_CIRCUIT_OPEN');
    expect(result.stderr).toMatch(/JUDGE_CONNECTION ×6: cannot reach the judge at/);
    expect(result.stderr).toMatch(/the judge is unusable: no call gave a verdict \(JUDGE_CONNECTION ×6\)/);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { status: string; criteria: Array<{ met: boolean | null; error?: { code: string } }> });
    expect(lines.map((line) => line.status)).toEqual(['error', 'error']);
    expect(lines.flatMap((line) => line.criteria.map((criterion) => [criterion.met, criterion.error?.code]))).toEqual(Array.from({ length: 6 }, () => [null, 'JUDGE_CONNECTION']));
    expect(readFileSync(input, 'utf8')).toBe(before);
  });

  test('a judge that answers one call is usable: the rest in error is exit 3', async ({ makeTempDir, startJudge }) => {
    const directory = makeTempDir('rubricate-unreachable-');
    const judge = await startJudge((request) => (request.criteria[0]?.id === 'c0' && request.userText.includes('Answer 0') ? { content: binaryVerdict(true) } : { destroy: true }));
    const result = await runCliInProcess(['grade', '--input', itemsFile(directory, 2, 3), '--out', join(directory, 'out.jsonl'), '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, ...common]);
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).not.toContain('the judge is unusable');
  });

  test('a 404 (wrong model): stops after a handful of calls, not 1,000, and prints the server message', async ({ makeTempDir, startJudge }) => {
    const directory = makeTempDir('rubricate-breaker-');
    const judge = await startJudge(() => ({ status: 404, body: { error: { message: 'The model `gpt-nope` does not exist', type: 'invalid_request_error', code: 'model_not_found' } } }));
    const result = await runCliInProcess(['grade', '--input', itemsFile(directory), '--out', join(directory, 'out.jsonl'), '--judge', 'openai:gpt-nope', '--judge-base-url', judge.baseUrl, ...common]);
    expect(result.code).toBe(4);
    // A 404 is fatal at once (JUDGE_NOT_FOUND); the breaker would stop it at 20 (+ the calls in flight) otherwise.
    expect(judge.requests.length).toBeLessThanOrEqual(24);
    expect(result.stderr).toMatch(/JUDGE_NOT_FOUND|JUDGE_CIRCUIT_OPEN/);
    expect(result.stderr).toContain('The model `gpt-nope` does not exist');
  });

  test('a judge that rejects every request (400): the breaker stops it after 20 calls with the reason and what to check', async ({ makeTempDir, startJudge }) => {
    const directory = makeTempDir('rubricate-breaker-');
    const judge = await startJudge(() => ({ status: 400, body: { error: { message: 'this deployment is disabled', type: 'invalid_request_error' } } }));
    const result = await runCliInProcess(['grade', '--input', itemsFile(directory), '--out', join(directory, 'out.jsonl'), '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, ...common]);
    expect(result.code).toBe(4);
    // The threshold (20) plus at most the calls already in flight (concurrency 4).
    expect(judge.requests.length).toBeGreaterThanOrEqual(20);
    expect(judge.requests.length).toBeLessThanOrEqual(24);
    expect(result.stderr).toContain('JUDGE_CIRCUIT_OPEN');
    expect(result.stderr).toContain('this deployment is disabled');
    expect(result.stderr).toMatch(/Check: /);
  });

  test('--verdict probability against an endpoint without logprobs: stops after ~20 calls', async ({ makeTempDir, startJudge }) => {
    const directory = makeTempDir('rubricate-breaker-');
    // Answers the verdict but never returns token probabilities.
    const judge = await startJudge(() => ({ content: binaryVerdict(true) }));
    const result = await runCliInProcess(['grade', '--input', itemsFile(directory), '--out', join(directory, 'out.jsonl'), '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, '--verdict', 'probability', ...common]);
    expect(result.code).toBe(4);
    expect(judge.requests.length).toBeLessThanOrEqual(24);
    expect(result.stderr).toMatch(/JUDGE_UNSUPPORTED|JUDGE_CIRCUIT_OPEN/);
    expect(result.stderr).toMatch(/prob/i);
  });

  test('a judge that fails some calls but answers others is not stopped, and the summary lists error codes with an example', async ({ makeTempDir, startJudge }) => {
    const directory = makeTempDir('rubricate-breaker-');
    // Every criterion c3 is refused (400): 30 failures in all, never 20 in a row.
    const judge = await startJudge((request) =>
      request.criteria[0]?.id === 'c3' ? { status: 400, body: { error: { message: 'criterion c3 trips a content filter' } } } : { content: binaryVerdict(true) },
    );
    const out = join(directory, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--input', itemsFile(directory, 30, 5), '--out', out, '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, ...common]);
    expect(result.code).toBe(3);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(30);
    expect(result.stderr).toContain('errors by code:');
    expect(result.stderr).toMatch(/JUDGE_REQUEST_REJECTED ×30: .*criterion c3 trips a content filter/);
  });

  test('--breaker-threshold 0 turns the breaker off (every item is tried and reported)', async ({ makeTempDir, startJudge }) => {
    const directory = makeTempDir('rubricate-breaker-');
    const judge = await startJudge(() => ({ status: 400, body: { error: { message: 'request refused' } } }));
    const result = await runCliInProcess(['grade', '--input', itemsFile(directory, 10, 3), '--out', join(directory, 'out.jsonl'), '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, '--breaker-threshold', '0', ...common]);
    // A judge that rejected every call is unusable (exit 4), breaker or not.
    expect(result.code).toBe(4);
    expect(judge.requests).toHaveLength(30);
    expect(result.stderr).toMatch(/JUDGE_REQUEST_REJECTED ×30/);
  });
});

describe('Retry-After is bounded', { timeout: hangGuard(120_000) }, () => {
  test('Retry-After: 100000 waits at most --max-retry-after, and the run completes', async ({ makeTempDir, startJudge }) => {
    const directory = makeTempDir('rubricate-retry-after-');
    let refused = 0;
    const judge = await startJudge(() => {
      if (refused < 2) {
        refused += 1;
        return { status: 429, headers: { 'retry-after': '100000' }, body: { error: { message: 'slow down' } } };
      }
      return { content: binaryVerdict(true) };
    });
    const out = join(directory, 'out.jsonl');
    // Without the cap this run would wait 100,000 s (10 min before the old cap); the test timeout is 30 s.
    const result = await runCliInProcess(['grade', '--input', itemsFile(directory, 2, 1), '--out', out, '--judge', 'openai:m', '--judge-base-url', judge.baseUrl, '--max-retry-after', '0.2', ...common, '--concurrency', '1']);
    expect(result.code).toBe(0);
    expect(judge.requests).toHaveLength(4);
  });
});
