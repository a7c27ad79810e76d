/**
 * Distributed grading through the real CLI: worker processes and a producer on a real
 * redis-server, a loopback judge. The producer runs in the test's own process: it shares nothing
 * with the workers but Redis, and what is killed is always a worker process. Kills and restarts
 * are triggered by observed events (a worker's log line, the judge's request count), never by sleeps.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, vi } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { binaryVerdict, startFakeJudge, type FakeJudge, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { redisTest } from '../src/testing/redis-fixture.js';
import { runCliInProcess, startCli, type CliResult } from './helpers.js';

let fake: FakeJudge | undefined;
const children: Array<ReturnType<typeof startCli>> = [];
/** Stops an in-process producer that a failed test left running, as Ctrl-C would. */
let producers = new AbortController();
afterEach(async () => {
  producers.abort();
  producers = new AbortController();
  for (const child of children.splice(0)) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
  await fake?.close();
  fake = undefined;
});

function verdictFor(request: FakeJudgeRequest): boolean {
  return createHash('sha256').update(`${request.criteria[0]?.text}\u0000${request.response}`).digest()[0] < 128;
}

function writeItems(directory: string, count: number): string {
  const file = join(directory, 'items.jsonl');
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({ id: `item-${index}`, prompt: `Question ${index}?`, response: `Answer ${index}.`, rubric: { criteria: [{ text: `Answers question ${index}`, points: 1 }] } }),
  );
  // One bad line in the middle: it is a result too, in its place.
  lines.splice(Math.floor(count / 2), 0, '{"id": "broken", "prompt": ');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function without(file: string, field: string): string[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => {
    const record = JSON.parse(line) as Record<string, unknown>;
    delete record[field];
    return JSON.stringify(record);
  });
}

function startWorker(queue: string, extra: string[] = []) {
  const worker = startCli(['worker', '--queue', queue, '--concurrency', '8', '--lease', '2', ...extra]);
  children.push(worker);
  return worker;
}

/** Resolves when the process's stderr shows the text. */
function whenLogged(process: ReturnType<typeof startCli>, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    process.child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(text)) resolve();
    });
    process.done.then((result: CliResult) => reject(new Error(`ended before logging "${text}": ${result.stderr}`)));
  });
}

