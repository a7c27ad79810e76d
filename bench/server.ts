/**
 * Reward-service benchmark, loopback only, about a minute. Every party is its own process
 * so the server has an event loop (and a core's share) to itself: `rubricate serve` as users
 * run it, a load generator (this file with `--load`), and a judge (this file with `--judge`).
 *
 *   (a) cached verdicts: the reply cache is warmed first, then 64 closed-loop clients send
 *       single-item /v1/score requests → rewards/s and client-side p50/p99 latency
 *       (targets: ≥ 2,000 rewards/s on 2 cores, p99 ≤ 50 ms);
 *   (b) a judge of 50 ms latency and capacity 64 (FIFO beyond it): judge calls/s the server
 *       sustains vs the judge's capacity, 64 ÷ 0.05 s = 1,280 calls/s (target within 10%);
 *   (c) 10× overload of (b), open loop: no crash, server peak RSS (VmHWM) ≤ 250 MB, every
 *       request answered or refused with Retry-After.
 *
 * The judge is a minimal loopback one rather than bench/simulator: the simulator tokenises
 * every request, which at 1,280 calls/s would take most of a core from the process under test.
 *
 * Run: `npx tsx bench/server.ts [cached] [judge] [overload]` (all phases by default).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startChild, stopChild, type Child } from '../src/testing/child-process.js';
import { safeParseJson } from '../src/util/json.js';
import { seededRandom } from '../src/util/random.js';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const thisFile = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------
// Items: synthetic and seeded. One rubric of 8 criteria per prompt, 16 responses per prompt
// (a GRPO group), responses of ~200 words; every index gives a different response.

const criteriaPerRubric = 8;
const responsesPerPrompt = 16;
const words = 'the patient should rest drink water see a doctor if fever persists for more than three days avoid aspirin children dose weight mild moderate severe symptoms include cough headache fatigue nausea'.split(' ');

function sentence(random: () => number, length: number): string {
  const chosen: string[] = [];
  for (let index = 0; index < length; index += 1) chosen.push(words[Math.floor(random() * words.length)]);
  return `${chosen.join(' ')}.`;
}

export function benchItem(index: number): Record<string, unknown> {
  const promptIndex = Math.floor(index / responsesPerPrompt);
  const promptRandom = seededRandom(promptIndex + 1);
  const prompt = `Question ${promptIndex}: ${sentence(promptRandom, 40)}`;
  const rubric = {
    criteria: Array.from({ length: criteriaPerRubric }, (_, criterion) => ({
      id: `c${criterion}`,
      text: `The response ${sentence(promptRandom, 12)}`,
      points: criterion === criteriaPerRubric - 1 ? -3 : 1 + (criterion % 5),
    })),
  };
  const responseRandom = seededRandom(1_000_003 * (index + 1));
  const response = Array.from({ length: 12 }, () => sentence(responseRandom, 16)).join(' ');
  return { id: `bench-${index}`, prompt, response, rubric };
}

// ---------------------------------------------------------------------------------------
// Minimal judge (`--judge`): fixed latency, a capacity of concurrent requests, FIFO beyond.

interface JudgeConfig {
  latencyMs: number;
  capacity: number;
}

async function runJudge(config: JudgeConfig): Promise<void> {
  let inService = 0;
  const waiting: Array<() => void> = [];
  let served = 0;
  const release = () => {
    inService -= 1;
    const next = waiting.shift();
    if (next) {
      inService += 1;
      next();
    }
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/__stats') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ served }));
        return;
      }
      const body = Buffer.concat(chunks);
      // A verdict that depends on the request only, cheaply (no JSON parsing of the prompt).
      const met = createHash('sha1').update(body).digest()[0] % 2 === 0;
      const serve = () => {
        setTimeout(() => {
          const content = JSON.stringify({ explanation: 'Simulated verdict.', criteria_met: met });
          const payload = JSON.stringify({
            id: 'bench',
            object: 'chat.completion',
            model: 'bench-judge',
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 600, completion_tokens: 20, total_tokens: 620 },
          });
          served += 1;
          response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }).end(payload);
          release();
        }, config.latencyMs);
      };
      if (inService < config.capacity) {
        inService += 1;
        serve();
      } else waiting.push(serve);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` })}\n`);
  process.once('SIGTERM', () => process.exit(0));
}

// ---------------------------------------------------------------------------------------
// Load generator (`--load`).

interface LoadConfig {
  /** Servers to load; closed-loop client i talks to urls[i mod n], open-loop requests alternate. */
  urls: string[];
  mode: 'closed' | 'open';
  /** Closed loop: clients, each sending its next request when the previous is answered. */
  concurrency?: number;
  /** Open loop: requests per second, sent whatever the answers. */
  rate?: number;
  /** Open loop: connections the client keeps (a trainer's pool; beyond it requests wait client-side). Default 256. */
  connections?: number;
  durationMs: number;
  /** Latencies of requests started before this are not recorded. */
  warmupMs?: number;
  firstIndex: number;
  /** Distinct items cycled through (closed loop); open loop never repeats an item. */
  distinctItems: number;
}

