/**
 * Real benchmark data for tests, by path relative to the data folder (RUBRICATE_DATA_DIR,
 * see `data.ts`; RUBRICATE_SHARED_DATA is still read as an older name for it). A missing file
 * is recorded for the run's summary of data-skipped tests.
 */
import { resolve } from 'node:path';
import { dataDirectory, haveData } from './data.js';

export const sharedDataRoot = resolve(process.env.RUBRICATE_SHARED_DATA ?? dataDirectory());

/** The path of a shared data file, and whether it is there. */
export function sharedData(relative: string, neededBy = 'a real-data parity test'): { path: string; available: boolean } {
  const path = resolve(sharedDataRoot, relative);
  return { path, available: haveData(path, neededBy) };
}
