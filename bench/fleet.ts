/**
 * Beyond one machine: distributed grading through BullMQ on a real redis-server, against
 * the judge simulator (capacity 48 in service, HTTP 429 beyond it, 300 ms per call).
 * - 3,000 judge tasks (300 items × 10 criteria) with 1, then 3 `rubricate worker` processes
 *   and `--global-concurrency 48`: judge-busy time against the capacity-bound ideal
 *   (3,000 × 0.3 s / 48 = 18.75 s), peak calls in service, 429s (any means the cap was broken);
 * - the same file submitted again: judge calls it cost.
 * Run: `npm run bench -- fleet` (bounded: about two minutes).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisServer } from '../src/testing/redis-server.js';
import { syntheticItems } from './grading.js';
import { childEnvironment, startSimulatorProcess, type SimulatorProcess } from './support/index.js';

const capacity = 48;
const latencyMs = 300;
const bin = resolve(process.cwd(), 'bin/rubricate.js');

interface RunResult {
  workers: number;
  producer_wall_s: number;
  judge_busy_s: number;
  ideal_s: number;
  ratio_to_ideal: number;
  judge_calls: number;
  peak_in_service: number;
  rejected_429: number;
}

function run(args: string[]): { done: Promise<number | null>; kill(): void } {
  const child = spawn(process.execPath, [bin, ...args], { env: childEnvironment(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  return {
    done: new Promise((resolveDone) =>
      child.once('exit', (code) => {
        if (code !== 0 && code !== null) process.stderr.write(`rubricate ${args[0]} exited ${code}: ${stderr}\n`);
        resolveDone(code);
      }),
    ),
    kill: () => child.kill('SIGTERM'),
  };
}

async function gradeWithWorkers(simulator: SimulatorProcess, queue: string, input: string, out: string, workers: number): Promise<RunResult> {
  await simulator.reset();
  const started = performance.now();
  const fleet = Array.from({ length: workers }, () => run(['worker', '--queue', queue, '--concurrency', String(capacity), '--exit-when-idle', '--quiet']));
  const producer = run(['grade', '--input', input, '--out', out, '--queue', queue, '--judge', 'openai:simulated-judge', '--judge-base-url', simulator.url, '--global-concurrency', String(capacity), '--quiet']);
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
    judge_busy_s: round(busyS),
    ideal_s: round(ideal),
    ratio_to_ideal: ideal > 0 ? round(busyS / ideal) : 0,
    judge_calls: stats.completed,
    peak_in_service: stats.peakInService,
    rejected_429: stats.rejected,
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export async function runFleetBenchmark(): Promise<unknown> {
  const directory = mkdtempSync(join(tmpdir(), 'rubricate-bench-fleet-'));
  const redis = await startRedisServer();
  const simulator = await startSimulatorProcess({ fixedMs: latencyMs, maxConcurrent: capacity, overflow: 'reject', retryAfterSeconds: 1 });
  try {
    const input = join(directory, 'items.jsonl');
    writeFileSync(input, `${syntheticItems(300, 10).join('\n')}\n`);
    const admin = new Redis(redis.url);
    const rows: RunResult[] = [];
    for (const workers of [1, 3]) {
      await admin.flushall();
      rows.push(await gradeWithWorkers(simulator, redis.url, input, join(directory, `out-${workers}.jsonl`), workers));
    }
    const duplicate = await gradeWithWorkers(simulator, redis.url, input, join(directory, 'again.jsonl'), 3);
    admin.disconnect();
    const three = rows[1];
    return {
      scenario: 'fleet (BullMQ queue, 3,000 tasks, judge capacity 48 × 300 ms, --global-concurrency 48)',
      runs: rows,
      duplicate_submission_judge_calls: duplicate.judge_calls,
      three_workers_within_1_1x_ideal: three.ratio_to_ideal <= 1.1,
      cap_held: rows.every((row) => row.peak_in_service <= capacity && row.rejected_429 === 0),
      note: 'judge_busy_s = first request arrival to last answer at the simulator; producer_wall_s includes process start-up',
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