export interface LoadReport {
  sent: number;
  statuses: Record<string, number>;
  /** 429/503 answers without a Retry-After header. */
  refusedWithoutRetryAfter: number;
  networkErrors: number;
  /** Error codes of the requests that got no answer. */
  networkErrorCodes: Record<string, number>;
  rewardNull: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  elapsedMs: number;
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

async function runLoad(config: LoadConfig): Promise<void> {
  const targets = config.urls.map((url) => new URL('/v1/score', url));
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.mode === 'closed' ? (config.concurrency ?? 64) : (config.connections ?? 256) });
  // Bodies are built before the clock starts (a few MB), unless there are too many.
  const planned = config.mode === 'closed' ? config.distinctItems : Math.ceil(((config.rate ?? 100) * config.durationMs) / 1000);
  const bodies = new Map<number, Buffer>();
  const bodyOf = (index: number) => bodies.get(index) ?? Buffer.from(JSON.stringify(benchItem(index)));
  if (planned <= 20_000) for (let offset = 0; offset < planned; offset += 1) bodies.set(config.firstIndex + offset, bodyOf(config.firstIndex + offset));

  const report: LoadReport = { sent: 0, statuses: {}, refusedWithoutRetryAfter: 0, networkErrors: 0, networkErrorCodes: {}, rewardNull: 0, latencyMs: { p50: 0, p90: 0, p99: 0, max: 0 }, elapsedMs: 0 };
  const latencies: number[] = [];
  const started = performance.now();
  const warmupEnd = started + (config.warmupMs ?? 0);
  const end = started + config.durationMs;

  const send = (index: number, target: URL) =>
    new Promise<void>((resolve) => {
      const body = bodyOf(index);
      const sentAt = performance.now();
      report.sent += 1;
      const request = http.request(
        { hostname: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            report.statuses[status] = (report.statuses[status] ?? 0) + 1;
            if ((status === 429 || status === 503) && response.headers['retry-after'] === undefined) report.refusedWithoutRetryAfter += 1;
            if (status === 200 && Buffer.concat(chunks).includes('"reward":null')) report.rewardNull += 1;
            if (sentAt >= warmupEnd) latencies.push(performance.now() - sentAt);
            resolve();
          });
        },
      );
      request.on('error', (error: NodeJS.ErrnoException) => {
        report.networkErrors += 1;
        const code = error.code ?? error.message;
        report.networkErrorCodes[code] = (report.networkErrorCodes[code] ?? 0) + 1;
        resolve();
      });
      request.end(body);
    });

  if (config.mode === 'closed') {
    let next = 0;
    await Promise.all(
      Array.from({ length: config.concurrency ?? 64 }, async (_, client) => {
        const target = targets[client % targets.length];
        while (performance.now() < end) {
          const index = config.firstIndex + (next % config.distinctItems);
          next += 1;
          await send(index, target);
        }
      }),
    );
  } else {
    const rate = config.rate ?? 100;
    const pending: Array<Promise<void>> = [];
    let index = config.firstIndex;
    while (performance.now() < end) {
      const due = Math.floor(((performance.now() - started) / 1000) * rate);
      while (index - config.firstIndex < due) {
        pending.push(send(index, targets[index % targets.length]));
        index += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(pending);
  }
  report.elapsedMs = performance.now() - started;
  latencies.sort((left, right) => left - right);
  const round = (value: number) => Math.round(value * 10) / 10;
  report.latencyMs = { p50: round(percentile(latencies, 0.5)), p90: round(percentile(latencies, 0.9)), p99: round(percentile(latencies, 0.99)), max: round(latencies.at(-1) ?? Number.NaN) };
  agent.destroy();
  process.stdout.write(`${JSON.stringify({ event: 'report', report })}\n`);
}

// ---------------------------------------------------------------------------------------
// Orchestration.

export async function startJudgeProcess(config: JudgeConfig): Promise<{ child: Child; url: string }> {
  const child = startChild(['--import', 'tsx', thisFile, '--judge', JSON.stringify(config)]);
  const line = await child.nextLine((entry) => typeof entry.url === 'string', 20_000);
  return { child, url: String(line.url) };
}

export async function startServeProcess(judgeUrl: string, extra: string[]): Promise<{ child: Child; url: string; pid: number }> {
  // RUBRICATE_BENCH_SERVE_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=prof`) profiles the server under test alone.
  const nodeArgs = (process.env.RUBRICATE_BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = startChild([...nodeArgs, 'bin/rubricate.js', 'serve', '--port', '0', '--judge', 'openai:bench-judge', '--judge-base-url', judgeUrl, '--log-level', 'warn', ...extra]);
  const line = await child.nextLine((entry) => entry.event === 'listening', 30_000);
  return { child, url: String(line.url), pid: child.process.pid as number };
}

async function runLoadProcess(config: LoadConfig, onStart?: () => Promise<void>): Promise<LoadReport> {
  const child = startChild(['--import', 'tsx', thisFile, '--load', JSON.stringify(config)]);
  if (onStart) await onStart();
  const line = await child.nextLine((entry) => entry.event === 'report', config.durationMs + 120_000);
  await child.exited;
  return line.report as LoadReport;
}

/** Reads a counter (summed over its series) from the Prometheus text of /metrics. */
export async function counter(url: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}${labels}`) && (line[name.length] === ' ' || line[name.length] === '{')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
  return match ? Math.round(Number(match[1]) / 102.4) / 10 : Number.NaN;
}

/** Peak resident memory of a process (VmHWM), in MB. */
const peakRssMb = (pid: number) => statusMb(pid, 'VmHWM');
const residentMb = (pid: number) => statusMb(pid, 'VmRSS');

/** CPU time (user + system) a process has used, in milliseconds, from /proc/<pid>/stat (clock ticks of 10 ms). */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** A steady-state window inside a load run: counter and server CPU at both ends. */
interface Window {
  seconds: number;
  counted: number;
  serverCpuMs: number;
}

async function measureWindow(servers: ReadonlyArray<{ url: string; pid: number }>, counterName: string, labels: string, settleMs: number, lengthMs: number): Promise<Window> {
  await sleep(settleMs);
  const sum = async (read: (server: { url: string; pid: number }) => Promise<number> | number) => (await Promise.all(servers.map(read))).reduce((total, value) => total + value, 0);
  const startedAt = performance.now();
  const countStart = await sum((server) => counter(server.url, counterName, labels));
  const cpuStart = await sum((server) => processCpuMs(server.pid));
  await sleep(lengthMs);
  const countEnd = await sum((server) => counter(server.url, counterName, labels));
  const cpuEnd = await sum((server) => processCpuMs(server.pid));
  return { seconds: (performance.now() - startedAt) / 1000, counted: countEnd - countStart, serverCpuMs: cpuEnd - cpuStart };
}

export type ServerBenchmarkPhase = 'cached' | 'cached-redis' | 'judge' | 'overload';

export interface ServerBenchmarkOptions {
  /** Seconds of load per phase (default 10). */
  loadSeconds?: number;
  phases?: readonly ServerBenchmarkPhase[];
  /** Connections of the overload client (default 512: twice the admission queue of 256). */
  overloadConnections?: number;
}

export interface CachedResult {
  replicas: number;
  clients: number;
  rewardsPerSecond: number;
  latencyMs: LoadReport['latencyMs'];
  /** Server CPU per reward, and rewards per second of server CPU: the figure other processes on the machine do not move. */
  serverCpuMsPerReward: number;
  rewardsPerServerCpuSecond: number;
  /** Cores the server processes used during the window (GC threads can take it above 1 per process). */
  serverCoreShare: number;
  judgeCallsDuringLoad: number;
  failedRequests: number;
  targets: { rewardsPerSecond: number; p99Ms: number };
  met: boolean;
}

export interface ServerBenchmarkResult {
  /** `build` when bin/rubricate.js runs dist/ (RUBRICATE_USE_BUILD=1), else `source` (TypeScript through tsx, more memory). */
  serverMode: 'build' | 'source';
  /** (a) with one `serve` process, and with two sharing the cache file. */
  cached?: CachedResult;
  cachedTwoReplicas?: CachedResult;
  /** Two replicas sharing a Redis store against one replica with SQLite (cached rewards/s). */
  cachedRedis?: { sqliteOneReplica: CachedResult; redisTwoReplicas: CachedResult; ratio: number };
  judgeBound?: {
    judgeLatencyMs: number;
    judgeCapacity: number;
    capacityCallsPerSecond: number;
    callsPerSecond: number;
    rewardsPerSecond: number;
    ratioToCapacity: number;
    serverCoreShare: number;
    met: boolean;
  };
  overload?: {
    offeredRequestsPerSecond: number;
    capacityItemsPerSecond: number;
    clientConnections: number;
    admissionQueue: number;
    sent: number;
    answered: number;
    refusedWithRetryAfter: number;
    other: number;
    /** Every answer status seen, and requests that got no answer (connection errors). */
    statuses: Record<string, number>;
    networkErrors: number;
    networkErrorCodes: Record<string, number>;
    serverAlive: boolean;
    cleanShutdown: boolean;
    /** Resident memory of the idle server before the load (the baseline inside the peak). */
    serverIdleRssMb: number;
    serverPeakRssMb: number;
    met: boolean;
  };
  /** Load average of the machine when the benchmark began (other work competing for the cores). */
  loadAverageAtStart: number;
  seconds: number;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

export async function runServerBenchmark(options: ServerBenchmarkOptions = {}): Promise<ServerBenchmarkResult> {
  const began = performance.now();
  const loadMs = (options.loadSeconds ?? 10) * 1000;
  const phases = new Set(options.phases ?? ['cached', 'judge', 'overload']);
  const children: Child[] = [];
  const cacheDirectory = mkdtempSync(path.join(tmpdir(), 'rubricate-bench-server-'));
  const serverMode = process.env.RUBRICATE_USE_BUILD === '1' && existsSync(path.join(projectRoot, 'dist', 'cli', 'main.js')) ? 'build' : 'source';
  const result: ServerBenchmarkResult = { serverMode, loadAverageAtStart: round(loadavg()[0], 2), seconds: 0 };
  const settleMs = 4000;
  try {
    if (phases.has('cached') || phases.has('cached-redis')) {
      // (a) Cached verdicts: warm the reply cache through a server, then measure on it, with one
      // replica (one core), and with two replicas sharing the cache file (the documented way to
      // use two cores); `cached-redis`: two replicas sharing a Redis store instead.
      const fastJudge = await startJudgeProcess({ latencyMs: 1, capacity: 1024 });
      children.push(fastJudge.child);
      const cacheFile = path.join(cacheDirectory, 'replies.sqlite');
      const distinct = 1024;
      const runCached = async (replicas: number, storeArgs: string[] = ['--cache', cacheFile]): Promise<CachedResult> => {
        const servers: Array<{ child: Child; url: string; pid: number }> = [];
        for (let replica = 0; replica < replicas; replica += 1) {
          const server = await startServeProcess(fastJudge.url, [...storeArgs, '--concurrency', '256']);
          children.push(server.child);
          servers.push(server);
        }
        for (let start = 0; start < distinct; start += 64) {
          const items = Array.from({ length: 64 }, (_, offset) => benchItem(start + offset));
          const warmed = await fetch(`${servers[0].url}/v1/score/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items }) });
          if (!warmed.ok) throw new Error(`warming failed: HTTP ${warmed.status}`);
          await warmed.arrayBuffer();
        }
        const judgeCalls = async () => (await Promise.all(servers.map((server) => counter(server.url, 'rubricate_judge_calls_total')))).reduce((total, value) => total + value, 0);
        const callsBefore = await judgeCalls();
        const clients = 64;
        let window: Window | undefined;
        const report = await runLoadProcess(
          { urls: servers.map((server) => server.url), mode: 'closed', concurrency: clients, durationMs: loadMs, warmupMs: 2000, firstIndex: 0, distinctItems: distinct },
          async () => {
            window = await measureWindow(servers, 'rubricate_rewards_total', '{outcome="ok"}', settleMs, Math.max(1000, loadMs - settleMs - 500));
          },
        );
        const callsAfter = await judgeCalls();
        for (const server of servers) await stopChild(server.child);
        const rate = window!.counted / window!.seconds;
        const failedRequests = report.sent - (report.statuses['200'] ?? 0) + report.rewardNull;
        return {
          replicas,
          clients,
          rewardsPerSecond: round(rate),
          latencyMs: report.latencyMs,
          serverCpuMsPerReward: round(window!.serverCpuMs / window!.counted, 3),
          rewardsPerServerCpuSecond: round(window!.counted / (window!.serverCpuMs / 1000)),
          serverCoreShare: round(window!.serverCpuMs / 1000 / window!.seconds, 2),
          judgeCallsDuringLoad: callsAfter - callsBefore,
          failedRequests,
          targets: { rewardsPerSecond: 2000, p99Ms: 50 },
          met: rate >= 2000 && report.latencyMs.p99 <= 50 && failedRequests === 0,
        };
      };
      if (phases.has('cached')) {
        result.cached = await runCached(1);
        result.cachedTwoReplicas = await runCached(2);
      }
      if (phases.has('cached-redis')) {
        const { startRedisServer } = await import('../src/testing/redis-server.js');
        const redis = await startRedisServer();
        try {
          const sqliteOne = result.cached ?? (await runCached(1));
          const redisTwo = await runCached(2, ['--store', redis.url]);
          result.cachedRedis = { sqliteOneReplica: sqliteOne, redisTwoReplicas: redisTwo, ratio: round(redisTwo.rewardsPerSecond / sqliteOne.rewardsPerSecond, 2) };
        } finally {
          await redis.stop();
        }
      }
      await stopChild(fastJudge.child);
    }

    const latencyMs = 50;
    const capacity = 64;
    const capacityCallsPerSecond = capacity / (latencyMs / 1000);
    // A few calls beyond the judge's capacity wait in its queue, so a slot freed is refilled at
    // once instead of after a round trip through the server (as with vLLM's waiting queue).
    const serverConcurrency = Math.round(capacity * 1.5);
    if (phases.has('judge') || phases.has('overload')) {
      const slowJudge = await startJudgeProcess({ latencyMs, capacity });
      children.push(slowJudge.child);

      if (phases.has('judge')) {
        // (b) Judge-bound: 50 ms per call, 64 at once, FIFO beyond; enough clients to keep it full.
        const server = await startServeProcess(slowJudge.url, ['--no-cache', '--concurrency', String(serverConcurrency)]);
        children.push(server.child);
        let window: Window | undefined;
        await runLoadProcess({ urls: [server.url], mode: 'closed', concurrency: 48, durationMs: loadMs, firstIndex: 1_000_000, distinctItems: 1_000_000 }, async () => {
          window = await measureWindow([server], 'rubricate_judge_calls_total', '', settleMs, Math.max(1000, loadMs - settleMs - 500));
        });
        await stopChild(server.child);
        const callsPerSecond = window!.counted / window!.seconds;
        result.judgeBound = {
          judgeLatencyMs: latencyMs,
          judgeCapacity: capacity,
          capacityCallsPerSecond,
          callsPerSecond: round(callsPerSecond),
          rewardsPerSecond: round(callsPerSecond / criteriaPerRubric),
          ratioToCapacity: round(callsPerSecond / capacityCallsPerSecond, 3),
          serverCoreShare: round(window!.serverCpuMs / 1000 / window!.seconds, 2),
          met: callsPerSecond >= 0.9 * capacityCallsPerSecond,
        };
      }

      if (phases.has('overload')) {
        // (c) Ten times what the judge can grade, open loop, with a bounded admission queue.
        const capacityItemsPerSecond = capacityCallsPerSecond / criteriaPerRubric;
        const overloadConnections = options.overloadConnections ?? 512;
        const offered = Math.round(10 * capacityItemsPerSecond);
        const server = await startServeProcess(slowJudge.url, ['--no-cache', '--concurrency', String(serverConcurrency), '--max-queue', '256']);
        children.push(server.child);
        const serverIdleRssMb = residentMb(server.pid);
        const report = await runLoadProcess({ urls: [server.url], mode: 'open', rate: offered, connections: overloadConnections, durationMs: Math.min(loadMs, 8000), firstIndex: 5_000_000, distinctItems: 1 });
        let serverAlive = false;
        try {
          serverAlive = (await fetch(`${server.url}/healthz`)).status === 200;
        } catch {
          serverAlive = false;
        }
        const serverPeakRssMb = peakRssMb(server.pid);
        const exitCode = await stopChild(server.child);
        const answered = report.statuses['200'] ?? 0;
        const refused = (report.statuses['503'] ?? 0) + (report.statuses['429'] ?? 0) - report.refusedWithoutRetryAfter;
        const other = report.sent - answered - refused;
        result.overload = {
          offeredRequestsPerSecond: offered,
          capacityItemsPerSecond,
          clientConnections: overloadConnections,
          admissionQueue: 256,
          sent: report.sent,
          answered,
          refusedWithRetryAfter: refused,
          other,
          statuses: report.statuses,
          networkErrors: report.networkErrors,
          networkErrorCodes: report.networkErrorCodes,
          serverAlive,
          cleanShutdown: exitCode === 0,
          serverIdleRssMb,
          serverPeakRssMb,
          met: serverAlive && other === 0 && serverPeakRssMb <= 250 && exitCode === 0,
        };
      }
      await stopChild(slowJudge.child);
    }
    result.seconds = round((performance.now() - began) / 1000);
    return result;
  } finally {
    for (const child of children) await stopChild(child).catch(() => undefined);
    rmSync(cacheDirectory, { recursive: true, force: true });
  }
}

