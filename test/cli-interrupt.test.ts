/**
 * Interrupting `grade` and `compare` (real CLI processes, loopback judge). The signal is sent
 * after events the test observes (the judge has received K requests, the CLI has said it is
 * stopping), never after a sleep. The rerun of the same command must not repeat a single call
 * the first run got an answer for; reruns go through the CLI's entry point in this process (what
 * they ask the judge is the point, not their process).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { answer, mentions } from '../src/generation/fixtures/fake-generator.js';
import { binaryVerdict, startFakeJudge, type FakeJudge, type FakeJudgeScript } from '../src/testing/fake-judge.js';
import { runCliInProcess, startCli, type CliResult } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

let fake: FakeJudge | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const itemCount = 40;
const criteriaPerItem = 4;

function writeItems(directory: string): string {
  const input = join(directory, 'items.jsonl');
  const lines = Array.from({ length: itemCount }, (_, index) =>
    JSON.stringify({
      id: `item-${index}`,
      prompt: `Question ${index}`,
      response: `Answer ${index} mentions apples`,
      rubric: { criteria: Array.from({ length: criteriaPerItem }, (_, criterion) => ({ text: `Criterion ${criterion} of item ${index} mentions apples`, points: criterion + 1 })) },
    }),
  );
  writeFileSync(input, `${lines.join('\n')}\n`);
  return input;
}

function writePairs(directory: string): string {
  const input = join(directory, 'pairs.jsonl');
  const lines = Array.from({ length: itemCount }, (_, index) => JSON.stringify({ id: `pair-${index}`, prompt: `Question ${index}`, response_a: `A answers ${index}`, response_b: `B answers ${index}` }));
  writeFileSync(input, `${lines.join('\n')}\n`);
  return input;
}

/**
 * A judge that answers the first `free` requests at once and holds the rest until released:
 * the interrupt arrives while calls are in flight, and those calls then land within the grace period.
 */
function holdingJudge(free: number, answer: FakeJudgeScript) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const script: FakeJudgeScript = async (request) => {
    if (request.index >= free) await released;
    return answer(request);
  };
  return { script, release };
}

function waitFor(condition: () => boolean, done: Promise<CliResult>, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (condition()) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
    done.then((result) => {
      clearInterval(timer);
      if (!condition()) reject(new Error(`the run ended (${result.code}) before ${what}: ${result.stderr}`));
    });
  });
}

async function interruptMidRun(args: string[], signal: NodeJS.Signals, free: number, afterStop: () => void): Promise<{ result: CliResult; firstRunTexts: Set<string> }> {
  const run = startCli(args);
  let stderr = '';
  run.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // Some calls answered and some held in flight: now interrupt.
  await waitFor(() => fake!.requests.length > free, run.done, `the judge received ${free + 1} requests`);
  run.child.kill(signal);
  await waitFor(() => stderr.includes('received: stopping'), run.done, 'the CLI acknowledged the signal');
  afterStop();
  return { result: await run.done, firstRunTexts: new Set(fake!.requests.map((request) => request.userText)) };
}

const verdict: FakeJudgeScript = () => ({ content: binaryVerdict(true) });

