/**
 * Fleet-wide limits and the shared store, through the real CLI in separate processes, a
 * real redis-server and a loopback judge that records what it receives. Where the timing of
 * start-up does not matter, one participant runs in the test's own process (`runCliInProcess`)
 * and the others are child processes: they still share nothing but Redis, and one CLI start-up
 * is saved per case.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, vi } from 'vitest';
import { binaryVerdict, startFakeJudge, type FakeJudge, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { redisTest } from '../src/testing/redis-fixture.js';
import { estimateRequestTokens } from '../src/fleet/pace.js';
import { runCli, runCliInProcess, startCli } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';


let fake: FakeJudge | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function verdictFor(request: FakeJudgeRequest): boolean {
  return createHash('sha256').update(`${request.criteria[0]?.text}\u0000${request.response}`).digest()[0] < 128;
}

/** Items with one criterion each; `name` keeps different files' requests apart. */
function writeItems(directory: string, name: string, count: number): string {
  const file = join(directory, `${name}.jsonl`);
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({ id: `${name}-${index}`, prompt: `Question ${index} of ${name}?`, response: `Answer ${index} of ${name}.`, rubric: { criteria: [{ text: `Answers question ${index} of ${name}`, points: 1 }] } }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** A judge that answers after `delayMs` and records how many calls it had in flight at most. */
function recordingJudge(delayMs: number) {
  const state = { inFlight: 0, maxInFlight: 0, arrivals: [] as number[] };
  const script = async (request: FakeJudgeRequest) => {
    state.arrivals.push(Date.now());
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    state.inFlight -= 1;
    return { content: binaryVerdict(verdictFor(request)), usage: { prompt_tokens: 100, completion_tokens: 10 } };
  };
  return { state, script };
}

/** Result lines without their usage: a reply read from the cache counts as a cache hit, not a call. */
function verdictLines(file: string): string[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => {
    const { usage: _usage, ...rest } = JSON.parse(line) as Record<string, unknown>;
    return JSON.stringify(rest);
  });
}

function gradeArgs(input: string, out: string, judgeUrl: string, extra: string[]): string[] {
  return ['grade', '--input', input, '--out', out, '--judge', 'openai:fake-judge', '--judge-base-url', judgeUrl, '--quiet', ...extra];
}

describe('fleet-wide limits (3 processes, one Redis)', () => {
  redisTest('--global-concurrency holds across processes: the judge never has more calls in flight than the cap', async ({ redis, makeTempDir }) => {
    const directory = makeTempDir('rubricate-fleet-');
    const judge = recordingJudge(40);
    fake = await startFakeJudge(judge.script);
    const runs = ['a', 'b', 'c'].map((name, index) =>
      (index === 0 ? runCliInProcess : runCli)(gradeArgs(writeItems(directory, name, 40), join(directory, `${name}.out.jsonl`), fake!.baseUrl, ['--store', redis.url, '--concurrency', '8', '--global-concurrency', '4'])),
    );
    const results = await Promise.all(runs);
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(fake.requests).toHaveLength(120);
    expect(judge.state.maxInFlight).toBeLessThanOrEqual(4);
    // The cap is used, not just respected by accident: several calls did run at once.
    expect(judge.state.maxInFlight).toBeGreaterThanOrEqual(3);
  }, hangGuard(60_000));

  redisTest("a killed process's fleet slots are released after its lease: another process then gets them and finishes", async ({ redis, makeTempDir }) => {
    const directory = makeTempDir('rubricate-fleet-');
    // Calls for the first file never get an answer: its process holds both fleet slots until it is killed.
    fake = await startFakeJudge(async (request) => {
      if (request.userText.includes('of held')) await new Promise(() => {});
      return { content: binaryVerdict(verdictFor(request)) };
    });
    const fleet = ['--store', redis.url, '--global-concurrency', '2', '--lease', '2', '--concurrency', '4'];
    const holder = startCli(gradeArgs(writeItems(directory, 'held', 2), join(directory, 'held.out.jsonl'), fake.baseUrl, fleet));
    await vi.waitFor(() => expect(fake!.requests.filter((request) => request.userText.includes('of held'))).toHaveLength(2), { timeout: hangGuard(60_000), interval: 10 });
    holder.child.kill('SIGKILL');
    expect((await holder.done).signal).toBe('SIGKILL');
    const next = await runCliInProcess(gradeArgs(writeItems(directory, 'next', 3), join(directory, 'next.out.jsonl'), fake.baseUrl, fleet));
    expect(next.code, next.stderr).toBe(0);
    expect(fake.requests.filter((request) => request.userText.includes('of next'))).toHaveLength(3);
  }, hangGuard(120_000));

  redisTest('--rate-limit holds across processes: 30 calls at 600 per minute (10 per second) take at least two seconds', async ({ redis, makeTempDir }) => {
    const directory = makeTempDir('rubricate-fleet-');
    const judge = recordingJudge(5);
    fake = await startFakeJudge(judge.script);
    const results = await Promise.all(
      ['a', 'b', 'c'].map((name, index) =>
        (index === 0 ? runCliInProcess : runCli)(gradeArgs(writeItems(directory, name, 10), join(directory, `${name}.out.jsonl`), fake!.baseUrl, ['--store', redis.url, '--concurrency', '8', '--rate-limit', '600'])),
      ),
    );
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const arrivals = [...judge.state.arrivals].sort((a, b) => a - b);
    expect(arrivals).toHaveLength(30);
    // Three windows of 10: the third starts 2 s after the first. Calls reach the judge a little after
    // their window opens (more so on a loaded machine), so allow half a second of that; without the
    // limit these 30 calls of 5 ms take a few tens of milliseconds.
    expect(arrivals[29] - arrivals[0]).toBeGreaterThanOrEqual(1_500);
  }, hangGuard(60_000));
});

describe('fleet pace: RPM and TPM across processes, a shared pause after 429', () => {
  redisTest('--rate-limit RPM,TPM holds across 3 processes: the tokens reserved for the calls in each second stay within the budget', async ({ redis, makeTempDir }) => {
    const directory = makeTempDir('rubricate-fleet-');
    const arrivals: Array<{ at: number; estimate: number }> = [];
    fake = await startFakeJudge((request) => {
      const estimate = estimateRequestTokens({ messages: request.messages.map((message) => ({ role: message.role as 'user', content: message.content })), maxTokens: Number(request.body.max_tokens ?? request.body.max_completion_tokens) || undefined });
      arrivals.push({ at: Date.now(), estimate });
      // The reply uses what was reserved, so no window gets tokens back: each holds exactly two calls.
      // (A smaller usage refunds the rest, and a call asking right after a refund would fit a third
      // in the window or not depending on when it asks: a race with the clock.)
      return { content: binaryVerdict(verdictFor(request)), usage: { prompt_tokens: estimate - 10, completion_tokens: 10 } };
    });
    // Calibrate: what one call of these items reserves; then a budget of two calls' worth per second.
    const calibration = await runCliInProcess(gradeArgs(writeItems(directory, 'calibration', 1), join(directory, 'calibration.out.jsonl'), fake.baseUrl, ['--no-cache']));
    expect(calibration.code, calibration.stderr).toBe(0);
    const perCall = arrivals[0].estimate;
    const perSecond = 2 * perCall + 20;
    arrivals.length = 0;
    const results = await Promise.all(
      ['a', 'b', 'c'].map((name, index) =>
        (index === 0 ? runCliInProcess : runCli)(gradeArgs(writeItems(directory, name, 4), join(directory, `${name}.out.jsonl`), fake!.baseUrl, ['--store', redis.url, '--concurrency', '4', '--rate-limit', `600,${60 * perSecond}`])),
      ),
    );
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(arrivals).toHaveLength(12);
    const sorted = [...arrivals].sort((first, second) => first.at - second.at);
    // Windows of one second hold at most two calls: 12 calls span at least 5 windows (a little less at the judge, which sees them later than they were admitted).
    expect(sorted[11].at - sorted[0].at).toBeGreaterThanOrEqual(4_500);
    // Any second of arrivals overlaps at most two windows: at most twice the budget of tokens reserved.
    // The judge sees a call a little after its window admitted it; on a loaded machine that delay can
    // reach past a window's end, so each second of extra delay the load allows counts one window more.
    const windowsInASecond = 2 + Math.ceil((hangGuard(1_000) - 1_000) / 1_000);
    for (const first of sorted) {
      const inSecond = sorted.filter((arrival) => arrival.at >= first.at && arrival.at < first.at + 1_000);
      expect(inSecond.reduce((total, arrival) => total + arrival.estimate, 0)).toBeLessThanOrEqual(windowsInASecond * perSecond);
    }
  }, hangGuard(120_000));

  redisTest('a 429 with Retry-After seen by one process pauses every process sharing the store', async ({ redis, makeTempDir }) => {
    const directory = makeTempDir('rubricate-fleet-');
    const arrivals: Array<{ at: number; file: string }> = [];
    let pausedAt: number | undefined;
    // A call admitted just before the pause still reaches the judge after it: allow for that (longer
    // on a loaded machine), and keep two seconds of pause beyond it in which no call may come.
    const inFlightSlackMs = hangGuard(1_000);
    const pauseSeconds = 2 + Math.ceil(inFlightSlackMs / 1_000);
    fake = await startFakeJudge(async (request) => {
      const file = /of (\w+)\./.exec(request.userText)?.[1] ?? '?';
      arrivals.push({ at: Date.now(), file });
      // Once both processes are calling, one call of "a" is told to wait.
      if (pausedAt === undefined && file === 'a' && arrivals.some((arrival) => arrival.file === 'b')) {
        pausedAt = Date.now();
        return { status: 429, headers: { 'retry-after': String(pauseSeconds) }, body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } } };
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      return { content: binaryVerdict(verdictFor(request)) };
    });
    const results = await Promise.all(
      // Both are child processes: they start equally late, so each still has work when the pause comes.
      ['a', 'b'].map((name) => runCli(gradeArgs(writeItems(directory, name, 40), join(directory, `${name}.out.jsonl`), fake!.baseUrl, ['--store', redis.url, '--concurrency', '2', '--global-concurrency', '8']))),
    );
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(pausedAt).toBeDefined();
    // Both processes had work left after the 429 (each calls again after the pause)…
    for (const file of ['a', 'b']) expect(arrivals.some((arrival) => arrival.file === file && arrival.at >= pausedAt! + pauseSeconds * 1_000)).toBe(true);
    // …and neither called the judge while the fleet was paused (after the time a call admitted before
    // the pause may take to reach the judge: a second, more on a loaded machine).
    expect(arrivals.filter((arrival) => arrival.at >= pausedAt! + inFlightSlackMs && arrival.at < pausedAt! + pauseSeconds * 1_000)).toEqual([]);
    expect(arrivals.filter((arrival) => arrival.file !== '?')).toHaveLength(81);
  }, hangGuard(120_000));
});

