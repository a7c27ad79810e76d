/**
 * A bench scenario written in Python (it drives the Python client as a trainer would): run with
 * the checkout's client on PYTHONPATH, its last stdout line read as the JSON figures it reports.
 */
import { spawn } from 'node:child_process';
import { join, relative } from 'node:path';
import { projectRoot } from './simulator-process.js';

export function runPythonBenchmark<T>(script: string, args: readonly string[] = [], timeoutMs = 180_000): Promise<T> {
  const name = relative(projectRoot, script);
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [script, ...args], {
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
        resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as T);
      } catch (error) {
        reject(new Error(`${name} failed (${String(error)}): ${stderr}`));
      }
    });
  });
}
