/**
 * The runs of a folder, for `rubricate view`: every results, compare, meta-evaluation and probe
 * file under it (a few levels deep), each read once and kept while its size and modification
 * time stay the same. Files are only ever found by walking the folder: a name a browser sends is
 * looked up among them, never joined to a path. A file is checked again each time it is read,
 * not only when it was listed: every part of its path below the folder must still be a folder or
 * a regular file and no link, opened without following one, and the same file after the read
 * as before it (`readListed`). A listed run replaced by a link later is refused.
 */
import { constants } from 'node:fs';
import { lstat, open, readdir, realpath, type FileHandle } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { RubricateError } from '../../errors.js';
import { collectRun, type CollectedRun } from '../collect.js';
import { detectReportInput, type DetectedInput } from '../input.js';
import type { RunHeadline, RunIndexEntry } from '../types.js';

/** Folders below the given one that are searched (runs are usually one or two levels down). */
const maximumDepth = 4;
const maximumFiles = 2000;

interface FoundFile {
  file: string;
  path: string;
  bytes: number;
  modifiedMs: number;
}

interface CachedRun {
  bytes: number;
  modifiedMs: number;
  scoring: string | undefined;
  run: CollectedRun;
}

export interface RunFolder {
  readonly folder: string;
  /** Lists the folder again (new and changed files are read, the rest come from memory). */
  index(): Promise<{ runs: RunIndexEntry[]; skipped: Array<{ file: string; reason: string }> }>;
  /**
   * `use` run on the path of a listed file, checked as it is read (`readListed`); undefined for
   * any name that is not one, INPUT_INVALID for a listed file that is no longer a plain file of the folder.
   */
  read<T>(file: string, use: (path: string) => Promise<T>): Promise<T | undefined>;
  /** A results run, scored with `scoring` (default: the one it records); its per-tag scores kept, its texts not. */
  run(file: string, scoring?: string): Promise<CollectedRun>;
}

