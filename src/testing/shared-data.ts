/**
 * The one place tests find the shared real benchmark data: `RUBRICATE_SHARED_DATA` when set,
 * else `../shared/data` beside the project. Tests that need it skip with a message when the
 * folder (or the file) is absent; the data is never copied into the repository.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

export const sharedDataRoot = resolve(process.env.RUBRICATE_SHARED_DATA ?? resolve(process.cwd(), '../shared/data'));

/** The path of a shared data file, and whether it is there (logging why a test will skip). */
export function sharedData(relative: string): { path: string; available: boolean } {
  const path = resolve(sharedDataRoot, relative);
  const available = existsSync(path);
  if (!available) console.warn(`skipping real-data parity test: ${path} not found (set RUBRICATE_SHARED_DATA to the shared data folder)`);
  return { path, available };
}