describe('interrupting grade (SIGINT, SIGTERM, twice)', () => {
  test('SIGINT: exit 130 with "interrupted after N of M items", no error rows, no metrics; the rerun repeats no answered call', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-sigint-');
    const input = writeItems(directory);
    const out = join(directory, 'results.jsonl');
    const metrics = join(directory, 'metrics.json');
    const judge = holdingJudge(30, verdict);
    fake = await startFakeJudge(judge.script);
    const args = ['grade', '--input', input, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--cache', join(directory, 'cache.sqlite'), '--out', out, '--metrics', metrics, '--concurrency', '4', '--quiet'];
    // The held calls land inside the grace period, once the CLI has stopped admitting work.
    const { result, firstRunTexts } = await interruptMidRun(args, 'SIGINT', 30, judge.release);

    expect(result.code, result.stderr).toBe(130);
    const match = /interrupted after (\d+) of (\d+) items; rerun the same command to resume/.exec(result.stderr);
    expect(match, result.stderr).not.toBeNull();
    expect(Number(match![2])).toBe(itemCount);
    const rows = readFileSync(out, 'utf8').trim().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { id: string; status: string });
    expect(rows).toHaveLength(Number(match![1]));
    expect(rows.length).toBeLessThan(itemCount);
    expect(rows.every((row) => row.status === 'ok')).toBe(true);
    expect(rows.map((row) => row.id)).toEqual(rows.map((_, index) => `item-${index}`));
    expect(existsSync(metrics)).toBe(false);
    expect(result.stderr).not.toMatch(/\n\s+at /);

    const firstRunCalls = fake.requests.length;
    const rerun = await runCliInProcess(args);
    expect(rerun.code, rerun.stderr).toBe(0);
    const repeated = fake.requests.slice(firstRunCalls).filter((request) => firstRunTexts.has(request.userText));
    expect(repeated).toHaveLength(0);
    // Every planned call made exactly once over the two runs.
    expect(fake.requests.length).toBe(itemCount * criteriaPerItem);
    const finalRows = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { status: string });
    expect(finalRows).toHaveLength(itemCount);
    expect(finalRows.every((row) => row.status === 'ok')).toBe(true);
    expect(existsSync(metrics)).toBe(true);
  }, hangGuard(120_000));

  test('SIGTERM with --no-cache: exit 143, the run journal survives, and the rerun repeats no answered call', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-sigterm-');
    const input = writeItems(directory);
    const out = join(directory, 'results.jsonl');
    const judge = holdingJudge(24, verdict);
    fake = await startFakeJudge(judge.script);
    const args = ['grade', '--input', input, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', out, '--concurrency', '4', '--quiet'];
    const { result, firstRunTexts } = await interruptMidRun(args, 'SIGTERM', 24, judge.release);

    expect(result.code, result.stderr).toBe(143);
    expect(result.stderr).toMatch(/interrupted after \d+ of 40 items; rerun the same command to resume/);
    expect(existsSync(`${out}.journal.sqlite`)).toBe(true);

    const firstRunCalls = fake.requests.length;
    const rerun = await runCliInProcess(args);
    expect(rerun.code, rerun.stderr).toBe(0);
    const repeated = fake.requests.slice(firstRunCalls).filter((request) => firstRunTexts.has(request.userText));
    expect(repeated).toHaveLength(0);
    expect(fake.requests.length).toBe(itemCount * criteriaPerItem);
    // Completed: the journal of a --no-cache run is gone.
    expect(existsSync(`${out}.journal.sqlite`)).toBe(false);
  }, hangGuard(120_000));

  test('a second Ctrl-C exits at once (judge calls still hanging), with exit 130', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-twice-');
    const input = writeItems(directory);
    const out = join(directory, 'results.jsonl');
    fake = await startFakeJudge((request) => (request.index < 8 ? { content: binaryVerdict(true) } : { hang: true }));
    const run = startCli(['grade', '--input', input, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', out, '--concurrency', '4', '--timeout', '600', '--quiet']);
    let stderr = '';
    run.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await waitFor(() => fake!.requests.length >= 12, run.done, 'hanging calls were in flight');
    run.child.kill('SIGINT');
    await waitFor(() => stderr.includes('received: stopping'), run.done, 'the CLI acknowledged the first signal');
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('SIGINT again: exiting now; rerun the same command to resume');
    // The replies that did arrive are kept for the rerun.
    expect(existsSync(`${out}.journal.sqlite`)).toBe(true);
  }, hangGuard(60_000));
});

