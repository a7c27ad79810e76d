/**
 * Cached rewards/s of one `rubricate serve` process against a bare Hono server that parses
 * the same JSON body and answers a constant, measured in one run with one load generator:
 * Debian's `wrk` (64 connections, one thread) and a Lua script that POSTs single items to
 * /v1/score, cycling through `distinct` bodies. The reply cache is warmed first, so every
 * reward is a cache hit; each server is loaded twice, alternately (A B A B), so drift in the
 * machine's load falls on both.
 *
 * Run: `npm run bench -- serve-vs-hono`, or `npx tsx bench/serve-vs-hono.ts` (the server is
 * the build when it is current: `npm run build` first). `--bare-hono` runs the bare server.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startChild, stopChild, type Child } from '../src/testing/child-process.js';
import { benchItem, counter, processCpuMs, startJudgeProcess, startServeProcess } from './server.js';

const thisFile = fileURLToPath(import.meta.url);

/** The comparison point: Hono on @hono/node-server, JSON body parsed, a constant answered. */
async function runBareHono(): Promise<void> {
  const [{ Hono }, { serve }] = await Promise.all([import('hono'), import('@hono/node-server')]);
  const app = new Hono();
  app.post('/v1/score', async (context) => {
    const body = (await context.req.json()) as { id?: unknown };
    return context.json({ id: typeof body.id === 'string' ? body.id : null, reward: 0.5 });
  });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
    process.stdout.write(`${JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${info.port}` })}\n`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

/** wrk's Lua script: one body per line of the file given after `--`; a reply without a numeric reward counts as bad. */
const luaScript = String.raw`
local bodies = {}
local index = 0
bad = 0
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  for line in io.lines(args[1]) do table.insert(bodies, line) end
end
function request()
  index = index % #bodies + 1
  return wrk.format("POST", "/v1/score", { ["Content-Type"] = "application/json" }, bodies[index])
end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"reward":%s*%-?%d') then bad = bad + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("bad") end
  io.write(string.format("BAD %d\nREQUESTS %d\nSECONDS %f\nP50 %f\nP99 %f\n", total, summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
`;

interface WrkRun {
  rewardsPerSecond: number;
  requests: number;
  bad: number;
  socketErrors: number;
  p50Ms: number;
  p99Ms: number;
  serverCpuMsPerRequest: number;
}

function runWrk(url: string, script: string, bodies: string, seconds: number, connections: number, pid: number): Promise<WrkRun> {
  const cpuBefore = processCpuMs(pid);
  return new Promise((resolve, reject) => {
    execFile('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, `${url}/v1/score`, '--', bodies], { maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error) {
        reject(new Error(`wrk failed: ${error.message}\n${stdout}`));
        return;
      }
      const field = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(stdout)?.[1] ?? Number.NaN);
      const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout)?.slice(1).reduce((total, value) => total + Number(value), 0) ?? 0;
      const requests = field('REQUESTS');
      resolve({
        rewardsPerSecond: Math.round((requests - field('BAD')) / field('SECONDS')),
        requests,
        bad: field('BAD'),
        socketErrors,
        p50Ms: Number(field('P50').toFixed(2)),
        p99Ms: Number(field('P99').toFixed(2)),
        serverCpuMsPerRequest: Number(((processCpuMs(pid) - cpuBefore) / Math.max(1, requests)).toFixed(4)),
      });
    });
  });
}

/** serve's CPU per uncached reward: `count` new items (8 criteria each) through a fresh serve whose judge answers after 20 ms, 64 in flight. */
interface UncachedRun {
  rewards: number;
  failed: number;
  serverCpuMsPerReward: number;
  judgeCalls: number;
  loadAverage: number;
}

async function runUncached(directory: string, count: number, children: Child[]): Promise<UncachedRun> {
  const judge = await startJudgeProcess({ latencyMs: 20, capacity: 1024 });
  children.push(judge.child);
  const serve = await startServeProcess(judge.url, ['--cache', path.join(directory, 'uncached.sqlite'), '--concurrency', '256']);
  children.push(serve.child);
  const post = async (index: number) => {
    const reply = await fetch(`${serve.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(benchItem(index)) });
    const body = (await reply.json()) as { reward?: unknown };
    return reply.ok && typeof body.reward === 'number';
  };
  // A short first pass warms the JIT on items of their own; it is not counted.
  const first = 10_000_000;
  await Promise.all(Array.from({ length: 64 }, (_, index) => post(first + index)));
  const callsBefore = await counter(serve.url, 'rubricate_judge_calls_total');
  const cpuBefore = processCpuMs(serve.pid);
  let next = 0;
  let failed = 0;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < count) {
      const index = next++;
      if (!(await post(20_000_000 + index))) failed += 1;
    }
  }));
  const cpuMs = processCpuMs(serve.pid) - cpuBefore;
  const judgeCalls = (await counter(serve.url, 'rubricate_judge_calls_total')) - callsBefore;
  return { rewards: count, failed, serverCpuMsPerReward: Number((cpuMs / count).toFixed(3)), judgeCalls, loadAverage: Number(loadavg()[0].toFixed(2)) };
}

