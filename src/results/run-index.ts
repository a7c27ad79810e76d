/**
 * The run index: one JSONL file, per user, with a line for every run that writes a results file
 * (`grade`, `eval`, `rejudge`, `compare`, `merge`) when it starts and another when it ends, so
 * `rubricate view` with no folder can list past runs wherever their results are, and show a run
 * still in progress as live.
 *
 * Several runs append to the same file at once: each line is one `write` on a descriptor opened
 * with O_APPEND, kept under `maximumLineBytes` (fields past it are dropped, never cut mid-line),
 * so lines never interleave. A reader folds the lines by run id, the last one winning, and skips
 * a line it cannot read (an older version's, a hand edit) rather than failing.
 *
 * Where: `--run-index FILE`, else `RUBRICATE_RUN_INDEX` (`off` writes none), else the user's state
 * folder: `$XDG_STATE_HOME/rubricate/runs.jsonl` (`~/.local/state/…`), `~/Library/Application
 * Support/rubricate/runs.jsonl` on macOS, `%LOCALAPPDATA%\rubricate\runs.jsonl` on Windows.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, openSync, realpathSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { homedir, hostname, platform } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { isRecord } from '../util/is-record.js';
import { redactText } from '../util/redact.js';
import { isProcessAlive } from '../util/process-alive.js';

export const runIndexVariable = 'RUBRICATE_RUN_INDEX';
/** One line at most this long: a single O_APPEND write of it is not interleaved with another's. */
export const maximumLineBytes = 4096;
/** Bytes of the index read back at most (its end): a very old index is listed by its latest runs. */
export const maximumIndexBytes = 32 * 1024 * 1024;
const runIndexVersion = 1;

export type RunStatus = 'running' | 'finished' | 'failed' | 'interrupted';

export interface RunIndexLine {
  run_index: typeof runIndexVersion;
  /** The run's id: its start and end lines share it. */
  run: string;
  status: RunStatus;
  /** Absolute path of the results file. */
  results: string;
  command: string;
  started_at: string;
  ended_at?: string;
  /** Judge ids; `made_up` when a scripted judge (no model asked) gave verdicts. */
  judges: string[];
  /** `eval`: the model under test's id; `made_up` too when it is the scripted model. */
  models?: string[];
  made_up: boolean;
  input?: string;
  benchmark?: string;
  items?: { n: number; ok: number; error: number; invalid: number };
  /** The reason a run failed (its error's code and message, redacted). */
  error?: string;
  pid: number;
  host: string;
}

/** The index file a run writes to, or undefined when the index is switched off. */
export function runIndexPath(flag: string | undefined, environment: NodeJS.ProcessEnv = process.env): string | undefined {
  const chosen = flag ?? environment[runIndexVariable];
  if (chosen === 'off') return undefined;
  if (chosen) return resolve(chosen);
  return join(defaultStateDirectory(environment), 'runs.jsonl');
}

function defaultStateDirectory(environment: NodeJS.ProcessEnv): string {
  if (platform() === 'darwin') return join(homedir(), 'Library', 'Application Support', 'rubricate');
  if (platform() === 'win32') return join(environment.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'rubricate');
  return join(environment.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'rubricate');
}

/** Appends one line in one write; a line over the bound loses its optional fields first. */
export function appendRunIndexLine(indexPath: string, line: RunIndexLine): void {
  let text = `${JSON.stringify(line)}\n`;
  if (Buffer.byteLength(text) > maximumLineBytes) {
    const { input: _input, benchmark: _benchmark, error, ...kept } = line;
    text = `${JSON.stringify({ ...kept, ...(error ? { error: error.slice(0, 200) } : {}) })}\n`;
  }
  // A results path too long for the bound leaves no line rather than a cut one.
  if (Buffer.byteLength(text) > maximumLineBytes) return;
  mkdirSync(dirname(indexPath), { recursive: true, mode: 0o700 });
  const descriptor = openSync(indexPath, 'a', 0o600);
  try {
    writeSync(descriptor, Buffer.from(text));
  } finally {
    closeSync(descriptor);
  }
}