describe('interrupting compare', () => {
  test('SIGINT: exit 130, no error rows and no summary; the rerun repeats no answered call', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-compare-sigint-');
    const input = writePairs(directory);
    const out = join(directory, 'compare.jsonl');
    const judge = holdingJudge(20, () => ({ content: { explanation: 'A is better.', winner: '1' } }));
    fake = await startFakeJudge(judge.script);
    const args = ['compare', '--input', input, '--judge', 'openai:fake', '--judge-base-url', fake.baseUrl, '--cache', join(directory, 'cache.sqlite'), '--out', out, '--concurrency', '4', '--quiet'];
    const { result, firstRunTexts } = await interruptMidRun(args, 'SIGINT', 20, judge.release);

    expect(result.code, result.stderr).toBe(130);
    const match = /interrupted after (\d+) of 40 pairs; rerun the same command to resume/.exec(result.stderr);
    expect(match, result.stderr).not.toBeNull();
    const rows = readFileSync(out, 'utf8').trim().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { status: string });
    expect(rows).toHaveLength(Number(match![1]));
    expect(rows.every((row) => row.status === 'ok')).toBe(true);
    expect(existsSync(`${out}.summary.json`)).toBe(false);

    const firstRunCalls = fake.requests.length;
    const rerun = await runCliInProcess(args);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(fake.requests.slice(firstRunCalls).filter((request) => firstRunTexts.has(request.userText))).toHaveLength(0);
    expect(fake.requests.length).toBe(itemCount * 2);
    expect(existsSync(`${out}.summary.json`)).toBe(true);
  }, hangGuard(120_000));
});

describe('interrupting generate stays correct (it already was; SIGTERM is now graceful too)', () => {
  test('SIGTERM with --no-cache: exit 143, the rubrics written are complete items, the journal survives, and the rerun repeats no answered call', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-generate-sigterm-');
    const input = join(directory, 'prompts.jsonl');
    writeFileSync(input, `${Array.from({ length: itemCount }, (_, index) => JSON.stringify({ id: `q${index}`, prompt: `Explain topic number ${index}.` })).join('\n')}\n`);
    const out = join(directory, 'rubrics.jsonl');
    const rubric: FakeJudgeScript = () => ({ content: answer(['because', 'example', 'first', 'second', 'clear', 'rain', 'cause', 'effect'].map((word) => mentions(word))) });
    // The calls for q0–q9 are answered; later ones hang (generate cancels calls in flight at once on a signal).
    // By prompt, not by arrival: generate keeps --concurrency prompts in flight in input order, so a hanging
    // call that arrived before an answered one of a later prompt would stall it with fewer calls in flight.
    const answered = new Set<string>();
    fake = await startFakeJudge((request) => {
      if (!(Number(/topic number (\d+)\./.exec(request.userText)?.[1]) < 10)) return { hang: true };
      answered.add(request.userText);
      return rubric(request);
    });
    const args = ['generate', '--input', input, '--out', out, '--generator', 'openai:writer', '--generator-base-url', fake.baseUrl, '--no-cache', '--concurrency', '4', '--quiet'];
    // 14 requests seen: the 4 slots (--concurrency 4) all hold hanging calls, so every answered one was read.
    const { result } = await interruptMidRun(args, 'SIGTERM', 13, () => undefined);

    expect(result.code, result.stderr).toBe(143);
    expect(result.stderr).toMatch(/interrupted: rubrics written so far are complete; rerun the same command/);
    const written = existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n').filter((line) => line !== '') : [];
    expect(written.length).toBeLessThan(itemCount);
    for (const line of written) expect((JSON.parse(line) as { rubric: { criteria: unknown[] } }).rubric.criteria.length).toBeGreaterThan(0);
    expect(existsSync(`${out}.journal.sqlite`)).toBe(true);

    fake.setScript(rubric);
    const firstRunCalls = fake.requests.length;
    const rerun = await runCliInProcess(args);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(fake.requests.slice(firstRunCalls).filter((request) => answered.has(request.userText))).toHaveLength(0);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(itemCount);
    expect(existsSync(`${out}.journal.sqlite`)).toBe(false);
  }, hangGuard(120_000));
});