function printResult(result: ServerBenchmarkResult): void {
  const { judgeBound, overload } = result;
  const mark = (met: boolean) => (met ? 'met' : 'NOT MET');
  console.log(`Reward service (rubricate serve, ${result.serverMode} mode), loopback, ${criteriaPerRubric} criteria per rubric — ${result.seconds} s, load average at start ${result.loadAverageAtStart}`);
  for (const cached of [result.cached, result.cachedTwoReplicas]) {
    if (!cached) continue;
    console.log(
      `(a) cached verdicts, ${cached.replicas} serve process${cached.replicas > 1 ? 'es' : ''}, ${cached.clients} clients: ${cached.rewardsPerSecond.toLocaleString('en-US')} rewards/s, ` +
        `p50 ${cached.latencyMs.p50} ms, p99 ${cached.latencyMs.p99} ms; server ${cached.serverCpuMsPerReward} ms CPU per reward = ` +
        `${cached.rewardsPerServerCpuSecond.toLocaleString('en-US')} rewards per CPU-second, ${cached.serverCoreShare} cores ` +
        `(judge calls during load: ${cached.judgeCallsDuringLoad}, failed: ${cached.failedRequests}) — target ≥ 2,000/s and p99 ≤ 50 ms: ${mark(cached.met)}`,
    );
  }
  if (judgeBound) {
    console.log(
      `(b) judge ${judgeBound.judgeLatencyMs} ms × capacity ${judgeBound.judgeCapacity} (${judgeBound.capacityCallsPerSecond} calls/s): ${judgeBound.callsPerSecond} calls/s = ` +
        `${(judgeBound.ratioToCapacity * 100).toFixed(1)}% of capacity, ${judgeBound.rewardsPerSecond} rewards/s, server ${judgeBound.serverCoreShare} of a core — target ≥ 90%: ${mark(judgeBound.met)}`,
    );
  }
  if (overload) {
    console.log(
      `(c) 10× overload (${overload.offeredRequestsPerSecond} req/s vs ${overload.capacityItemsPerSecond} items/s, ${overload.clientConnections} connections, queue ${overload.admissionQueue}): ${overload.sent} sent, ${overload.answered} answered, ` +
        `${overload.refusedWithRetryAfter} refused with Retry-After, ${overload.other} other (statuses ${JSON.stringify(overload.statuses)}, ${overload.networkErrors} without answer ${JSON.stringify(overload.networkErrorCodes)}); server alive ${overload.serverAlive}, clean shutdown ${overload.cleanShutdown}, ` +
        `peak RSS ${overload.serverPeakRssMb} MB (idle ${overload.serverIdleRssMb} MB) — target ≤ 250 MB, nothing else: ${mark(overload.met)}`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const mode = process.argv[2];
  if (mode === '--load' || mode === '--judge') {
    const parsed = safeParseJson(process.argv[3] ?? '{}');
    if (!parsed.ok) {
      process.stderr.write(`bench/server.ts: bad configuration: ${parsed.error}\n`);
      process.exit(2);
    }
    if (mode === '--load') await runLoad(parsed.value as LoadConfig);
    else await runJudge(parsed.value as JudgeConfig);
  } else {
    const phases = process.argv.slice(2).filter((argument): argument is ServerBenchmarkPhase => ['cached', 'cached-redis', 'judge', 'overload'].includes(argument));
    const connections = Number(process.env.RUBRICATE_BENCH_CONNECTIONS) || undefined;
    const result = await runServerBenchmark({ ...(phases.length > 0 ? { phases } : {}), ...(connections ? { overloadConnections: connections } : {}) });
    printResult(result);
    console.log(JSON.stringify(result));
  }
}
