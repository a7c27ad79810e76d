/**
 * The runs of a folder, for `rubricate view`: every results, compare, meta-evaluation and probe
 * file under it (a few levels deep), each read once and kept while its size and modification
 * time stay the same. Files are only ever found by walking the folder: a name a browser sends is
 * looked up among them, never joined to a path.
 */
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
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
  /** The absolute path of a listed file, or undefined for any name that is not one. */
  pathOf(file: string): Promise<string | undefined>;
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
      const info = await stat(path);
      found.push({ file: relative(folder, path).split(sep).join('/'), path, bytes: info.size, modifiedMs: info.mtimeMs });
    }
  }
  await visit(folder, 0);
  return found;
}

function headlineOf(run: CollectedRun): RunHeadline {
  const { metrics, mostFailed: _mostFailed, histogram: _histogram, invalidLines: _invalidLines, bySource: _bySource, ...rest } = run.data.summary;
  const { by_tag: _byTag, ...headlineMetrics } = metrics;
  return { ...rest, metrics: headlineMetrics };
}

export function openRunFolder(folder: string): RunFolder {
  const runs = new Map<string, CachedRun>();
  const kinds = new Map<string, { bytes: number; modifiedMs: number; detected: DetectedInput | Error }>();
  let listed: FoundFile[] = [];

  async function detect(found: FoundFile): Promise<DetectedInput | Error> {
    const known = kinds.get(found.path);
    if (known && known.bytes === found.bytes && known.modifiedMs === found.modifiedMs) return known.detected;
    let detected: DetectedInput | Error;
    try {
      detected = await detectReportInput(found.path);
    } catch (error) {
      detected = error instanceof Error ? error : new Error(String(error));
    }
    kinds.set(found.path, { bytes: found.bytes, modifiedMs: found.modifiedMs, detected });
    return detected;
  }

  async function collected(found: FoundFile, scoring: string | undefined): Promise<CollectedRun> {
    const cacheKey = `${found.path}\u0000${scoring ?? ''}`;
    const cached = runs.get(cacheKey);
    if (cached && cached.bytes === found.bytes && cached.modifiedMs === found.modifiedMs) return cached.run;
    const run = await collectRun(found.path, { keepTagScores: true, ...(scoring ? { scoring } : {}) });
    // The viewer's pages carry columns only (an item opens in its run's own report): texts are not kept.
    run.texts = [];
    runs.set(cacheKey, { bytes: found.bytes, modifiedMs: found.modifiedMs, scoring, run });
    return run;
  }

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
    async pathOf(file) {
      return (await find(file))?.path;
    },
    async run(file, scoring) {
      const found = await find(file);
      if (!found) throw new RubricateError('INPUT_INVALID', `no run named "${file}" in ${folder}`, { field: 'run' });
      const detected = await detect(found);
      if (detected instanceof Error || detected.kind !== 'results') throw new RubricateError('INPUT_INVALID', `"${file}" is not a results file`, { file: found.path, field: 'run' });
      return collected(found, scoring);
    },
  };
}
