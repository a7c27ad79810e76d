/**
 * Runs untrusted Python under Debian's bubblewrap: every namespace unshared (no network), a new
 * session, a clean environment, read-only binds of the system folders Python needs, a private
 * size-bounded tmpfs as the only writable folder, and dies with us. Inside, the harness lowers
 * RLIMIT_AS, RLIMIT_NPROC, RLIMIT_FSIZE and RLIMIT_NOFILE before any response code runs; outside,
 * we bound the time (the whole process group is killed) and the output.
 *
 * RLIMIT_NPROC does not bind a process whose real user is root, and bubblewrap maps the sandbox's
 * user onto ours: run as root, the fork limit would not hold. So as root the sandbox is started
 * as `nobody` (65534), whose processes the limit does count.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { lstatSync, readlinkSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { RubricateError } from '../../errors.js';
import { harnessSource } from './harness.js';

export const bwrapPath = '/usr/bin/bwrap';
const pythonPath = '/usr/bin/python3';
const unprivilegedId = 65534;

export interface SandboxLimits {
  timeoutMs: number;
  memoryMb: number;
  maxOutputBytes: number;
  maxProcesses: number;
}

export interface SandboxTest {
  name: string;
  passed: boolean;
  reason?: string;
}

export interface SandboxRun {
  /** `finished`: every test ran; `time_limit` and `output_limit`: the sandbox was killed, later tests did not run. */
  ending: 'finished' | 'time_limit' | 'output_limit';
  total: number;
  tests: SandboxTest[];
}

/** The system folders Python needs, bound read-only (or re-made as the links they are on merged-/usr systems). */
function systemBinds(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const path of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else if (stat.isDirectory()) args.push('--ro-bind', path, path);
  }
  return args;
}

function bwrapArguments(limits: SandboxLimits): string[] {
  const tmpfsBytes = Math.max(limits.maxOutputBytes, 1 << 20) * 4;
  const harnessLimits = {
    memory_bytes: limits.memoryMb * 1024 * 1024,
    max_processes: limits.maxProcesses,
    max_file_bytes: Math.max(limits.maxOutputBytes, 1 << 20),
  };
  return [
    '--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL',
    '--die-with-parent', '--new-session', '--clearenv',
    '--setenv', 'PATH', '/usr/bin:/bin', '--setenv', 'HOME', '/tmp', '--setenv', 'LANG', 'C.UTF-8',
    ...systemBinds(),
    '--proc', '/proc', '--dev', '/dev', '--size', String(tmpfsBytes), '--tmpfs', '/tmp', '--chdir', '/tmp',
    '--ro-bind-data', '4', '/sandbox/harness.py', '--ro-bind-data', '5', '/sandbox/solution.py', '--ro-bind-data', '6', '/sandbox/tests.py',
    pythonPath, '-I', '-B', '/sandbox/harness.py', JSON.stringify(harnessLimits),
  ];
}

/** At most one sandbox per core at a time: a group of responses queues here, it never forks a crowd. */
const slots = { free: Math.max(1, availableParallelism()), waiting: [] as Array<() => void> };

async function withSlot<T>(work: () => Promise<T>): Promise<T> {
  if (slots.free > 0) slots.free -= 1;
  else await new Promise<void>((resolve) => slots.waiting.push(resolve));
  try {
    return await work();
  } finally {
    const next = slots.waiting.shift();
    if (next) next();
    else slots.free += 1;
  }
}

/** `bwrap`: the sandbox program (tests point it at a missing or failing one). */
export function runPythonTests(solution: string, tests: string, limits: SandboxLimits, bwrap = bwrapPath): Promise<SandboxRun> {
  return withSlot(() => runOnce(solution, tests, limits, bwrap));
}

function unavailable(reason: string): RubricateError {
  return new RubricateError('SANDBOX_UNAVAILABLE', `the code sandbox could not run: ${reason}`, { sandbox: 'bubblewrap' });
}

function startSandbox(limits: SandboxLimits, bwrap: string): ChildProcess {
  const asRoot = process.getuid?.() === 0;
  return spawn(bwrap, bwrapArguments(limits), {
    cwd: '/',
    env: {},
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
    ...(asRoot ? { uid: unprivilegedId, gid: unprivilegedId } : {}),
  });
}

function runOnce(solution: string, tests: string, limits: SandboxLimits, bwrap: string): Promise<SandboxRun> {
  return new Promise((resolve, reject) => {
    const child = startSandbox(limits, bwrap);
    const report = new ReportReader();
    let ending: SandboxRun['ending'] = 'finished';
    let outputBytes = 0;
    let diagnostics = '';
    const stop = (why: SandboxRun['ending']) => {
      if (ending === 'finished') ending = why;
      killGroup(child);
    };
    const timer = setTimeout(() => stop('time_limit'), limits.timeoutMs);
    const countOutput = (chunk: Buffer) => {
      outputBytes += chunk.length;
      if (diagnostics.length < 2000) diagnostics += chunk.toString('utf8', 0, Math.min(chunk.length, 2000));
      if (outputBytes > limits.maxOutputBytes) stop('output_limit');
    };
    (child.stdout as Readable).on('data', countOutput);
    (child.stderr as Readable).on('data', countOutput);
    (child.stdio[3] as Readable).on('data', (chunk: Buffer) => {
      if (!report.add(chunk)) stop('output_limit');
    });
    for (const [fd, text] of [[4, harnessSource], [5, solution], [6, tests]] as const) {
      const input = (child.stdio as unknown as Array<Writable | null>)[fd]!;
      input.on('error', () => undefined); // a sandbox that failed to start closes these early; the exit says why
      input.end(text);
    }
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(unavailable(error.code === 'ENOENT' ? `${bwrap} is not installed (Debian package bubblewrap)` : error.message));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      try {
        resolve(report.finish(ending, { code, signal, diagnostics }));
      } catch (error) {
        reject(error);
      }
    });
  });
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The harness's report lines (fd 3), bounded: it is our code, but it shares the sandbox with the response's. */
class ReportReader {
  private text = '';
  private readonly maxBytes = 1 << 20;

  add(chunk: Buffer): boolean {
    this.text += chunk.toString('utf8');
    return this.text.length <= this.maxBytes;
  }

  finish(ending: SandboxRun['ending'], exit: { code: number | null; signal: NodeJS.Signals | null; diagnostics: string }): SandboxRun {
    const lines = this.text.split('\n').flatMap((line) => {
      try {
        return line.length > 0 ? [JSON.parse(line) as Record<string, unknown>] : [];
      } catch {
        return []; // the line being written when the sandbox was killed
      }
    });
    const invalid = lines.find((line) => typeof line.tests_invalid === 'string');
    if (invalid) throw new RubricateError('CHECK_INVALID', `check "code-tests": parameter "tests" is not valid Python: ${String(invalid.tests_invalid)}`, { field: 'tests' });
    const started = lines.find((line) => line.started === true);
    if (!started) {
      const said = exit.diagnostics.trim().split('\n')[0] ?? '';
      throw unavailable(`it exited (${exit.signal ?? `status ${exit.code}`}) before the harness started${said ? `: ${said}` : ''}`);
    }
    const tests = lines
      .filter((line) => typeof line.test === 'string')
      .map((line) => ({ name: line.test as string, passed: line.passed === true, ...(typeof line.reason === 'string' ? { reason: line.reason } : {}) }));
    const done = lines.some((line) => line.done === true);
    if (ending === 'finished' && !done) throw unavailable(`the harness stopped (${exit.signal ?? `status ${exit.code}`}) before it finished`);
    return { ending, total: started.total as number, tests };
  }
}
