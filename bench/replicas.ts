/**
 * Several `rubricate serve` replicas sharing one redis-server (bench/replicas.py, on the replica
 * test's fleet in clients/python/tests/fleet.py): rewards/s of a 4,096-sample step on one replica
 * against three behind Debian's nginx and three in the Python client's replica list, fresh (a 50 ms
 * fake judge) and cached; then a step with a replica killed by PID mid-step, judge calls against the
 * unique work. Every reward is checked. Skipped without nginx.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from './support/simulator-process.js';

export function runReplicaBenchmark(timeoutMs = 600_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [join(projectRoot, 'bench', 'replicas.py')], {
      cwd: projectRoot,
      env: { ...process.env, PYTHONPATH: join(projectRoot, 'clients', 'python') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Record<string, unknown>);
      } catch (error) {
        reject(new Error(`bench/replicas.py failed (${String(error)}): ${stderr}`));
      }
    });
  });
}
