/**
 * Every file a command writes goes through here: outputs are checked before anything is
 * opened (never over an input, never into a folder that cannot take them), then written to
 * a temporary file beside the target and renamed into place, so a reader sees the old file
 * or the whole new one, never half of one.
 */
import { accessSync, closeSync, constants, createWriteStream, existsSync, mkdirSync, openSync, realpathSync, renameSync, rmSync, statSync, writeFileSync, type Stats, type WriteStream } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { once } from 'node:events';
import { RubricateError } from '../errors.js';

/** A file a command reads, named by the flag that gave it. */
export interface NamedPath {
  flag: string;
  path: string | undefined | false;
  /** The command also takes a folder here (a benchmark's folder of files). */
  folder?: boolean;
}

function describeErrno(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file or folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOTDIR':
      return 'a part of the path is a file, not a folder';
    case 'EISDIR':
      return 'is a folder';
    case 'ENOSPC':
      return 'no space left on the device';
    default:
      return (error as Error).message;
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Checks that each input exists and is a readable regular file (or a pipe): a folder, a
 * missing file or a permission problem is INPUT_UNREADABLE (exit 2), before any work starts.
 */
export function checkInputs(inputs: readonly NamedPath[]): void {
  for (const { flag, path, folder } of inputs) {
    if (!path || path === '-') continue;
    let stats: Stats;
    try {
      stats = statSync(path);
    } catch (error) {
      throw new RubricateError('INPUT_UNREADABLE', `cannot read --${flag}: ${describeErrno(error)}`, { file: path, field: flag });
    }
    if (stats.isDirectory()) {
      if (folder) continue;
      throw new RubricateError('INPUT_UNREADABLE', `--${flag} is a folder; give a file`, { file: path, field: flag });
    }
    try {
      accessSync(path, constants.R_OK);
    } catch (error) {
      throw new RubricateError('INPUT_UNREADABLE', `cannot read --${flag}: ${describeErrno(error)}`, { file: path, field: flag });
    }
  }
}

/** True when two stats are the same file (symlinks followed, hard links included). */
function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** The path an output is really written at: an existing symlink's target, else the path itself. */
function resolvedOutputPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return resolve(path);
    }
  }
}

