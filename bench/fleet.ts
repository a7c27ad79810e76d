/**
 * Beyond one machine: distributed grading through BullMQ on a real redis-server, against
 * the judge simulator (capacity 48 in service, HTTP 429 beyond it, 300 ms per call).
 * - 3,000 judge tasks (300 items × 10 criteria): one plain `grade` process (no queue, no fleet
 *   limits) for reference, then 1 and 3 `rubricate worker` processes with
 *   `--global-concurrency 48`: judge-busy time against the capacity-bound ideal
 *   (3,000 × 0.3 s / 48 = 18.75 s), mean and peak calls in service, 429s (any means the cap
 *   was broken), CPU seconds of the rubricate processes;
 * - the same file submitted again: judge calls it cost.
 * Run: `npm run bench -- fleet` (bounded: a few minutes on a loaded machine).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisServer } from '../src/testing/redis-server.js';
import { syntheticItems } from './grading.js';
import { childEnvironment, startSimulatorProcess, type SimulatorProcess } from './support/index.js';

const capacity = 48;
const latencyMs = 300;
const bin = resolve(process.cwd(), 'bin/rubricate.js');

interface RunResult {
  /** 0: one plain grade process, no queue. */
  workers: number;
  producer_wall_s: number;
  judge_busy_s: number;
  ideal_s: number;
  ratio_to_ideal: number;
  judge_calls: number;
  mean_in_service: number;
  peak_in_service: number;
  rejected_429: number;
  /** User + system CPU seconds of the producer and workers (the grading side). */
  rubricate_cpu_s: number;
  load_average: number;
}

/** CPU seconds a process has used so far, from /proc (Linux); 0 where unavailable. */
function cpuSecondsOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime, fields 14 and 15 of stat (11 and 12 after the command name), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function run(args: string[]): { done: Promise<number | null>; cpuSeconds(): number } {
  const child = spawn(process.execPath, [bin, ...args], { env: childEnvironment(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  // The process's CPU time, read while it runs (gone once it exits).
  let cpu = 0;
  const sampler = setInterval(() => (cpu = Math.max(cpu, cpuSecondsOf(child.pid))), 250);
  return {
    done: new Promise((resolveDone) =>
      child.once('exit', (code) => {
        clearInterval(sampler);
        if (code !== 0 && code !== null) process.stderr.write(`rubricate ${args[0]} exited ${code}: ${stderr}\n`);
        resolveDone(code);
      }),
    ),
    cpuSeconds: () => cpu,
  };
}

async function gradeWithWorkers(simulator: SimulatorProcess, queue: string, input: string, out: string, workers: number): Promise<RunResult> {
  await simulator.reset();
  const started = performance.now();
  // Each worker's --concurrency is twice its share of the global cap (docs/deployment.md): the cap, not the workers, sets the pace.
  const perWorker = workers === 0 ? 0 : Math.ceil((2 * capacity) / workers);
  const fleet = Array.from({ length: workers }, () => run(['worker', '--queue', queue, '--concurrency', String(perWorker), '--exit-when-idle', '--quiet']));
  const judge = ['--judge', 'openai:simulated-judge', '--judge-base-url', simulator.url, '--quiet'];
  const producer =
    workers === 0
      ? run(['grade', '--input', input, '--out', out, '--concurrency', String(capacity), '--no-cache', ...judge])
      : run(['grade', '--input', input, '--out', out, '--queue', queue, '--global-concurrency', String(capacity), ...judge]);
  await producer.done;
  const producerWallS = (performance.now() - started) / 1000;
  await Promise.all(fleet.map((worker) => worker.done));
  const stats = await simulator.stats({ records: true });
  const records = (stats as unknown as { records?: Array<{ status: number; arrivedAtMs: number; startedAtMs: number; serviceMs: number }> }).records ?? [];
  const answered = records.filter((record) => record.status === 200);
  const first = Math.min(...answered.map((record) => record.arrivedAtMs));
  const last = Math.max(...answered.map((record) => record.startedAtMs + record.serviceMs));
  const busyS = answered.length > 0 ? (last - first) / 1000 : 0;
  const ideal = (stats.completed * latencyMs) / 1000 / capacity;
  return {
    workers,
    producer_wall_s: round(producerWallS),
    mean_in_service: busyS > 0 ? round((stats.completed * latencyMs) / 1000 / busyS) : 0,
    judge_busy_s: round(busyS),
    ideal_s: round(ideal),
    ratio_to_ideal: ideal > 0 ? round(busyS / ideal) : 0,
    judge_calls: stats.completed,
    peak_in_service: stats.peakInService,
    rejected_429: stats.rejected,
    rubricate_cpu_s: round([producer, ...fleet].reduce((total, child) => total + child.cpuSeconds(), 0)),
    load_average: round(loadavg()[0]),
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export async function runFleetBenchmark(): Promise<unknown> {
  const directory = mkdtempSync(join(tmpdir(), 'rubricate-bench-fleet-'));
  const redis = await startRedisServer();
  // A generous start-up bound: on a loaded machine loading the simulator's TypeScript alone can take tens of seconds.
  const simulator = await startSimulatorProcess({ fixedMs: latencyMs, maxConcurrent: capacity, overflow: 'reject', retryAfterSeconds: 1 }, { startTimeoutMs: 120_000 });
  try {
    const input = join(directory, 'items.jsonl');
    writeFileSync(input, `${syntheticItems(300, 10).join('\n')}\n`);
    const admin = new Redis(redis.url);
    const rows: RunResult[] = [];
    for (const workers of [0, 1, 3]) {
      await admin.flushall();
      rows.push(await gradeWithWorkers(simulator, redis.url, input, join(directory, `out-${workers}.jsonl`), workers));
    }
    const duplicate = await gradeWithWorkers(simulator, redis.url, input, join(directory, 'again.jsonl'), 3);
    admin.disconnect();
    const three = rows[2];
    return {
      scenario: 'fleet (BullMQ queue, fleet slots on redis-semaphore, 3,000 tasks, judge capacity 48 × 300 ms, --global-concurrency 48)',
      runs: rows,
      duplicate_submission_judge_calls: duplicate.judge_calls,
      three_workers_within_1_1x_ideal: three.ratio_to_ideal <= 1.1,
      cap_held: rows.slice(1).every((row) => row.peak_in_service <= capacity && row.rejected_429 === 0),
      note: 'workers 0 = one plain grade process (--concurrency 48, no queue, no fleet limits); judge_busy_s = first request arrival to last answer at the simulator; mean_in_service = calls × 0.3 s / judge_busy_s (48 at the ideal); producer_wall_s includes process start-up',
    };
  } finally {
    await simulator.stop();
    await redis.stop();
    rmSync(directory, { recursive: true, force: true });
    rmSync(redis.directory, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.dirname, 'fleet.ts')) {
  runFleetBenchmark().then((result) => console.log(JSON.stringify(result, null, 2)));
}
