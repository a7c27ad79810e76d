import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

export const projectRoot = resolve(__dirname, '..');
export const cliPath = resolve(projectRoot, 'bin/rubricate.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI in a child process, as a user would. */
export function startCli(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [cliPath, ...args], {
    cwd: options.cwd ?? projectRoot,
    env: { ...cleanEnvironment(), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const done = new Promise<CliResult>((resolvePromise) => {
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

export function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  return startCli(args, options).done;
}

/** The variables that point a run at a real judge or carry a key: tests never see them. */
export const judgeEnvironmentVariables = [
  'OPENAI_BASE_URL', 'OPENAI_API_KEY', 'AZURE_OPENAI_ENDPOINT', 'AZURE_OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL',
  'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'RUBRICATE_JUDGE', 'RUBRICATE_MODEL', 'RUBRICATE_TOKEN',
];

/** The parent's environment without judge settings, so tests never reach a real endpoint. */
function cleanEnvironment(): NodeJS.ProcessEnv {
  const environment = { ...process.env };
  for (const key of judgeEnvironmentVariables) delete environment[key];
  return environment;
}

/**
 * Runs the CLI's real entry point in this process (no child process start-up): for end-to-end
 * cases where the process itself is not what is tested (signals, kill -9, exit statuses, several
 * processes at once use `startCli`). The worker's environment has no judge settings (file-setup.ts).
 */
export { runCliCaptured as runCliInProcess } from '../src/cli/in-process.js';