async function walk(folder: string): Promise<FoundFile[]> {
  const found: FoundFile[] = [];
  async function visit(directory: string, depth: number): Promise<void> {
    let entries;
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    for (const entry of entries) {
      if (found.length >= maximumFiles || entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(directory, entry.name);
      if (entry.isDirectory()) {
        if (depth < maximumDepth) await visit(path, depth + 1);
        continue;
      }
      // Links are not followed: the viewer shows what is in the folder, nothing it points at.
      if (!entry.isFile() || !/\.(jsonl|json)$/i.test(entry.name) || /\.summary\.json$/i.test(entry.name) || /\.labels\.jsonl$/i.test(entry.name)) continue;
      const info = await lstat(path);
      if (!info.isFile()) continue;
      found.push({ file: relative(folder, path).split(sep).join('/'), path, bytes: info.size, modifiedMs: info.mtimeMs });
    }
  }
  await visit(folder, 0);
  return found;
}

interface FileIdentity {
  bytes: number;
  modifiedMs: number;
  dev: number;
  ino: number;
}

function refusedFile(file: string, why: string): RubricateError {
  return new RubricateError('INPUT_INVALID', `"${file}" is no longer a file of this folder (${why}): it is not read`, { field: 'run' });
}

/** Every part of `file` below `folder` as it is now: folders, then a regular file, none a link. */
async function plainPathIdentity(folder: string, file: string): Promise<FileIdentity> {
  const parts = file.split('/');
  let current = folder;
  for (const [index, part] of parts.entries()) {
    current = join(current, part);
    let info;
    try {
      info = await lstat(current);
    } catch {
      throw refusedFile(file, 'it is gone');
    }
    if (info.isSymbolicLink()) throw refusedFile(file, `${parts.slice(0, index + 1).join('/')} is a link`);
    const last = index === parts.length - 1;
    if (last ? !info.isFile() : !info.isDirectory()) throw refusedFile(file, `${parts.slice(0, index + 1).join('/')} is not a ${last ? 'regular file' : 'folder'}`);
    if (last) return { bytes: info.size, modifiedMs: info.mtimeMs, dev: info.dev, ino: info.ino };
  }
  throw refusedFile(file, 'an empty name');
}

/**
 * Reads a listed file under the rule of the folder, at the time of reading: its path is plain
 * (`plainPathIdentity`), it resolves inside the folder, it is opened with O_NOFOLLOW and held open
 * while `use` reads it by path, and its path names the same file (device and inode) before and
 * after: a link or another file swapped in at any point is refused, whatever `use` saw.
 */
export async function readListed<T>(folder: string, file: string, use: (path: string, identity: FileIdentity) => Promise<T>): Promise<T> {
  const path = join(folder, ...file.split('/'));
  const before = await plainPathIdentity(folder, file);
  if ((await realpath(dirname(path))) !== join(await realpath(folder), ...file.split('/').slice(0, -1))) throw refusedFile(file, 'it resolves outside the folder');
  let handle: FileHandle;
  try {
    // Non-blocking: a FIFO swapped in does not hold the open.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw refusedFile(file, (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'it is a link' : 'it cannot be opened');
  }
  try {
    const opened = await handle.stat();
    const same = (identity: FileIdentity) => opened.isFile() && identity.dev === opened.dev && identity.ino === opened.ino;
    if (!same(before)) throw refusedFile(file, 'it changed as it was opened');
    const result = await use(path, before);
    if (!same(await plainPathIdentity(folder, file))) throw refusedFile(file, 'it changed while it was read');
    return result;
  } finally {
    await handle.close();
  }
}

export function headlineOf(run: CollectedRun): RunHeadline {
  const { metrics, mostFailed: _mostFailed, histogram: _histogram, invalidLines: _invalidLines, bySource: _bySource, ...rest } = run.data.summary;
  const { by_tag: _byTag, ...headlineMetrics } = metrics;
  return { ...rest, metrics: headlineMetrics };
}

type KindCache = Map<string, { bytes: number; modifiedMs: number; detected: DetectedInput | Error }>;

/** What a listed file is, read (or taken from memory while unchanged) only once it passes the check of the moment. */
async function detectListed(folder: string, found: FoundFile, kinds: KindCache): Promise<DetectedInput | Error> {
  try {
    return await readListed(folder, found.file, async (path, now) => {
      const known = kinds.get(found.path);
      if (known && known.bytes === now.bytes && known.modifiedMs === now.modifiedMs) return known.detected;
      let detected: DetectedInput | Error;
      try {
        detected = await detectReportInput(path);
      } catch (error) {
        detected = error instanceof Error ? error : new Error(String(error));
      }
      kinds.set(found.path, { bytes: now.bytes, modifiedMs: now.modifiedMs, detected });
      return detected;
    });
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** A results run of the folder, read (or taken from memory while unchanged) only once it passes the check of the moment. */
async function collectListed(folder: string, found: FoundFile, scoring: string | undefined, runs: Map<string, CachedRun>): Promise<CollectedRun> {
  return readListed(folder, found.file, async (path, now) => {
    const cacheKey = `${found.path}\u0000${scoring ?? ''}`;
    const cached = runs.get(cacheKey);
    if (cached && cached.bytes === now.bytes && cached.modifiedMs === now.modifiedMs) return cached.run;
    const run = await collectRun(path, { keepTagScores: true, ...(scoring ? { scoring } : {}) });
    // The viewer's pages carry columns only (an item opens in its run's own report): texts are not kept.
    run.texts = [];
    runs.set(cacheKey, { bytes: now.bytes, modifiedMs: now.modifiedMs, scoring, run });
    return run;
  });
}

export function openRunFolder(folder: string): RunFolder {
  const runs = new Map<string, CachedRun>();
  const kinds: KindCache = new Map();
  let listed: FoundFile[] = [];

  const detect = (found: FoundFile) => detectListed(folder, found, kinds);
  const collected = (found: FoundFile, scoring: string | undefined) => collectListed(folder, found, scoring, runs);

  async function find(file: string): Promise<FoundFile | undefined> {
    let found = listed.find((entry) => entry.file === file);
    if (!found) {
      listed = await walk(folder);
      found = listed.find((entry) => entry.file === file);
    }
    return found;
  }

  return {
    folder,
    async index() {
      listed = await walk(folder);
      const entries: RunIndexEntry[] = [];
      const skipped: Array<{ file: string; reason: string }> = [];
      for (const found of listed) {
        const detected = await detect(found);
        if (detected instanceof Error) {
          // A JSON document that is no report (a metrics file) is simply not a run; a JSON lines file that cannot be read is said.
          if (/\.jsonl$/i.test(found.file)) skipped.push({ file: found.file, reason: detected.message });
          continue;
        }
        const entry: RunIndexEntry = { file: found.file, kind: detected.kind, bytes: found.bytes, modified: new Date(found.modifiedMs).toISOString(), summary: null };
        if (detected.kind === 'results') {
          const run = await collected(found, undefined);
          const metrics = run.data.summary.metrics;
          if (metrics.n === metrics.n_invalid && metrics.n > 0) {
            skipped.push({ file: found.file, reason: `no results line (${metrics.n_invalid} unreadable lines: ${run.data.summary.invalidLines[0]?.message ?? ''})` });
            continue;
          }
          entry.summary = headlineOf(run);
        }
        entries.push(entry);
      }
      return { runs: entries, skipped };
    },
    async read(file, use) {
      const found = await find(file);
      return found ? readListed(folder, found.file, (path) => use(path)) : undefined;
    },
    async run(file, scoring) {
      const found = await find(file);
      if (!found) throw new RubricateError('INPUT_INVALID', `no run named "${file}" in ${folder}`, { field: 'run' });
      const detected = await detect(found);
      if (RubricateError.isInstance(detected)) throw detected;
      if (detected instanceof Error || detected.kind !== 'results') throw new RubricateError('INPUT_INVALID', `"${file}" is not a results file`, { file: found.path, field: 'run' });
      return collected(found, scoring);
    },
  };
}
