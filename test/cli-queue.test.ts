/**
 * Distributed grading through the real CLI: worker processes and a producer on a real
 * redis-server, a loopback judge. The producer runs in the test's own process: it shares nothing
 * with the workers but Redis, and what is killed is always a worker process. Kills and restarts
 * are triggered by observed events (a worker's log line, the judge's request count), never by sleeps.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, vi } from 'vitest';
import { binaryVerdict, startFakeJudge, type FakeJudge, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { redisTest } from '../src/testing/redis-fixture.js';
import { runCliInProcess, startCli, type CliResult } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

type CliProcess = ReturnType<typeof startCli>;

/**
 * What a test of this file starts, stopped after it: CLI processes (killed, before the judges the
 * test opened earlier close), and in-process producers a failed test left running (their signal
 * aborts, as Ctrl-C would). Each test has its own Redis, judges and folders: the tests run side by side.
 */
const queueTest = redisTest.extend<{
  startProcess: (args: string[], env?: NodeJS.ProcessEnv) => CliProcess;
  /** A worker process allowed to call `fake` with its key, unless `env` configures its endpoint instead. */
  startWorker: (fake: FakeJudge, queue: string, extra?: string[], env?: NodeJS.ProcessEnv) => CliProcess;
  producerSignal: AbortSignal;
}>({
  startProcess: async ({ closeAfter }, use) => {
    await use((args, env) => {
      const started = startCli(args, { env });
      closeAfter({
        close: async () => {
          if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
          await started.done;
        },
      });
      return started;
    });
  },
  startWorker: async ({ startProcess }, use) => {
    await use((fake, queue, extra = [], env) => startProcess(['worker', '--queue', queue, '--concurrency', '8', '--lease', '2', ...(env ? [] : ['--allow-endpoint', fake.baseUrl]), ...extra], env));
  },
  producerSignal: async ({ closeAfter }, use) => {
    const stop = new AbortController();
    closeAfter({ close: () => stop.abort() });
    await use(stop.signal);
  },
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

/** Resolves when the process's stderr shows the text. */
function whenLogged(process: CliProcess, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    process.child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(text)) resolve();
    });
    process.done.then((result: CliResult) => reject(new Error(`ended before logging "${text}": ${result.stderr}`)));
  });
}

describe('distributed grading (grade --queue, rubricate worker)', { concurrent: true }, () => {
  queueTest(
    '3 workers and a producer on 1,000 items, one worker killed with -9: every item once, in order, no stored reply paid twice; a resubmission costs 0 calls and matches a single-process run byte for byte',
    async ({ redis, makeTempDir, closeAfter, startWorker, producerSignal }) => {
      const directory = makeTempDir('rubricate-queue-');
      const fake = closeAfter(await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)), delayMs: 2, usage: { prompt_tokens: 50, completion_tokens: 5 } })));
      const input = writeItems(directory, 1000);
      const judge = ['--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl];
      const workers = [startWorker(fake, redis.url), startWorker(fake, redis.url), startWorker(fake, redis.url)];
      const victim = workers[1];
      const victimBusy = whenLogged(victim, 'graded chunk');

      const producer = runCliInProcess(['grade', '--input', input, '--out', join(directory, 'queued.jsonl'), '--queue', redis.url, ...judge], producerSignal);
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
      const late = startWorker(fake, redis.url, ['--exit-when-idle']);
      const again = await runCliInProcess(['grade', '--input', input, '--out', join(directory, 'again.jsonl'), '--queue', redis.url, ...judge], producerSignal);
      expect(again.code, again.stderr).toBe(3);
      expect(fake.requests.length).toBe(callsBefore);
      expect(readFileSync(join(directory, 'again.jsonl'), 'utf8')).toBe(readFileSync(join(directory, 'single.jsonl'), 'utf8'));
      expect((await late.done).code).toBe(0);
    },
    240_000,
  );

  queueTest('a Redis restart mid-run pauses the run, which then completes with every item and no reply paid twice', async ({ redis, makeTempDir, closeAfter, startWorker, producerSignal }) => {
    const directory = makeTempDir('rubricate-queue-');
    const fake = closeAfter(await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)), delayMs: 5 })));
    const input = writeItems(directory, 300);
    const worker = startWorker(fake, redis.url, ['--exit-when-idle']);
    const producer = runCliInProcess(['grade', '--input', input, '--out', join(directory, 'queued.jsonl'), '--queue', redis.url, '--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl], producerSignal);
    await vi.waitFor(() => expect(fake.requests.length).toBeGreaterThanOrEqual(100), { timeout: hangGuard(60_000), interval: 10 });
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
  }, hangGuard(90_000));
});

