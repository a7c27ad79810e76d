/**
 * The run history in the viewer: `rubricate view` with no folder lists the runs of the run index
 * (`results/run-index.ts`) wherever their results are, and any folder's runs are labelled with
 * what the index says of them (a run still writing its results is live).
 *
 * A name a browser sends is only ever looked up among the index's results paths, never joined
 * to a path. A listed path is opened only when it is a regular file reached without a link (its
 * `lstat` is a file and its real path is itself): a missing file is listed as missing, a link or
 * anything else as not followed.
 */
import { createReadStream } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { collectRun, type CollectedRun } from '../collect.js';
import { detectReportInput } from '../input.js';
import type { RunHistoryLabel, RunIndexEntry } from '../types.js';
import { readRunIndex, type IndexedRun } from '../../results/run-index.js';
import { headlineOf, readListed, type RunFolder } from './folder.js';
import { RubricateError } from '../../errors.js';

/** A run's state for a page: what the index says, and whether it is live (still being written). */
export interface RunState {
  file: string;
  bytes: number;
  /** Complete lines of the results file so far. */
  lines: number;
  status: IndexedRun['status'] | null;
  live: boolean;
}

export interface HistoryFolder extends RunFolder {
  /** The index's view of a results file (by absolute path), or undefined when it holds none. */
  historyOf(path: string): Promise<IndexedRun | undefined>;
  /** Size, complete lines and status of a listed file, for `/api/run-state`. */
  state(file: string): Promise<RunState | undefined>;
}

const labelOf = (run: IndexedRun): RunHistoryLabel => ({
  status: run.status,
  live: run.status === 'running',
  command: run.command,
  started: run.started_at,
  ...(run.ended_at ? { ended: run.ended_at } : {}),
  judges: run.judges,
  ...(run.models ? { models: run.models } : {}),
  madeUp: run.made_up,
  ...(run.benchmark ? { benchmark: run.benchmark } : {}),
  ...(run.process_gone ? { processGone: true } : {}),
});

/** Why a listed path is not opened, or undefined when it is a plain file reached without a link. */
async function refusal(path: string): Promise<string | undefined> {
  let info;
  try {
    info = await lstat(path);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing: the results file is no longer there' : `unreadable (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if (info.isSymbolicLink()) return 'a link: not followed';
  if (!info.isFile()) return 'not a regular file: not opened';
  // A link in a folder above it is not followed either.
  if ((await realpath(path).catch(() => undefined)) !== path) return 'reached through a link: not followed';
  return undefined;
}

/** Complete lines of a file (a line being written is not counted until its newline lands). */
async function completeLines(path: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
  }
  return lines;
}

/** The latest run of each results path, newest first. */
async function latestByResults(indexPath: string): Promise<IndexedRun[]> {
  const seen = new Set<string>();
  return (await readRunIndex(indexPath)).filter((run) => (seen.has(run.results) ? false : (seen.add(run.results), true)));
}

/** Runs the history lists at most (the newest): each is read for its headline. */
export const maximumHistoryRuns = 500;

/** The runs of the run index as a folder the viewer serves: each listed by its absolute results path, the newest `maximumRuns`. */
export function openRunHistory(indexPath: string, { maximumRuns = maximumHistoryRuns }: { maximumRuns?: number } = {}): HistoryFolder {
  const cache = new Map<string, { bytes: number; modifiedMs: number; run: CollectedRun }>();
  let listed = new Map<string, IndexedRun>();

  async function collected(path: string, scoring?: string): Promise<CollectedRun> {
    const info = await lstat(path);
    const key = `${path}\u0000${scoring ?? ''}`;
    const known = cache.get(key);
    if (known && known.bytes === info.size && known.modifiedMs === info.mtimeMs) return known.run;
    const run = await collectRun(path, { keepTagScores: true, ...(scoring ? { scoring } : {}) });
    run.texts = [];
    cache.set(key, { bytes: info.size, modifiedMs: info.mtimeMs, run });
    return run;
  }

  async function openable(file: string): Promise<string | undefined> {
    if (!listed.has(file)) listed = new Map((await latestByResults(indexPath)).slice(0, maximumRuns).map((run) => [run.results, run]));
    return listed.has(file) && (await refusal(file)) === undefined ? file : undefined;
  }

  return {
    folder: indexPath,
    async index() {
      const all = await latestByResults(indexPath);
      const runs = all.slice(0, maximumRuns);
      listed = new Map(runs.map((run) => [run.results, run]));
      const entries: RunIndexEntry[] = [];
      const skipped: Array<{ file: string; reason: string }> = [];
      if (all.length > runs.length) skipped.push({ file: indexPath, reason: `${all.length - runs.length} older runs not listed (the newest ${maximumRuns} are)` });
      for (const run of runs) {
        const why = await refusal(run.results);
        if (why) {
          skipped.push({ file: run.results, reason: `${why} (${run.command} ${run.status}, started ${run.started_at})` });
          continue;
        }
        const info = await lstat(run.results);
        const entry: RunIndexEntry = { file: run.results, kind: 'results', bytes: info.size, modified: info.mtime.toISOString(), summary: null, history: labelOf(run) };
        try {
          if ((await detectReportInput(run.results)).kind !== 'results') throw new RubricateError('INPUT_INVALID', 'not a results file');
          entry.summary = headlineOf(await collected(run.results));
        } catch (error) {
          skipped.push({ file: run.results, reason: run.status === 'running' ? 'live: no result written yet' : (error as Error).message });
          continue;
        }
        entries.push(entry);
      }
      return { runs: entries, skipped };
    },
    async read(file, use) {
      const path = await openable(file);
      // Listed by absolute path: the file itself is checked as it is read (no link, the same file throughout).
      return path ? readListed(dirname(path), basename(path), (opened) => use(opened)) : undefined;
    },
    async run(file, scoring) {
      const path = await openable(file);
      if (!path) throw new RubricateError('INPUT_INVALID', `no run "${file}" in the run history`, { field: 'run' });
      return collected(path, scoring);
    },
    async historyOf(path) {
      return (await latestByResults(indexPath)).find((run) => run.results === path);
    },
    async state(file) {
      const path = await openable(file);
      // The run's latest line, read now: a run that has just ended is no longer live.
      return path ? stateOf(file, path, (await latestByResults(indexPath)).find((run) => run.results === path)) : undefined;
    },
  };
}

async function stateOf(file: string, path: string, run: IndexedRun | undefined): Promise<RunState> {
  const info = await lstat(path);
  return { file, bytes: info.size, lines: await completeLines(path), status: run?.status ?? null, live: run?.status === 'running' };
}

/**
 * A folder's runs labelled from the run index: each entry the index knows gets its history, and
 * `historyOf` tells the pages which run is live. The folder's own rules for what it opens stay.
 */
export function withRunHistory(folder: RunFolder, indexPath: string | undefined): HistoryFolder {
  const historyOf = async (path: string) => (indexPath ? (await latestByResults(indexPath)).find((run) => run.results === resolve(path)) : undefined);
  return {
    ...folder,
    folder: folder.folder,
    async index() {
      const listing = await folder.index();
      const runs = indexPath ? await latestByResults(indexPath) : [];
      const byPath = new Map(runs.map((run) => [run.results, run]));
      for (const entry of listing.runs) {
        const path = await folder.read(entry.file, async (opened) => opened);
        const run = path ? byPath.get(resolve(path)) : undefined;
        if (run) entry.history = labelOf(run);
      }
      return listing;
    },
    historyOf,
    async state(file) {
      return folder.read(file, async (path) => stateOf(file, path, await historyOf(path)));
    },
  };
}
