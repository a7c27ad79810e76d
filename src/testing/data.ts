/**
 * Where tests and benchmarks find the real data sets (HealthBench, IFEval, LLMBar, …): the
 * folder named by RUBRICATE_DATA_DIR, by default `../shared/data` beside the project. Data is
 * never copied into the repository; a test whose data is absent skips, and says so (the
 * suite's summary lists every such skip, see `test/global-setup.ts`).
 */
import { appendFileSync, existsSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The data folder: RUBRICATE_DATA_DIR, else `../shared/data` next to the project. */
export function dataDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  return resolve(projectRoot, environment.RUBRICATE_DATA_DIR ?? '../shared/data');
}

/** A path inside the data folder, e.g. `dataPath('healthbench/oss_eval_first100.jsonl')`. */
export function dataPath(...parts: string[]): string {
  return resolve(dataDirectory(), ...parts);
}

/** Set by the test run's global setup: the file that collects skips for missing data. */
export const missingDataLogVariable = 'RUBRICATE_MISSING_DATA_LOG';

/**
 * Whether a data file or folder is present. When it is not, records the skip (who needs
 * what) for the end-of-run summary, so missing data never passes silently.
 */
export function haveData(path: string, neededBy: string): boolean {
  if (existsSync(path)) return true;
  const log = process.env[missingDataLogVariable];
  const shown = relative(dataDirectory(), path);
  if (log) appendFileSync(log, `${neededBy}\t${shown.startsWith('..') ? path : shown}\n`);
  return false;
}
