/**
 * Starts the judge simulator in its own Node process (so its CPU is not billed to the grader
 * under test) and talks to it over HTTP.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RubricateError } from '../../src/errors.js';
import { hangGuard } from '../../src/testing/hang-guard.js';
import { safeParseJson } from '../../src/util/json.js';
import type { SimulatorOptions, SimulatorStats } from '../simulator/types.js';

export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const simulatorEntry = fileURLToPath(new URL('../simulator/main.ts', import.meta.url));

export interface SimulatorProcess {
  /** Base URL for OpenAI clients, ending in `/v1`. */
  url: string;
  port: number;
  pid: number;
  stats(options?: { records?: boolean }): Promise<SimulatorStats>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** The simulator's origin (its URL without `/v1`), where `/__stats` and `/__reset` live. */
export function simulatorOrigin(url: string): string {
  return url.replace(/\/v1\/?$/, '').replace(/\/+$/, '');
}

/** Reads `GET /__stats` of a running simulator. */
export async function fetchSimulatorStats(url: string, options: { records?: boolean } = {}): Promise<SimulatorStats> {
  const response = await fetch(`${simulatorOrigin(url)}/__stats${options.records ? '?records=1' : ''}`);
  if (!response.ok) throw new RubricateError('JUDGE_SERVER_ERROR', `simulator stats: HTTP ${response.status}`, { status: response.status });
  const parsed = safeParseJson(await response.text());
  if (!parsed.ok) throw new RubricateError('JUDGE_UNPARSEABLE', `simulator stats: ${parsed.error}`);
  return parsed.value as SimulatorStats;
}

/** `POST /__reset` of a running simulator. */
export async function resetSimulator(url: string): Promise<void> {
  const response = await fetch(`${simulatorOrigin(url)}/__reset`, { method: 'POST' });
  await response.arrayBuffer();
  if (!response.ok) throw new RubricateError('JUDGE_SERVER_ERROR', `simulator reset: HTTP ${response.status}`, { status: response.status });
}

/** Environment for child processes: the parent's, minus loader flags a test runner may have set. */
export function childEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete environment.NODE_OPTIONS;
  return environment;
}

export async function startSimulatorProcess(options: SimulatorOptions = {}, settings: { startTimeoutMs?: number } = {}): Promise<SimulatorProcess> {
  // `--import tsx` resolves from the working directory, hence the project root as cwd.
  const child = spawn(process.execPath, ['--import', 'tsx', simulatorEntry, JSON.stringify(options)], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnvironment(),
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  let stdout = '';
  const ready = await new Promise<{ url: string; port: number }>((resolve, reject) => {
    // It waits for the first line (or the exit); the bound only ends a hang, so it is generous and scaled with the load.
    const startTimeoutMs = settings.startTimeoutMs ?? hangGuard(120_000);
    const printed = () => (stdout === '' && stderr === '' ? 'it printed nothing' : `stdout: ${JSON.stringify(stdout.slice(-2000))}, stderr: ${JSON.stringify(stderr.trim())}`);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new RubricateError('JUDGE_UNAVAILABLE', `simulator did not start within ${startTimeoutMs} ms; ${printed()}`));
    }, startTimeoutMs);
    child.stdout.setEncoding('utf8');
    const onData = (chunk: string) => {
      stdout += chunk;
      const newline = stdout.indexOf('\n');
      if (newline === -1) return;
      child.stdout.off('data', onData);
      // Keep draining so a chatty child never blocks on a full pipe.
      child.stdout.resume();
      clearTimeout(timer);
      const parsed = safeParseJson(stdout.slice(0, newline));
      const value = parsed.ok ? (parsed.value as { url?: unknown; port?: unknown }) : undefined;
      if (!value || typeof value.url !== 'string' || typeof value.port !== 'number') {
        child.kill('SIGKILL');
        reject(new RubricateError('JUDGE_UNAVAILABLE', `simulator printed an unexpected first line: ${stdout.slice(0, newline)}`));
        return;
      }
      resolve({ url: value.url, port: value.port });
    };
    child.stdout.on('data', onData);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new RubricateError('JUDGE_UNAVAILABLE', `simulator exited (code ${code}) before it was ready; ${printed()}`));
    });
  });

  let stopped = false;
  return {
    url: ready.url,
    port: ready.port,
    pid: child.pid as number,
    stats: (statsOptions) => fetchSimulatorStats(ready.url, statsOptions),
    reset: () => resetSimulator(ready.url),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(forced);
    },
  };
}
