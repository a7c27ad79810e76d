/**
 * Run-wide setup: a file where tests note what they skipped for missing data (see
 * `src/testing/data.ts`), and one short line at the end counting them and saying how to get the
 * data, so a checkout without the data sets never looks fully tested when it is not.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataDirectory, missingDataLogVariable } from '../src/testing/data.js';
import { runIndexVariable } from '../src/results/run-index.js';

export default function setup(): () => void {
  const directory = mkdtempSync(join(tmpdir(), 'rubricate-test-run-'));
  const log = join(directory, 'missing-data.tsv');
  writeFileSync(log, '');
  process.env[missingDataLogVariable] = log;
  // Every run a test makes adds to a run history of this test run's own, never the user's.
  process.env[runIndexVariable] = join(directory, 'runs.jsonl');
  return () => {
    const lines = existsSync(log) ? [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))] : [];
    rmSync(directory, { recursive: true, force: true });
    if (lines.length === 0) return;
    const needed = [...new Set(lines.map((line) => line.split('\t')[1]))];
    // One short line; RUBRICATE_LIST_SKIPS=1 names every skipped test and the file it needs.
    if (process.env.RUBRICATE_LIST_SKIPS === '1') for (const line of lines) console.warn(`  skipped: ${line.replace('\t', ' (needs ')})`);
    console.warn(
      `\n${lines.length} groups of tests skipped: the benchmark data they read (${needed.length} files, e.g. ${needed[0]}) is not in ${dataDirectory()}; ` +
        '`npm run data:fetch` downloads it (README, "Benchmark data"); RUBRICATE_LIST_SKIPS=1 lists them',
    );
  };
}
