/**
 * A Node child process of this checkout (`rubricate serve`, a loopback judge, a load
 * generator) whose stdout is JSON lines: each line parsed as it arrives, and a wait for the
 * first line that matches. Used by the `startServe` fixture and the benchmarks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { safeParseJson } from '../util/json.js';
import { hangGuard } from './hang-guard.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

/** The parent's environment without the test runner's loader flags and without a server token. */
function childEnvironment(): NodeJS.ProcessEnv {
  const environment = { ...process.env };
  delete environment.NODE_OPTIONS;
  delete environment.RUBRICATE_TOKEN;
  return environment;
}

export interface Child {
  process: ChildProcess;
  /** The JSON lines it printed on stdout so far. */
  lines: Array<Record<string, unknown>>;
  /** The first line `predicate` accepts; rejects if the child exits without one, or after `timeoutMs`. */
  nextLine(predicate: (line: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
  /** The last 8,000 characters it wrote on stderr. */
  stderr(): string;
}

/** Starts `node ARGS…` in the project root. */
export function startChild(args: string[]): Child {
  const child = spawn(process.execPath, args, { cwd: projectRoot, env: childEnvironment(), stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Array<Record<string, unknown>> = [];
  const listeners = new Set<() => void>();
  let stderr = '';
  /** What it printed on stdout, JSON or not, for the message when an expected line never comes. */
  let stdoutTail = '';
  let buffered = '';
  let exitCode: number | null | undefined;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    stdoutTail = (stdoutTail + chunk).slice(-4000);
    for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
      const parsed = safeParseJson(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      if (parsed.ok && parsed.value && typeof parsed.value === 'object') lines.push(parsed.value as Record<string, unknown>);
    }
    for (const listener of listeners) listener();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-8000);
  });
  // 'close', not 'exit': stdout has been read to its end, so a last line is never missed.
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      exitCode = code;
      for (const listener of listeners) listener();
      resolve(code);
    }),
  );
  const printed = () =>
    stdoutTail === '' && stderr === '' ? 'it printed nothing' : `it printed on stdout: ${JSON.stringify(stdoutTail.slice(-2000))}, on stderr: ${JSON.stringify(stderr.slice(-2000))}`;
  return {
    process: child,
    lines,
    exited,
    stderr: () => stderr,
    nextLine(predicate, timeoutMs) {
      return new Promise((resolve, reject) => {
        const done = () => {
          listeners.delete(check);
          clearTimeout(timer);
        };
        const check = () => {
          const found = lines.find(predicate);
          if (found) {
            done();
            resolve(found);
          } else if (exitCode !== undefined) {
            done();
            reject(new Error(`child ${args.join(' ')} exited with ${exitCode} before the expected line; ${printed()}`));
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`child ${args.join(' ')} gave no expected line within ${timeoutMs} ms (still running: a hang, or a machine too loaded for this guard); ${printed()}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
}

/** Stops a child: SIGTERM, then SIGKILL if it has not exited within 30 s (more on a loaded machine). */
export async function stopChild(child: Child): Promise<number | null> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return child.process.exitCode;
  child.process.kill('SIGTERM');
  const forced = setTimeout(() => child.process.kill('SIGKILL'), hangGuard(30_000));
  const code = await child.exited;
  clearTimeout(forced);
  return code;
}