/**
 * A judge that answers the items of the first chunk (`Answer 0.` to `Answer 4.`) at once and
 * holds every other call until released: a run is mid-way, by construction, when the test acts.
 */
function firstChunkJudge() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const script = async (request: FakeJudgeRequest) => {
    if (!/^Answer [0-4]\.$/.test(request.response ?? '')) await released;
    return { content: binaryVerdict(verdictFor(request)) };
  };
  return { script, release };
}

function readLines(file: string): Array<{ id: string; status: string; line: number; criteria: Array<{ error?: { code: string; message: string } }> }> {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as never);
}

/** A TCP port where nothing listens, and a server that accepts connections and never says a word. */
async function unreachable(): Promise<{ closedPort: number; silent: Server; silentPort: number }> {
  const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  const closed = createServer();
  const closedPort = await listen(closed);
  await new Promise((resolve) => closed.close(resolve));
  const silent = createServer(() => {});
  return { closedPort, silent, silentPort: await listen(silent) };
}

describe('the queue and its Redis: outages, Ctrl-C, the endpoints a worker calls', { concurrent: true }, () => {
  queueTest('a Redis nobody answers at start-up: grade --queue, grade --store, worker and cache export stop with STORE_UNAVAILABLE (exit 4), the URL redacted, no judge called', async ({ makeTempDir, closeAfter, producerSignal }) => {
    const directory = makeTempDir('rubricate-queue-');
    const input = writeItems(directory, 4);
    const fake = closeAfter(await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)) })));
    const { closedPort, silent, silentPort } = await unreachable();
    // cache export reads an existing cache (a missing one is refused before the store is tried).
    writeFileSync(join(directory, 'cache.sqlite'), '');
    try {
      const url = (port: number) => `redis://:hunter2pass@127.0.0.1:${port}`;
      const runs = await Promise.all(
        [closedPort, silentPort].flatMap((port) => [
          runCliInProcess(['grade', '--input', input, '--out', join(directory, `out-${port}.jsonl`), '--queue', url(port), '--queue-timeout', '1', '--quiet', '--judge', 'openai:fake-judge', '--judge-base-url', 'http://127.0.0.1:9/v1'], producerSignal),
          runCliInProcess(['worker', '--queue', url(port), '--queue-timeout', '1'], producerSignal),
          // The bound of every Redis --store: 5 s.
          runCliInProcess(['cache', 'export', '--cache', join(directory, 'cache.sqlite'), '--store', url(port)], producerSignal),
          // A grading run's store, with a user name too: it stops before any judge call.
          runCliInProcess(['grade', '--input', input, '--out', join(directory, `stored-${port}.jsonl`), '--store', `redis://user:s3cret@127.0.0.1:${port}`, '--quiet', '--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl], producerSignal),
        ]),
      );
      for (const [index, run] of runs.entries()) {
        const port = index < 4 ? closedPort : silentPort;
        expect(run.code, run.stderr).toBe(4);
        expect(run.stderr).toMatch(new RegExp(`error \\[STORE_UNAVAILABLE\\]: field (queue|store): the (queue|store) at redis://127\\.0\\.0\\.1:${port} is unavailable: could not connect within`));
        expect(run.stderr).not.toContain('hunter2pass');
        expect(run.stderr).not.toContain('s3cret');
      }
      expect(fake.requests).toHaveLength(0);
      expect(existsSync(join(directory, `out-${closedPort}.jsonl`))).toBe(false);
      // The bound is a queue's: given without one, it is refused by name.
      const misplaced = await runCliInProcess(['grade', '--input', input, '--out', join(directory, 'plain.jsonl'), '--queue-timeout', '1', '--judge', 'none']);
      expect(misplaced.code).toBe(2);
      expect(misplaced.stderr).toContain('error [CONFIG_INVALID]: field queue-timeout: --queue-timeout applies to a run with --queue');
    } finally {
      silent.close();
    }
  }, hangGuard(30_000));

  queueTest('Redis gone mid-run: the producer and the worker say so and stop with STORE_UNAVAILABLE (exit 4) after --queue-timeout', async ({ redis, makeTempDir, closeAfter, startWorker, startProcess }) => {
    const directory = makeTempDir('rubricate-queue-');
    const judge = firstChunkJudge();
    const fake = closeAfter(await startFakeJudge(judge.script));
    const input = writeItems(directory, 40);
    const out = join(directory, 'queued.jsonl');
    writeFileSync(out, 'an earlier output\n');
    // The queue's bound must not run out while Redis is still there: a loaded machine can hold a ping's
    // answer past one second, so it grows with the load (the test then waits that much after the outage).
    const queueTimeout = String(Math.ceil(hangGuard(1_000) / 1_000));
    const worker = startWorker(fake, redis.url, ['--queue-timeout', queueTimeout]);
    const firstChunk = whenLogged(worker, 'graded chunk 0 ');
    // The producer runs as its own process, as a user runs it: what BullMQ leaves behind when its connections are
    // dropped mid-outage must not turn the documented exit 4 into a crash.
    const producer = startProcess(['grade', '--input', input, '--out', out, '--queue', redis.url, '--chunk-size', '5', '--queue-timeout', queueTimeout, '--quiet', '--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl]);
    await firstChunk;
    await redis.stop();
    judge.release();
    const produced = await producer.done;
    expect(produced.code, produced.stderr).toBe(4);
    expect(produced.stderr).toContain(`queue: lost the queue at redis://127.0.0.1:${redis.port}`);
    expect(produced.stderr).toMatch(/error \[STORE_UNAVAILABLE\]: field queue: the queue at redis:\/\/127\.0\.0\.1:\d+ is unavailable: no answer for \d/);
    // The failed run replaced nothing.
    expect(readFileSync(out, 'utf8')).toBe('an earlier output\n');
    const stopped = await worker.done;
    expect(stopped.code, stopped.stderr).toBe(4);
    expect(stopped.stderr).toContain(`worker: lost the queue at redis://127.0.0.1:${redis.port}`);
    expect(stopped.stderr).toMatch(/error \[STORE_UNAVAILABLE\]: field queue: the queue at redis:\/\/127\.0\.0\.1:\d+ is unavailable: no answer for \d/);
  }, hangGuard(60_000));

  queueTest('the first Ctrl-C of a queued run takes its unclaimed chunks back, writes the finished ones in order and exits 130', async ({ redis, makeTempDir, closeAfter, startWorker, startProcess }) => {
    const directory = makeTempDir('rubricate-queue-');
    const judge = firstChunkJudge();
    const fake = closeAfter(await startFakeJudge(judge.script));
    const input = writeItems(directory, 40);
    const out = join(directory, 'queued.jsonl');
    const metrics = join(directory, 'metrics.json');
    const worker = startWorker(fake, redis.url);
    const firstChunk = whenLogged(worker, 'graded chunk 0 ');
    const producer = startProcess(['grade', '--input', input, '--out', out, '--metrics', metrics, '--queue', redis.url, '--chunk-size', '5', '--quiet', '--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl]);
    const stopping = whenLogged(producer, 'SIGINT received: stopping');
    await firstChunk;
    producer.child.kill('SIGINT');
    await stopping;
    // The chunks a worker holds may still land within --drain-timeout.
    judge.release();
    const result = await producer.done;
    expect(result.code, result.stderr).toBe(130);
    const match = /interrupted after (\d+) of 41 items; rerun the same command to resume/.exec(result.stderr);
    expect(match, result.stderr).not.toBeNull();
    const rows = readLines(out);
    expect(rows).toHaveLength(Number(match![1]));
    expect(rows.length).toBeGreaterThanOrEqual(5);
    expect(rows.length).toBeLessThan(41);
    expect(rows.length % 5).toBe(0);
    expect(rows.map((row) => row.line)).toEqual(rows.map((_, index) => index + 1));
    // Every row graded, but the bad input line (line 21), which is a result in its place when its chunk landed.
    expect(rows.filter((row) => row.status !== 'ok').map((row) => [row.line, row.status])).toEqual(rows.length > 20 ? [[21, 'invalid']] : []);
    expect(existsSync(metrics)).toBe(false);
    // Nothing of the run is left waiting for a worker.
    const queue = new Queue('grade', { connection: { host: '127.0.0.1', port: redis.port }, prefix: 'rubricate' });
    try {
      expect(await queue.getJobCounts('waiting', 'delayed', 'prioritized')).toEqual({ waiting: 0, delayed: 0, prioritized: 0 });
    } finally {
      await queue.close();
    }
  }, hangGuard(60_000));

  queueTest('a worker stopped mid-chunk hands its chunks back whole: another worker grades them, no item comes out as an error', async ({ redis, makeTempDir, closeAfter, startWorker, producerSignal }) => {
    const directory = makeTempDir('rubricate-queue-');
    const judge = firstChunkJudge();
    const fake = closeAfter(await startFakeJudge(judge.script));
    const input = writeItems(directory, 10);
    const first = startWorker(fake, redis.url, ['--drain-timeout', '0']);
    const firstChunk = whenLogged(first, 'graded chunk 0 ');
    const producer = runCliInProcess(['grade', '--input', input, '--out', join(directory, 'queued.jsonl'), '--queue', redis.url, '--chunk-size', '5', '--quiet', '--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl], producerSignal);
    await firstChunk;
    // It holds the next chunk, its calls waiting on the judge: stopped now, those calls are cancelled.
    first.child.kill('SIGTERM');
    expect((await first.done).code).toBe(0);
    judge.release();
    startWorker(fake, redis.url, ['--exit-when-idle']);
    const produced = await producer;
    expect(produced.code, produced.stderr).toBe(3); // the one invalid line
    const rows = readLines(join(directory, 'queued.jsonl'));
    expect(rows.map((row) => row.status).filter((status) => status !== 'invalid')).toEqual(Array.from({ length: 10 }, () => 'ok'));
  }, hangGuard(60_000));

  queueTest("a worker calls only the endpoints its operator allowed: a run naming another gets a clear error per item, and that endpoint receives nothing", async ({ redis, makeTempDir, closeAfter, startWorker, producerSignal }) => {
    const directory = makeTempDir('rubricate-queue-');
    const key = 'worker-own-secret-7f3a9c21';
    const fake = closeAfter(await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)) })));
    const foreign = await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)) }));
    try {
      const input = writeItems(directory, 6);
      // Its endpoint is its own OPENAI_BASE_URL: the default allow-list.
      const worker = startWorker(fake, redis.url, [], { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: key });
      const grade = (baseUrl: string, out: string) =>
        runCliInProcess(['grade', '--input', input, '--out', out, '--queue', redis.url, '--quiet', '--no-cache', '--judge', 'openai:fake-judge', '--judge-base-url', baseUrl], producerSignal);

      const foreignUrl = foreign.baseUrl.replace('http://', 'http://producer:hunter2pass@');
      const refused = await grade(foreignUrl, join(directory, 'refused.jsonl'));
      expect(refused.code, refused.stderr).toBe(3);
      expect(foreign.requests).toHaveLength(0);
      const rows = readLines(join(directory, 'refused.jsonl'));
      expect(rows.map((row) => row.status)).toEqual(['error', 'error', 'error', 'invalid', 'error', 'error', 'error']);
      for (const row of rows.filter((entry) => entry.status === 'error')) {
        expect(row.criteria.length).toBeGreaterThan(0);
        for (const criterion of row.criteria) {
          expect(criterion.error?.code).toBe('JUDGE_ENDPOINT_NOT_ALLOWED');
          expect(criterion.error?.message).toContain(`at http://[REDACTED]@127.0.0.1:${new URL(foreign.baseUrl).port}/v1`);
          expect(criterion.error?.message).toContain('--allow-endpoint');
        }
      }
      expect(refused.stderr).toContain('JUDGE_ENDPOINT_NOT_ALLOWED');
      const written = readFileSync(join(directory, 'refused.jsonl'), 'utf8') + refused.stderr;
      expect(written).not.toContain('hunter2pass');
      expect(written).not.toContain(key);

      // The same run on the worker's own endpoint is graded, with the worker's key.
      const graded = await grade(fake.baseUrl, join(directory, 'graded.jsonl'));
      expect(graded.code, graded.stderr).toBe(3);
      expect(readLines(join(directory, 'graded.jsonl')).filter((row) => row.status === 'ok')).toHaveLength(6);
      expect(fake.requests).toHaveLength(6);
      expect(fake.requests.every((request) => request.headers.authorization === `Bearer ${key}`)).toBe(true);
      expect(foreign.requests).toHaveLength(0);

      worker.child.kill('SIGTERM');
      const stopped = await worker.done;
      expect(stopped.stderr).toContain('worker: the worker refused this run');
      expect(stopped.stderr).not.toContain(key);
      expect(stopped.stderr).not.toContain('hunter2pass');
    } finally {
      await foreign.close();
    }
  }, hangGuard(60_000));
});

describe('array jobs (grade --shard I/N, rubricate merge)', { concurrent: true }, () => {
  queueTest('three shards merged are byte for byte the single run; a shard given twice is refused', async ({ makeTempDir, closeAfter }) => {
    const directory = makeTempDir('rubricate-shard-');
    const fake = closeAfter(await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)) })));
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
    expect(overlapping.code).toBe(2);
    expect(overlapping.stderr).toContain('are both shard 0/3');
    const badShard = await runCliInProcess(['grade', '--input', input, '--out', join(directory, 'x.jsonl'), '--shard', '3/3', ...judge]);
    expect(badShard.code).toBe(2);
  }, hangGuard(60_000));
});