export interface ServeVsHonoResult {
  scenario: string;
  serverMode: 'build' | 'source';
  loadAverageAtStart: number;
  connections: number;
  secondsPerRun: number;
  distinctBodies: number;
  rubricate: WrkRun[];
  bareHono: WrkRun[];
  /** Mean rewards/s of each, and rubricate ÷ bare Hono (target ≥ 0.95). */
  rubricateRewardsPerSecond: number;
  bareHonoRewardsPerSecond: number;
  ratio: number;
  judgeCallsDuringLoad: number;
  /** Uncached rewards (8 criteria, judge 20 ms): serve's CPU per reward (target ≤ 1.0 ms). */
  uncached: UncachedRun;
  met: boolean;
}

export async function runServeVsHono(options: { seconds?: number; connections?: number; distinct?: number; rounds?: number; uncached?: number } = {}): Promise<ServeVsHonoResult> {
  const seconds = options.seconds ?? 10;
  const connections = options.connections ?? 64;
  const distinct = options.distinct ?? 256;
  const rounds = options.rounds ?? 2;
  const directory = mkdtempSync(path.join(tmpdir(), 'rubricate-bench-hono-'));
  const children: Child[] = [];
  const loadAverageAtStart = Number(loadavg()[0].toFixed(2));
  // The server as an installed package runs it: the build (`npm run bench` builds it first).
  const built = existsSync(path.join(process.cwd(), 'dist', 'cli', 'main.js'));
  if (built) process.env.RUBRICATE_USE_BUILD ??= '1';
  try {
    const bodies = path.join(directory, 'bodies.jsonl');
    const items = Array.from({ length: distinct }, (_, index) => benchItem(index));
    writeFileSync(bodies, `${items.map((item) => JSON.stringify(item)).join('\n')}\n`);
    const script = path.join(directory, 'post.lua');
    writeFileSync(script, luaScript);

    const judge = await startJudgeProcess({ latencyMs: 1, capacity: 1024 });
    children.push(judge.child);
    const serve = await startServeProcess(judge.url, ['--cache', path.join(directory, 'replies.sqlite'), '--concurrency', '256']);
    children.push(serve.child);
    for (let start = 0; start < distinct; start += 64) {
      const warmed = await fetch(`${serve.url}/v1/score/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: items.slice(start, start + 64) }) });
      if (!warmed.ok) throw new Error(`warming failed: HTTP ${warmed.status}`);
      await warmed.arrayBuffer();
    }
    const bare = startChild(['--import', 'tsx', thisFile, '--bare-hono']);
    children.push(bare);
    const bareUrl = String((await bare.nextLine((line) => line.event === 'listening', 30_000)).url);

    const callsBefore = await counter(serve.url, 'rubricate_judge_calls_total');
    // A short first pass of each warms the JIT; it is not counted.
    await runWrk(serve.url, script, bodies, 2, connections, serve.pid);
    await runWrk(bareUrl, script, bodies, 2, connections, bare.process.pid!);
    const rubricate: WrkRun[] = [];
    const bareHono: WrkRun[] = [];
    for (let round = 0; round < rounds; round += 1) {
      rubricate.push(await runWrk(serve.url, script, bodies, seconds, connections, serve.pid));
      bareHono.push(await runWrk(bareUrl, script, bodies, seconds, connections, bare.process.pid!));
    }
    const judgeCallsDuringLoad = (await counter(serve.url, 'rubricate_judge_calls_total')) - callsBefore;
    const mean = (runs: WrkRun[]) => Math.round(runs.reduce((total, run) => total + run.rewardsPerSecond, 0) / runs.length);
    const ours = mean(rubricate);
    const theirs = mean(bareHono);
    const ratio = Number((ours / theirs).toFixed(3));
    const uncached = await runUncached(directory, options.uncached ?? 2_000, children);
    const clean = [...rubricate, ...bareHono].every((run) => run.bad === 0 && run.socketErrors === 0);
    return {
      scenario: 'serve vs bare Hono (cached, wrk)',
      serverMode: built && process.env.RUBRICATE_USE_BUILD === '1' ? 'build' : 'source',
      loadAverageAtStart,
      connections,
      secondsPerRun: seconds,
      distinctBodies: distinct,
      rubricate,
      bareHono,
      rubricateRewardsPerSecond: ours,
      bareHonoRewardsPerSecond: theirs,
      ratio,
      judgeCallsDuringLoad,
      uncached,
      met: ratio >= 0.95 && clean && judgeCallsDuringLoad === 0 && uncached.failed === 0 && uncached.serverCpuMsPerReward <= 1,
    };
  } finally {
    for (const child of children.reverse()) await stopChild(child).catch(() => undefined);
    rmSync(directory, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv[2] === '--bare-hono') await runBareHono();
  else {
    const result = await runServeVsHono({ seconds: Number(process.env.RUBRICATE_BENCH_SECONDS) || undefined });
    const cpu = (runs: WrkRun[]) => runs.map((run) => run.serverCpuMsPerRequest).join('/');
    console.log(`serve ${result.rubricateRewardsPerSecond}/s (${cpu(result.rubricate)} ms CPU) vs bare Hono ${result.bareHonoRewardsPerSecond}/s (${cpu(result.bareHono)} ms CPU) = ${result.ratio}× (target ≥ 0.95); load average at start ${result.loadAverageAtStart}`);
    console.log(`uncached: ${result.uncached.serverCpuMsPerReward} ms of serve CPU per reward (8 criteria, judge 20 ms, target ≤ 1.0), ${result.uncached.failed} failed, ${result.uncached.judgeCalls} judge calls, load ${result.uncached.loadAverage}; ${result.met ? 'met' : 'NOT MET'}`);
    console.log(JSON.stringify(result));
  }
}