describe('the shared store through the CLI', () => {
  redisTest('a cache moves SQLite → Redis → SQLite with the same keys: each rerun is answered from it with 0 judge calls and the same verdicts', async ({ redis, makeTempDir }) => {
    const directory = makeTempDir('rubricate-store-cli-');
    fake = await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)) }));
    const input = writeItems(directory, 'items', 20);
    const sqliteCache = join(directory, 'cache.sqlite');
    const first = await runCliInProcess(gradeArgs(input, join(directory, 'first.jsonl'), fake.baseUrl, ['--cache', sqliteCache]));
    expect(first.code, first.stderr).toBe(0);
    expect(fake.requests).toHaveLength(20);

    const exported = await runCliInProcess(['cache', 'export', '--cache', sqliteCache, '--store', redis.url]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toContain('exported 20 replies');
    const fromRedis = await runCliInProcess(gradeArgs(input, join(directory, 'from-redis.jsonl'), fake.baseUrl, ['--store', redis.url]));
    expect(fromRedis.code, fromRedis.stderr).toBe(0);
    expect(fake.requests).toHaveLength(20);
    expect(verdictLines(join(directory, 'from-redis.jsonl'))).toEqual(verdictLines(join(directory, 'first.jsonl')));

    const freshCache = join(directory, 'fresh.sqlite');
    const imported = await runCliInProcess(['cache', 'import', '--cache', freshCache, '--store', redis.url]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toContain('imported 20 replies');
    const fromImport = await runCliInProcess(gradeArgs(input, join(directory, 'from-import.jsonl'), fake.baseUrl, ['--cache', freshCache]));
    expect(fromImport.code, fromImport.stderr).toBe(0);
    expect(fake.requests).toHaveLength(20);
    expect(verdictLines(join(directory, 'from-import.jsonl'))).toEqual(verdictLines(join(directory, 'first.jsonl')));
    // The second Redis run and the SQLite run read the same replies: their files are the same bytes.
    expect(readFileSync(join(directory, 'from-import.jsonl'), 'utf8')).toBe(readFileSync(join(directory, 'from-redis.jsonl'), 'utf8'));
  }, hangGuard(60_000));

  // An unreachable --store (its 5 s bound waited out beside other tests) is cli-queue.test.ts's "a Redis nobody answers".
  redisTest('fleet limits without a store stop the command at start-up with a clear error', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-store-cli-');
    fake = await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(request)) }));
    const input = writeItems(directory, 'items', 3);
    const noStore = await runCliInProcess(gradeArgs(input, join(directory, 'out.jsonl'), fake.baseUrl, ['--no-cache', '--global-concurrency', '2']));
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toContain('--store redis://');
    expect(fake.requests).toHaveLength(0);
  }, hangGuard(60_000));
});
