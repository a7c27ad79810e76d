/**
 * Run-wide setup: a file where tests note what they skipped for missing data (see
 * `src/testing/data.ts`), and one summary line at the end naming each such test, so a
 * checkout without the data sets never looks fully tested when it is not.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataDirectory, missingDataLogVariable } from '../src/testing/data.js';

export default function setup(): () => void {
  const directory = mkdtempSync(join(tmpdir(), 'rubricate-test-run-'));
  const log = join(directory, 'missing-data.tsv');
  writeFileSync(log, '');
  process.env[missingDataLogVariable] = log;
  return () => {
    const lines = existsSync(log) ? [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))] : [];
    rmSync(directory, { recursive: true, force: true });
    if (lines.length === 0) return;
    const skipped = lines.map((line) => {
      const [neededBy, path] = line.split('\t');
      return `${neededBy} (needs ${path})`;
    });
    console.warn(`\nskipped for missing data in ${dataDirectory()} (set RUBRICATE_DATA_DIR): ${skipped.length} — ${skipped.join('; ')}`);
  };
}
