/**
 * Trainer reward paths (bounded, about 4 minutes on a shared 2-core machine), against `rubricate serve` as users run it
 * and the judge simulator, without a cache so every response is graded:
 *   - verl (300 ms judge): 64 samples through each way verl calls the reward function
 *     (bench/trainers/verl_managers.py): the naive manager's sequential per-sample sync calls
 *     (with keep-alive, and with a new connection per call), the reward loop's
 *     `compute_score_async` for all samples at once, and the batch manager's single call;
 *   - OpenRLHF (1 s judge): one step of 1,024 prompts × 16 samples, every sample its own
 *     request sent at once with OpenRLHF's 5 × 1 s retries (bench/trainers/openrlhf_step.py),
 *     against the default --max-queue 4096 + --max-waiting 4096: half the step is held open
 *     past the line. Every reward is checked against the simulator's verdict.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { hangGuard } from '../src/testing/hang-guard.js';
import { childEnvironment, projectRoot, startSimulatorProcess } from './support/simulator-process.js';
import { runPythonBenchmark } from './support/python-script.js';

const judgeLatencyMs = 300;
const samples = 64;
const openRlhfStep = { prompts: 1024, samples: 16, judgeLatencyMs: 1000, concurrency: 512 };

function startServe(judgeUrl: string, extra: string[] = ['--concurrency', '256']): Promise<{ url: string; stop: () => Promise<void> }> {
  const environment = childEnvironment(existsSync(join(projectRoot, 'dist', 'cli', 'main.js')) ? { RUBRICATE_USE_BUILD: '1' } : {});
  const child = spawn(process.execPath, ['bin/rubricate.js', 'serve', '--port', '0', '--judge', 'openai:simulated-judge', '--judge-base-url', judgeUrl, '--no-cache', '--log-level', 'warn', ...extra], {
    cwd: projectRoot,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let buffered = '';
    // Waits for the address line; the bound only ends a hang (scaled with the load), and the message says what serve printed.
    const timer = setTimeout(() => reject(new Error(`serve did not start; stdout: ${JSON.stringify(buffered.slice(-2000))}, stderr: ${JSON.stringify(stderr)}`)), hangGuard(180_000));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const match = /"url":"([^"]+)"/.exec(buffered);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1],
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

function runPython(script: string, args: string[], timeoutMs = 180_000): Promise<Record<string, number>> {
  return runPythonBenchmark(join(projectRoot, 'bench', 'trainers', script), args, timeoutMs);
}

async function verlPaths(): Promise<Record<string, unknown>> {
  const simulator = await startSimulatorProcess({ fixedMs: judgeLatencyMs });
  try {
    const serve = await startServe(simulator.url);
    try {
      const figures = await runPython('verl_managers.py', [serve.url, String(samples)]);
      const round = (value: number) => Math.round(value * 100) / 100;
      return {
        scenario: `verl reward paths, ${samples} samples, ${judgeLatencyMs} ms judge, 3 criteria each`,
        naive_manager_sync_s: round(figures.naive_s),
        naive_manager_new_connection_per_call_s: round(figures.naive_fresh_connection_s),
        reward_loop_async_s: round(figures.reward_loop_s),
        batch_manager_s: round(figures.batch_s),
        ideal_sequential_s: round((samples * judgeLatencyMs) / 1000),
        speedup_reward_loop_vs_naive: round(figures.naive_s / figures.reward_loop_s),
        real_rewards: `${figures.naive_real}/${figures.reward_loop_real}/${figures.batch_real} of ${samples}`,
      };
    } finally {
      await serve.stop();
    }
  } finally {
    await simulator.stop();
  }
}

async function openRlhfLargeStep(): Promise<Record<string, unknown>> {
  const { prompts, samples: perPrompt, judgeLatencyMs: latency, concurrency } = openRlhfStep;
  const simulator = await startSimulatorProcess({ fixedMs: latency });
  try {
    const serve = await startServe(simulator.url, ['--concurrency', String(concurrency), '--expected-step-size', String(prompts * perPrompt)]);
    try {
      const figures = await runPython('openrlhf_step.py', [serve.url, String(prompts), String(perPrompt)], 600_000);
      const steps = prompts * perPrompt;
      return {
        scenario: `OpenRLHF step of ${prompts} × ${perPrompt} per-sample requests at once, ${latency} ms judge, 1 criterion, --concurrency ${concurrency}, default --max-queue 4096 + --max-waiting 4096`,
        wall_s: Math.round(figures.wall_s * 10) / 10,
        ideal_s: Math.round((steps * latency) / concurrency / 1000),
        exact_rewards: `${figures.exact} of ${steps}`,
        none_rewards: figures.none,
        tries: figures.tries,
        refused: figures.refused,
        connection_errors: figures.errors,
        float_rewards: figures.float_rewards,
      };
    } finally {
      await serve.stop();
    }
  } finally {
    await simulator.stop();
  }
}

export async function runTrainerBenchmark(): Promise<Record<string, unknown>> {
  return { verl: await verlPaths(), openrlhf_1024x16: await openRlhfLargeStep() };
}
