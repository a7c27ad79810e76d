/**
 * Every exit code of the table in src/errors.ts (`exitCodeMeanings`, printed in the README and
 * docs/errors.md), triggered through the real CLI process as a user would meet it.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, vi } from 'vitest';
import { exitCodeMeanings, exitCodes } from '../src/errors.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCli, runCliInProcess, startCli } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const items = resolve(projectRoot, 'examples/items.jsonl');
const tested = new Set<number>();

describe('exit codes, through the CLI', { timeout: hangGuard(180_000) }, () => {
  test('0: completed, every item graded', async ({ tempDir, fakeJudge }) => {
    const result = await runCli(['grade', '--input', items, '--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--no-cache', '--quiet', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code, result.stderr).toBe(exitCodes.success);
    tested.add(result.code!);
  });

  test('1: an internal error (a bug) is reported as one and says to report it', async ({ tempDir }) => {
    // A fault injected from outside the code: writing to stdout throws a plain TypeError, as a bug would.
    const inject = join(tempDir, 'broken-stdout.mjs');
    writeFileSync(inject, "process.stdout.write = () => { throw new TypeError('simulated bug'); };\n");
    const results = join(tempDir, 'results.jsonl');
    const graded = await runCli(['grade', '--input', items, '--judge', 'none', '--quiet', '--out', results]);
    expect(graded.code).toBe(exitCodes.itemsFailed);
    const result = await runCli(['score', '--input', results], { env: { NODE_OPTIONS: `--import ${inject}` } });
    expect(result.code).toBe(exitCodes.internal);
    expect(result.stderr).toMatch(/^internal error: TypeError: simulated bug/m);
    expect(result.stderr).toMatch(/^this is a bug in rubricate: please report it with the command and this message$/m);
    tested.add(result.code!);
  });

  test('2: a usage error grades nothing', async ({ tempDir }) => {
    const result = await runCli(['grade', '--format', 'no-such-format', '--input', items, '--judge', 'none', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code).toBe(exitCodes.usage);
    expect(result.stderr).toMatch(/error \[CONFIG_INVALID\]: field format: unknown input format "no-such-format"/);
    tested.add(result.code!);
  });

  test('2: a responses file that matches no example grades nothing; the summary counts the examples, and each message is printed once', async ({ tempDir }) => {
    const responses = join(tempDir, 'responses.jsonl');
    writeFileSync(responses, `${JSON.stringify({ id: 'nomatch', response: 'hi' })}\n`);
    const examples = resolve(projectRoot, 'examples/healthbench/examples.jsonl');
    const result = await runCliInProcess(['grade', '--format', 'healthbench', '--input', examples, '--responses', responses, '--judge', 'scripted', '--no-cache', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code).toBe(exitCodes.usage);
    // Two examples, one bad line of the responses file: not "3 items".
    expect(result.stderr).toMatch(new RegExp(`^2 items: 0 ok, 0 error, 2 invalid; 1 invalid line in ${responses.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    expect(result.stderr).toMatch(/could be read as --format healthbench: 2 invalid \(and 1 invalid line in .*\)/);
    expect(result.stderr).toContain(`nothing was graded: ${responses} gave no example a response`);
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
    expect(lines.filter((line, index) => lines.indexOf(line) !== index)).toEqual([]);
  });

  test('2: a --rubrics file that is not valid JSON names its line, and nothing is graded', async ({ tempDir }) => {
    const rubrics = join(tempDir, 'rubrics.json');
    writeFileSync(rubrics, '[\n  {"id": "r1", "criteria": [{"text": "Greets."}]\n  {"id": "r2", "criteria": [{"text": "Thanks."}]}\n]\n');
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, `${JSON.stringify({ id: 'a', prompt: 'Hi', response: 'Hello', rubric_id: 'r1' })}\n`);
    const out = join(tempDir, 'out.jsonl');
    const result = await runCliInProcess(['grade', '--input', input, '--rubrics', rubrics, '--judge', 'scripted', '--no-cache', '--out', out]);
    expect(result.code).toBe(exitCodes.usage);
    expect(result.stderr).toMatch(/^error \[INPUT_UNREADABLE\]: .*rubrics\.json:3 field rubrics: --rubrics: not valid JSON at line 3, column 3: .*; nothing was graded: fix the rubrics file and rerun$/m);
    expect(existsSync(out)).toBe(false);
  });

  test('3: completed, with an invalid record', async ({ tempDir, fakeJudge }) => {
    const input = join(tempDir, 'items.jsonl');
    writeFileSync(input, `${JSON.stringify({ id: 'no-rubric', prompt: 'p', response: 'r' })}\n${JSON.stringify({ id: 'ok', prompt: 'p', response: 'r', rubric: { criteria: [{ text: 't' }] } })}\n`);
    const result = await runCli(['grade', '--input', input, '--judge', 'openai:fake-judge', '--judge-base-url', fakeJudge.baseUrl, '--no-cache', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code).toBe(exitCodes.itemsFailed);
    expect(result.stderr).toMatch(/^2 items: 1 ok, 0 error, 1 invalid$/m);
    tested.add(result.code!);
  });

  test('4: the judge refuses the credentials', async ({ tempDir, startJudge }) => {
    const judge = await startJudge(() => ({ status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } }));
    const result = await runCli(['grade', '--input', items, '--judge', 'openai:fake-judge', '--judge-base-url', judge.baseUrl, '--no-cache', '--quiet', '--out', join(tempDir, 'out.jsonl')]);
    expect(result.code, result.stderr).toBe(exitCodes.judgeUnavailable);
    expect(result.stderr).toMatch(/JUDGE_AUTH/);
    tested.add(result.code!);
  });

  // The two signals run side by side. The judge never answers, so each run ends when its short
  // drain timeout cancels the calls in flight.
  for (const [signal, code] of [['SIGINT', exitCodes.interrupted], ['SIGTERM', exitCodes.terminated]] as const) {
    test.concurrent(`${code}: stopped by ${signal}, and says how to resume`, async ({ tempDir, startJudge, expect }) => {
      // The judge holds every call until the signal has been sent.
      const judge = await startJudge(() => ({ hang: true }));
      const run = startCli(['grade', '--input', items, '--judge', 'openai:fake-judge', '--judge-base-url', judge.baseUrl, '--no-cache', '--quiet', '--timeout', '600', '--drain-timeout', '0.2', '--out', join(tempDir, 'out.jsonl')]);
      await vi.waitFor(() => expect(judge.requests.length).toBeGreaterThan(0), { timeout: hangGuard(60_000), interval: 20 });
      run.child.kill(signal);
      const result = await run.done;
      expect(result.code).toBe(code);
      expect(result.stderr).toMatch(/rerun the same command to resume/);
      tested.add(result.code!);
    });
  }

  test('every code of the table was triggered above', () => {
    expect([...tested].sort((a, b) => a - b)).toEqual(Object.keys(exitCodeMeanings).map(Number).sort((a, b) => a - b));
  });
});