/** The results file's absolute path through its folder's real path (the file may not exist yet), as the viewer opens it. */
function realResultsPath(results: string): string {
  const absolute = resolve(results);
  try {
    return join(realpathSync(dirname(absolute)), basename(absolute));
  } catch {
    return absolute;
  }
}

/** A run being recorded: `end` appends its closing line (once). */
export interface RunRecording {
  readonly line: RunIndexLine;
  end(status: Exclude<RunStatus, 'running'>, details?: { items?: RunIndexLine['items']; error?: string }): void;
}

/**
 * Appends a run's start line. The index is a convenience: a line that cannot be written is said
 * through `onProblem` and the run goes on (its results are what matter).
 */
export function startRunRecording(
  indexPath: string | undefined,
  run: { results: string; command: string; judges: readonly string[]; models?: readonly string[]; input?: string; benchmark?: string },
  onProblem: (message: string) => void,
): RunRecording | undefined {
  if (!indexPath) return undefined;
  const line: RunIndexLine = {
    run_index: runIndexVersion,
    run: randomUUID(),
    status: 'running',
    results: realResultsPath(run.results),
    command: run.command,
    started_at: new Date().toISOString(),
    judges: [...run.judges],
    ...(run.models ? { models: [...run.models] } : {}),
    made_up: [...run.judges, ...(run.models ?? [])].some((id) => id.startsWith('scripted')),
    ...(run.input ? { input: resolve(run.input) } : {}),
    ...(run.benchmark ? { benchmark: run.benchmark } : {}),
    pid: process.pid,
    host: hostname(),
  };
  const append = (next: RunIndexLine) => {
    try {
      appendRunIndexLine(indexPath, next);
    } catch (error) {
      onProblem(`the run index ${indexPath} could not be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); the run goes on`);
    }
  };
  append(line);
  let ended = false;
  return {
    line,
    end(status, details = {}) {
      if (ended) return;
      ended = true;
      append({ ...line, status, ended_at: new Date().toISOString(), ...(details.items ? { items: details.items } : {}), ...(details.error ? { error: redactText(details.error) } : {}) });
    },
  };
}

/** A run as the index knows it: its last line, and whether a run said to be running is still alive. */
export interface IndexedRun extends RunIndexLine {
  /** `running` whose process is gone (killed, crashed) reads as `interrupted` with this set. */
  process_gone?: true;
}

/** The index's runs, newest first, one per run id; unreadable lines are skipped. */
export async function readRunIndex(indexPath: string): Promise<IndexedRun[]> {
  const text = await readIndexTail(indexPath);
  const byRun = new Map<string, IndexedRun>();
  for (const raw of text.split('\n')) {
    const line = parseLine(raw);
    if (line) byRun.set(line.run, line);
  }
  const host = hostname();
  const runs = [...byRun.values()].map((run): IndexedRun => (run.status === 'running' && run.host === host && !isProcessAlive(run.pid) ? { ...run, status: 'interrupted', process_gone: true } : run));
  // Newest first; runs started in the same millisecond, the one recorded later first (map order is first-line order).
  return runs.reverse().sort((left, right) => (left.started_at < right.started_at ? 1 : left.started_at > right.started_at ? -1 : 0));
}

/** The index's text, or its last `maximumIndexBytes` (the first, partial, line then fails to parse and is skipped). */
async function readIndexTail(indexPath: string): Promise<string> {
  let handle;
  try {
    handle = await open(indexPath, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, maximumIndexBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

const statuses: readonly string[] = ['running', 'finished', 'failed', 'interrupted'];

function parseLine(raw: string): RunIndexLine | undefined {
  if (raw.trim() === '' || raw.length > maximumLineBytes) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isRecord(value) || value.run_index !== runIndexVersion) return undefined;
  const { run, status, results, command, started_at: startedAt, judges, pid, host } = value;
  if (typeof run !== 'string' || typeof status !== 'string' || !statuses.includes(status) || typeof results !== 'string' || typeof command !== 'string' || typeof startedAt !== 'string') return undefined;
  if (!Array.isArray(judges) || !judges.every((judge) => typeof judge === 'string') || typeof pid !== 'number' || typeof host !== 'string') return undefined;
  return value as unknown as RunIndexLine;
}