/** Nearest folder on the way up that exists, or the first path part that is not a folder. */
function nearestExisting(path: string): { path: string; stats: Stats } | undefined {
  let current = resolve(path);
  for (;;) {
    const stats = statOrUndefined(current);
    if (stats) return { path: current, stats };
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/**
 * Checks every output before anything is written: none may be an input (same path, a symlink
 * to it, or a hard link of it) or another output, and each must be writable (its folder can be
 * created and can take a new file). Violations are OUTPUT_CONFLICT or OUTPUT_UNWRITABLE (exit 2).
 */
export function checkOutputs(outputs: readonly NamedPath[], inputs: readonly NamedPath[]): void {
  const inputStats: Array<{ flag: string; path: string; stats: Stats | undefined; real: string }> = [];
  for (const { flag, path } of inputs) {
    if (!path || path === '-') continue;
    const stats = statOrUndefined(path);
    inputStats.push({ flag, path, stats, real: resolvedOutputPath(path) });
  }
  const seen: Array<{ flag: string; real: string }> = [];
  for (const { flag, path } of outputs) {
    if (!path || path === '-') continue;
    const real = resolvedOutputPath(path);
    const stats = statOrUndefined(path);
    for (const input of inputStats) {
      if (input.real === real || (stats && input.stats && sameFile(stats, input.stats))) {
        throw new RubricateError('OUTPUT_CONFLICT', `--${flag} is the same file as --${input.flag} (${input.path}): refusing to overwrite an input; choose another output file`, { file: path, field: flag });
      }
    }
    const clash = seen.find((other) => other.real === real);
    if (clash) throw new RubricateError('OUTPUT_CONFLICT', `--${flag} and --${clash.flag} name the same file: give each output its own file`, { file: path, field: flag });
    seen.push({ flag, real });
    checkWritable(flag, path, stats);
  }
}

function checkWritable(flag: string, path: string, stats: Stats | undefined): void {
  const unwritable = (reason: string) => new RubricateError('OUTPUT_UNWRITABLE', `cannot write --${flag}: ${reason}`, { file: path, field: flag });
  if (stats?.isDirectory()) throw unwritable('it is a folder; give a file name');
  if (stats && !stats.isFile()) {
    // A pipe or a device (/dev/stdout, a FIFO): written in place, so it only has to accept writes.
    try {
      accessSync(path, constants.W_OK);
    } catch (error) {
      throw unwritable(describeErrno(error));
    }
    return;
  }
  if (stats) {
    try {
      accessSync(path, constants.W_OK);
    } catch (error) {
      throw unwritable(describeErrno(error));
    }
  }
  const folder = dirname(resolvedOutputPath(path));
  const existing = nearestExisting(folder);
  if (!existing) throw unwritable('its folder cannot be created');
  if (!existing.stats.isDirectory()) throw unwritable(`${existing.path} is a file, not a folder`);
  if (existing.path.startsWith('/proc/') || existing.path === '/proc' || existing.path.startsWith('/sys/') || existing.path === '/sys') {
    throw unwritable(`${existing.path} is a kernel file system, not a place for files`);
  }
  // The real test: make the folder and a file in it, exactly as the write will.
  try {
    mkdirSync(folder, { recursive: true });
    const probe = temporaryPathFor(join(folder, basename(path)), 'probe');
    closeSync(openSync(probe, 'wx'));
    rmSync(probe, { force: true });
  } catch (error) {
    throw unwritable(describeErrno(error));
  }
}

/** Inputs readable, outputs safe: the one check every command runs before it opens an output. */
export function checkFiles(files: { inputs: readonly NamedPath[]; outputs: readonly NamedPath[]; /** Files outputs must not replace that need not exist yet (a cache). */ keep?: readonly NamedPath[] }): void {
  checkInputs(files.inputs);
  checkOutputs(files.outputs, [...files.inputs, ...(files.keep ?? [])]);
}

let temporaryCounter = 0;

function temporaryPathFor(target: string, tag = 'tmp'): string {
  temporaryCounter += 1;
  return join(dirname(target), `.${basename(target)}.${tag}-${process.pid}-${temporaryCounter}`);
}

/** Where to write `path` from: directly for pipes and devices, else a temporary file beside the real target. */
function planWrite(path: string): { target: string; temporary: string | undefined } {
  const stats = statOrUndefined(path);
  if (stats && !stats.isFile() && !stats.isDirectory()) return { target: path, temporary: undefined };
  const target = resolvedOutputPath(path);
  return { target, temporary: temporaryPathFor(target) };
}

function writeFailure(path: string, error: unknown): RubricateError {
  return new RubricateError('OUTPUT_UNWRITABLE', `cannot write ${path}: ${describeErrno(error)}`, { file: path });
}

/**
 * Writes JSON lines with backpressure, so a fast producer never buffers a whole run in memory.
 * Lines go to a temporary file; `close()` renames it over the output, `discard()` removes it.
 */
export class JsonLinesWriter {
  private readonly stream: WriteStream;
  private readonly target: string;
  private readonly temporary: string | undefined;
  private failure: Error | undefined;
  private settled = false;

  constructor(readonly path: string) {
    const plan = planWrite(path);
    this.target = plan.target;
    this.temporary = plan.temporary;
    try {
      mkdirSync(dirname(this.target), { recursive: true });
    } catch {
      // the open below reports the real problem
    }
    this.stream = createWriteStream(this.temporary ?? this.target, { encoding: 'utf8', flags: this.temporary ? 'wx' : 'w' });
    this.stream.on('error', (error) => {
      this.failure = error;
    });
  }

  async write(value: unknown): Promise<void> {
    if (this.failure) throw writeFailure(this.path, this.failure);
    // Lines written in one turn of the event loop go out in one writev, not one write each
    // (a results file of 10⁶ criteria is 10⁵ lines): corked here, uncorked on the next turn.
    if (this.stream.writableCorked === 0) {
      this.stream.cork();
      setImmediate(() => this.stream.uncork());
    }
    if (!this.stream.write(`${JSON.stringify(value)}\n`)) {
      // An error instead of 'drain' must end the wait too, or a dead output hangs the run.
      // The listener that loses the race is removed, or they pile up over a long run.
      const settled = new AbortController();
      try {
        await Promise.race([once(this.stream, 'drain', { signal: settled.signal }), once(this.stream, 'close', { signal: settled.signal })]);
      } finally {
        settled.abort();
      }
      if (this.failure) throw writeFailure(this.path, this.failure);
    }
  }

  private async end(): Promise<void> {
    if (!this.stream.closed) {
      this.stream.end();
      await once(this.stream, 'close');
    }
  }

  /** Finishes the file and puts it in place of the output. */
  async close(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.end();
    if (this.failure) {
      if (this.temporary) rmSync(this.temporary, { force: true });
      throw writeFailure(this.path, this.failure);
    }
    if (this.temporary) {
      try {
        renameSync(this.temporary, this.target);
      } catch (error) {
        rmSync(this.temporary, { force: true });
        throw writeFailure(this.path, error);
      }
    }
  }

  /** Drops what was written: the output keeps its previous contents (or stays absent). */
  async discard(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.end();
    if (this.temporary) rmSync(this.temporary, { force: true });
  }
}

/** Writes a whole file atomically (temp file + rename): readers never see half a file. */
export async function writeFileAtomic(path: string, contents: string): Promise<void> {
  const { target, temporary } = planWrite(path);
  try {
    mkdirSync(dirname(target), { recursive: true });
    if (!temporary) {
      writeFileSync(target, contents, 'utf8');
      return;
    }
    const { writeFile } = await import('node:fs/promises');
    await writeFile(temporary, contents, { encoding: 'utf8', flag: 'wx' });
    renameSync(temporary, target);
  } catch (error) {
    if (temporary && existsSync(temporary)) rmSync(temporary, { force: true });
    throw writeFailure(path, error);
  }
}
