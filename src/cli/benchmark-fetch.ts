/**
 * `--fetch-data`: a benchmark pack's missing data file is downloaded and checked by the fetcher
 * `npm run data:fetch` runs (scripts/fetch_data.py, shipped in the package): taken from the commit
 * its authors published, checked against its git blob id and the sha256 the pack expects, its size
 * bounded by the manifest, and written atomically into the data folder. Nothing is downloaded
 * without the flag; a file outside the fetcher's list is never fetched.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RubricateError } from '../errors.js';
import type { ResolvedBenchmark } from '../pipeline/benchmark-packs.js';

/** The fetcher beside the package, found by walking up from this module (sources and bundle alike). */
function fetcherScript(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(directory, 'scripts', 'fetch_data.py');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(directory);
    if (parent === directory) throw new RubricateError('INTERNAL', 'the data fetcher (scripts/fetch_data.py) is not next to the package');
    directory = parent;
  }
}

/**
 * Fetches the pack's first fetchable data file into its data folder, saying what it fetches line by line.
 * `RUBRICATE_DATA_BASE_URL` names a mirror laid out as /REPO/COMMIT/PATH (the checks still apply).
 */
export async function fetchBenchmarkData(resolved: ResolvedBenchmark, say: (line: string) => void, environment: NodeJS.ProcessEnv = process.env): Promise<void> {
  const fetchable = resolved.candidates.find((file) => file.fetch === true);
  if (fetchable === undefined) {
    const where = resolved.candidates.map((file) => (file.fetch === true ? file.path : file.fetch.from)).join(' or ');
    throw new RubricateError('INPUT_UNREADABLE', `benchmark ${resolved.label}: --fetch-data cannot fetch its data file, which is not in the fetcher's list: get ${where}, and save it as ${join(resolved.dataDirectory, resolved.candidates[0].path)}`, { field: 'benchmark' });
  }
  const base = environment.RUBRICATE_DATA_BASE_URL;
  const args = [fetcherScript(), '--data-dir', resolved.dataDirectory, '--only', fetchable.path, ...(base ? ['--base-url', base] : [])];
  const child = await runFetcher(args, say, environment);
  if (child.error) {
    const reason = (child.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'python3 is not installed (the fetcher is a standard-library Python script)' : child.error.message;
    throw new RubricateError('INPUT_UNREADABLE', `benchmark ${resolved.label}: could not fetch ${fetchable.path}: ${reason}`, { field: 'benchmark' });
  }
  if (child.status !== 0) {
    throw new RubricateError('INPUT_UNREADABLE', `benchmark ${resolved.label}: fetching ${fetchable.path} into ${resolved.dataDirectory} failed (the fetcher's lines above say why); nothing was graded`, { field: 'benchmark' });
  }
}

/** Runs the fetcher without blocking this process (a library caller may serve the files itself), each of its lines said as it comes. */
function runFetcher(args: string[], say: (line: string) => void, environment: NodeJS.ProcessEnv): Promise<{ status: number | null; error?: Error }> {
  return new Promise((resolve) => {
    const child = spawn('python3', args, { stdio: ['ignore', 'pipe', 'pipe'], env: environment });
    createInterface({ input: child.stdout }).on('line', say);
    createInterface({ input: child.stderr }).on('line', say);
    child.once('error', (error) => resolve({ status: null, error }));
    child.once('close', (status) => resolve({ status }));
  });
}