describe('distributed grading (grade --queue, rubricate worker)', () => {
  redisTest(
    '3 workers and a producer on 1,000 items, one worker killed with -9: every item once, in order, no stored reply paid twice; a resubmission costs 0 calls and matches a single-process run byte for byte',
    async ({ redis, makeTempDir }) => {
      const directory = makeTempDir('rubricate-queue-');
      fake = await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)), delayMs: 2, usage: { prompt_tokens: 50, completion_tokens: 5 } }));
      const input = writeItems(directory, 1000);
      const judge = ['--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl];
      const workers = [startWorker(redis.url), startWorker(redis.url), startWorker(redis.url)];
      const victim = workers[1];
      const victimBusy = whenLogged(victim, 'graded chunk');

      const producer = runCliInProcess(['grade', '--input', input, '--out', join(directory, 'queued.jsonl'), '--queue', redis.url, ...judge], producers.signal);
      await victimBusy;
      victim.child.kill('SIGKILL');
      expect((await victim.done).signal).toBe('SIGKILL');
      const produced = await producer;
      expect(produced.code, produced.stderr).toBe(3); // the one invalid line
      expect(produced.stderr).toContain('1001 items: 1000 ok, 0 error, 1 invalid');

      const queued = readFileSync(join(directory, 'queued.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id?: string; line: number; status: string });
      expect(queued).toHaveLength(1001);
      expect(queued.map((record) => record.line)).toEqual(Array.from({ length: 1001 }, (_, index) => index + 1));
      expect(new Set(queued.map((record) => record.id)).size).toBe(1001);
      // Only calls the killed worker had in flight (at most its concurrency) may have been made twice.
      const prompts = fake.requests.map((request) => request.userText);
      expect(new Set(prompts).size).toBe(1000);
      expect(prompts.length - 1000).toBeLessThanOrEqual(8);

      // A single process reading the same store: 0 calls, the same verdicts in the same order.
      const callsBefore = fake.requests.length;
      const single = await runCliInProcess(['grade', '--input', input, '--out', join(directory, 'single.jsonl'), '--store', redis.url, ...judge]);
      expect(single.code, single.stderr).toBe(3);
      expect(fake.requests.length).toBe(callsBefore);
      expect(without(join(directory, 'queued.jsonl'), 'usage')).toEqual(without(join(directory, 'single.jsonl'), 'usage'));

      // The same file submitted again, to one more worker that leaves when idle (the only one left,
      // so it gets the chunks whatever the timing): 0 calls, byte-identical.
      for (const worker of [workers[0], workers[2]]) worker.child.kill('SIGTERM');
      await Promise.all([workers[0].done, workers[2].done]);
      const late = startWorker(redis.url, ['--exit-when-idle']);
      const again = await runCliInProcess(['grade', '--input', input, '--out', join(directory, 'again.jsonl'), '--queue', redis.url, ...judge], producers.signal);
      expect(again.code, again.stderr).toBe(3);
      expect(fake.requests.length).toBe(callsBefore);
      expect(readFileSync(join(directory, 'again.jsonl'), 'utf8')).toBe(readFileSync(join(directory, 'single.jsonl'), 'utf8'));
      expect((await late.done).code).toBe(0);
    },
    240_000,
  );

  redisTest('a Redis restart mid-run pauses the run, which then completes with every item and no reply paid twice', async ({ redis, makeTempDir }) => {
    const directory = makeTempDir('rubricate-queue-');
    fake = await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)), delayMs: 5 }));
    const input = writeItems(directory, 300);
    const worker = startWorker(redis.url, ['--exit-when-idle']);
    const producer = runCliInProcess(['grade', '--input', input, '--out', join(directory, 'queued.jsonl'), '--queue', redis.url, '--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl], producers.signal);
    await vi.waitFor(() => expect(fake!.requests.length).toBeGreaterThanOrEqual(100), { timeout: 60_000, interval: 10 });
    await redis.stop();
    await redis.start();
    const produced = await producer;
    expect(produced.code, produced.stderr).toBe(3);
    const queued = readFileSync(join(directory, 'queued.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { line: number; status: string });
    expect(queued.map((record) => record.line)).toEqual(Array.from({ length: 301 }, (_, index) => index + 1));
    expect(queued.filter((record) => record.status === 'ok')).toHaveLength(300);
    const prompts = fake.requests.map((request) => request.userText);
    expect(new Set(prompts).size).toBe(300);
    expect(prompts.length - 300).toBeLessThanOrEqual(8);
    expect((await worker.done).code).toBe(0);
  }, 90_000);
});

describe('array jobs (grade --shard I/N, rubricate merge)', () => {
  test('three shards merged are byte for byte the single run; overlapping shards are refused', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-shard-');
    fake = await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)) }));
    const input = writeItems(directory, 40);
    const judge = ['--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl, '--no-cache', '--quiet'];
    expect((await runCliInProcess(['grade', '--input', input, '--out', join(directory, 'whole.jsonl'), ...judge])).code).toBe(3);
    const shards = [0, 1, 2].map((index) => join(directory, `shard-${index}.jsonl`));
    for (const [index, out] of shards.entries()) expect([0, 3]).toContain((await runCliInProcess(['grade', '--input', input, '--out', out, '--shard', `${index}/3`, ...judge])).code);
    expect(readFileSync(shards[0], 'utf8').trim().split('\n')).toHaveLength(14);
    const merged = await runCliInProcess(['merge', ...shards, '--out', join(directory, 'merged.jsonl')]);
    expect(merged.code, merged.stderr).toBe(0);
    expect(readFileSync(join(directory, 'merged.jsonl'), 'utf8')).toBe(readFileSync(join(directory, 'whole.jsonl'), 'utf8'));
    const overlapping = await runCliInProcess(['merge', shards[0], shards[0], '--out', join(directory, 'bad.jsonl')]);
    expect(overlapping.code).toBe(3);
    expect(overlapping.stderr).toContain('appears in two shards');
    const badShard = await runCliInProcess(['grade', '--input', input, '--out', join(directory, 'x.jsonl'), '--shard', '3/3', ...judge]);
    expect(badShard.code).toBe(2);
  }, 60_000);
});
